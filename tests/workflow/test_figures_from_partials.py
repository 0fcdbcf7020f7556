"""The run's figures from partials of partitions equal the figures of the whole study.

Issue 28, item 2: ``figure_data_from_partial`` of the combined partials returns the
``FigureData`` of ``figure_data`` on the whole study (same tables, columns, dtypes and
row order; counts exact; values to 1e-12 relative), so ``write_figure_tables`` and
``draw_figures`` take it unchanged.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.analysis.curve_partials import combine_figure_partials
from sessionval.errors import InputFormatError, MeasureSpecError
from sessionval.evaluation.config import SessionConfig
from sessionval.output import plots
from sessionval.validate.flat import frame_from_flat
from sessionval.workflow import RunOutputs, run_settings
from sessionval.workflow.figures import (
    FigureCell,
    FigureData,
    draw_figures,
    figure_cell,
    figure_cell_from_partial,
    figure_data,
    figure_data_from_partial,
    figure_partial_of,
    write_figure_tables,
)
from sessionval.workflow.settings import FigureSettings
from tests import builders
from tests.figure_partitions import Study, random_split, synthetic_study

FIGURES = FigureSettings(ranks=12, min_queries=3, max_sessions=3)


def assert_same_figures(local: FigureData, other: FigureData) -> None:
    """The same tables (1e-12 relative on values, exact elsewhere) and the same notes."""
    assert list(local.tables) == list(other.tables)
    for name, table in local.tables.items():
        pd.testing.assert_frame_equal(
            table, other.tables[name], check_exact=False, rtol=1e-12, atol=0
        )
    assert (local.cell, local.n_cell, local.n_shown, local.ranks) == (
        other.cell,
        other.n_cell,
        other.n_shown,
        other.ranks,
    )
    assert local.skipped == other.skipped and local.confidence == other.confidence


CONFIGS = {
    "default": (SessionConfig(), None),
    "of-averages-active": (SessionConfig(normalise="of-averages", stopped="active"), None),
    "condense-own-cg-gains": (
        SessionConfig(unjudged="condense", b=4, discount="jk2002"),
        SessionConfig(unjudged="condense", b=4, discount="jk2002", gains="0-1-2-3"),
    ),
}


@pytest.mark.parametrize("confidence", [None, 0.9])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_figures_from_partials_equal_the_whole_studys(name, confidence):
    config, cg_config = CONFIGS[name]
    study = synthetic_study()
    ev = study.evaluate(config)
    cg_ev = study.evaluate(cg_config) if cg_config is not None else None
    cell = figure_cell(study.loaded, FIGURES)
    local = figure_data(ev, cell, FIGURES, cg_ev=cg_ev, confidence=confidence)
    split = random_split(study.loaded.frame.n_sessions, 3, seed=1)
    cg_parts = study.evaluate_parts(split, cg_config) if cg_config is not None else None
    partials = [
        figure_partial_of(
            part,
            FIGURES,
            cg_ev=cg_parts[i] if cg_parts is not None else None,
            bands=confidence is not None,
        )
        for i, part in enumerate(study.evaluate_parts(split, config))
    ]
    combined = combine_figure_partials(*partials)
    assert figure_cell_from_partial(combined, FIGURES) == cell
    distributed = figure_data_from_partial(combined, cell, FIGURES, confidence=confidence)
    assert_same_figures(local, distributed)
    assert "fig4_individual_sessions" in local.tables and local.n_shown < local.n_cell


@settings(deadline=None, max_examples=6)
@given(
    n_parts=st.integers(1, 4),
    seed=st.integers(0, 2**16),
    order=st.permutations(range(4)),
)
def test_figures_do_not_depend_on_the_split_or_the_order_of_combining(n_parts, seed, order):
    config = SessionConfig()
    study = synthetic_study()
    ev = study.evaluate(config)
    cell = figure_cell(study.loaded, FIGURES)
    local = figure_data(ev, cell, FIGURES, confidence=0.95)
    split = random_split(study.loaded.frame.n_sessions, n_parts, seed)
    partials = [
        figure_partial_of(p, FIGURES, bands=True) for p in study.evaluate_parts(split, config)
    ]
    shuffled = [partials[i] for i in order if i < len(partials)]
    # combined in another order and grouping: ((a, b), c, …) against (a, (b, c, …))
    left = combine_figure_partials(combine_figure_partials(*shuffled[:2]), *shuffled[2:])
    right = shuffled[0]
    if len(shuffled) > 1:
        right = combine_figure_partials(shuffled[0], combine_figure_partials(*shuffled[1:]))
    for combined in (left, right):
        assert_same_figures(
            local, figure_data_from_partial(combined, cell, FIGURES, confidence=0.95)
        )


@pytest.mark.parametrize(
    "figures",
    [
        FigureSettings(min_queries=3),
        FigureSettings(system="S2", min_queries=5),
        FigureSettings(scenario="B"),
        FigureSettings(scenario="A", system="S1"),
    ],
    ids=["default", "system", "scenario", "both"],
)
def test_the_cell_from_partials_is_figure_cells(figures):
    study = synthetic_study()
    split = random_split(study.loaded.frame.n_sessions, 2, seed=4)
    partials = [figure_partial_of(p, figures) for p in study.evaluate_parts(split, SessionConfig())]
    combined = combine_figure_partials(*partials)
    assert figure_cell_from_partial(combined, figures) == figure_cell(study.loaded, figures)


def test_the_cell_from_partials_checks_the_study():
    study = synthetic_study()
    split = random_split(study.loaded.frame.n_sessions, 2, seed=4)
    partial = combine_figure_partials(
        *(figure_partial_of(p, FIGURES) for p in study.evaluate_parts(split, SessionConfig()))
    )
    for bad in (FigureSettings(scenario="Z"), FigureSettings(system="S9")):
        with pytest.raises(InputFormatError) as local:
            figure_cell(study.loaded, bad)
        with pytest.raises(InputFormatError) as distributed:
            figure_cell_from_partial(partial, bad)
        assert str(local.value) == str(distributed.value)


def test_an_empty_cell_skips_figure_4_in_both():
    whole = synthetic_study()
    flat = whole.flat
    # the sessions of one (topic, system) cell left out: both are in the study, not together
    empty = (str(flat["topic_id"].iloc[0]), str(flat["system_id"].iloc[0]))
    gone = (flat["topic_id"].astype(str) == empty[0]) & (flat["system_id"].astype(str) == empty[1])
    rest = flat[~gone].reset_index(drop=True)
    study = Study(flat=rest, judgments=whole.judgments, loaded=frame_from_flat(rest))
    figures = FigureSettings(scenario=empty[0], system=empty[1], ranks=8)
    config = SessionConfig()
    cell = figure_cell(study.loaded, figures)
    split = random_split(study.loaded.frame.n_sessions, 2, seed=9)
    partial = combine_figure_partials(
        *(figure_partial_of(p, figures) for p in study.evaluate_parts(split, config))
    )
    local = figure_data(study.evaluate(config), cell, figures)
    distributed = figure_data_from_partial(partial, cell, figures)
    assert "fig4_individual_sessions" in local.skipped
    assert_same_figures(local, distributed)


def test_the_figure_tables_written_are_the_same_files(tmp_path):
    study = synthetic_study()
    config = SessionConfig()
    cell = figure_cell(study.loaded, FIGURES)
    split = random_split(study.loaded.frame.n_sessions, 3, seed=2)
    partial = combine_figure_partials(
        *(figure_partial_of(p, FIGURES) for p in study.evaluate_parts(split, config))
    )
    written = {}
    for name, data in (
        ("local", figure_data(study.evaluate(config), cell, FIGURES)),
        ("distributed", figure_data_from_partial(partial, cell, FIGURES)),
    ):
        outputs = RunOutputs(tmp_path / name)
        write_figure_tables(outputs, data)
        outputs.finish()
        written[name] = {
            p.name: p.read_bytes() for p in sorted((tmp_path / name / "figures").glob("*.csv"))
        }
    assert written["local"].keys() == written["distributed"].keys()
    assert len(written["local"]) == 9
    for csv_name, local_bytes in written["local"].items():
        local_csv = pd.read_csv(pd.io.common.BytesIO(local_bytes))
        other_csv = pd.read_csv(pd.io.common.BytesIO(written["distributed"][csv_name]))
        pd.testing.assert_frame_equal(local_csv, other_csv, check_exact=False, rtol=1e-12)


def test_the_partials_must_match_the_figure_settings():
    study = synthetic_study()
    ev = study.evaluate(SessionConfig())
    partial = figure_partial_of(ev, FIGURES)
    cell = figure_cell(study.loaded, FIGURES)
    with pytest.raises(MeasureSpecError, match="max_sessions"):
        figure_data_from_partial(partial, cell, FigureSettings(ranks=12, min_queries=3))
    with pytest.raises(MeasureSpecError, match="squares"):
        figure_data_from_partial(partial, cell, FIGURES, confidence=0.95)
    # one partition's partial is the whole study's figures
    assert_same_figures(
        figure_data(ev, cell, FIGURES), figure_data_from_partial(partial, cell, FIGURES)
    )
    assert np.isfinite(partial.sessions.sums["s"]).all()


#: Sessions of every kind: no judgments (topic B), an empty list, ids whose text order is
#: not their id order.
EDGE = [
    ("s1", "u1", "A", "S1", [["d1", "d2"], ["d3"]]),
    ("s2", "u2", "A", "S2", [["d2"], [], ["d1", "d4"]]),
    ("s3", "u1", "B", "S1", [["d5"]]),
    ("s4", "u3", "A", "S1", [[]]),
    ("s5", "u2", "B", "S2", [["d5", "d1"], ["d9"]]),
    ("s10", "u3", "A", "S2", [["d1"], ["d2"], ["d3"], ["d4"]]),
    ("s11", "u1", "A", "S1", [["d4"], ["d1"]]),
]


@pytest.mark.parametrize("numeric", [False, True], ids=["text-ids", "numeric-ids"])
@pytest.mark.parametrize(
    "config",
    [SessionConfig(), SessionConfig(normalise="of-averages", empty_ideal="zero")],
    ids=["default", "of-averages-zero"],
)
def test_sessions_without_judgments_or_results_in_any_partition(config, numeric):
    specs = [(s[1:] if numeric else s, *rest) for s, *rest in EDGE]
    flat = builders.flat_table(specs)
    judgments = builders.judgments([("A", "d1", 3), ("A", "d2", 1), ("A", "d3", 0), ("A", "d4", 2)])
    study = Study(flat=flat, judgments=judgments, loaded=frame_from_flat(flat))
    figures = FigureSettings(ranks=5, min_queries=2, max_sessions=2)
    cell = figure_cell(study.loaded, figures)
    local = figure_data(study.evaluate(config), cell, figures, confidence=0.9)
    assert local.n_shown < local.n_cell
    # one partition of the session without judgments alone, one of the empty list alone
    for split in ([0, 1, 0, 1, 0, 1, 0], [0, 0, 1, 0, 0, 0, 0], [2, 1, 0, 3, 1, 0, 2]):
        partials = [
            figure_partial_of(ev, figures, bands=True) for ev in study.evaluate_parts(split, config)
        ]
        combined = combine_figure_partials(*partials)
        distributed = figure_data_from_partial(combined, cell, figures, confidence=0.9)
        assert_same_figures(local, distributed)


def test_a_cell_without_sessions_gives_the_same_empty_tables_and_notes():
    study = synthetic_study()
    figures = FigureSettings(ranks=8)
    cell = FigureCell(scenario="Z", system="S1")  # built by hand: no session at all
    local = figure_data(study.evaluate(SessionConfig()), cell, figures)
    split = random_split(study.loaded.frame.n_sessions, 2, seed=0)
    combined = combine_figure_partials(
        *(figure_partial_of(ev, figures) for ev in study.evaluate_parts(split, SessionConfig()))
    )
    distributed = figure_data_from_partial(combined, cell, figures)
    assert set(local.skipped) == {"fig3_scenario_sdcg", "fig4_individual_sessions"}
    assert_same_figures(local, distributed)


def test_draw_figures_takes_the_figures_from_partials(tmp_path):
    matplotlib.use("Agg")
    overrides = {"figures": {"formats": ["png"], "ranks": 10, "max_sessions": 3}}
    settings = run_settings(None, lenient=None, has_qrels=True, overrides=overrides)
    study = synthetic_study()
    cell = figure_cell(study.loaded, settings.figures)
    split = random_split(study.loaded.frame.n_sessions, 3, seed=0)
    combined = combine_figure_partials(
        *(
            figure_partial_of(ev, settings.figures, bands=True)
            for ev in study.evaluate_parts(split, settings.config)
        )
    )
    data = figure_data_from_partial(combined, cell, settings.figures, confidence=0.95)
    outputs = RunOutputs(tmp_path)
    drawn = draw_figures(outputs, data, settings)
    assert len(drawn) == len(data.tables) == 9 and not data.skipped
    assert "the first 3 of" in next(f.caption for f in drawn if "Individual" in f.title)
    assert sorted(n for n in outputs.written if n.endswith(".png")) == sorted(
        f"figures/{name}.png" for name in data.tables
    )


@pytest.mark.parametrize("formats", [["png", "svg"], ["svg"]])
def test_the_reports_png_is_half_the_file_or_drawn_at_150_dpi(tmp_path, formats):
    """The report's PNG: the 300-dpi file reduced by 2, or drawn at 150 dpi without a file."""
    import io

    from PIL import Image

    matplotlib.use("Agg")
    overrides = {"figures": {"formats": formats, "ranks": 10, "max_sessions": 3}}
    settings = run_settings(None, lenient=None, has_qrels=True, overrides=overrides)
    study = synthetic_study()
    cell = figure_cell(study.loaded, settings.figures)
    ev = study.evaluate(settings.config)
    data = figure_data(ev, cell, settings.figures)
    outputs = RunOutputs(tmp_path)
    drawn = draw_figures(outputs, data, settings)
    first = drawn[0]
    with Image.open(io.BytesIO(first.png)) as shown:
        if "png" in formats:
            with Image.open(outputs.path(f"figures/{next(iter(data.tables))}.png")) as file:
                assert (2 * shown.size[0], 2 * shown.size[1]) == file.size
            written = outputs.path(f"figures/{next(iter(data.tables))}.png").read_bytes()
            assert first.png == plots.reduced_png(written, 2)  # not drawn a fifth time
        else:
            assert not any(n.endswith(".png") for n in outputs.written)
        # 3.5 inches wide at 150 dpi either way
        assert shown.size[0] == pytest.approx(3.5 * 150, abs=2)
    assert first.svg is not None
