"""The ``[measures]`` table and the correlation step: chosen measures in tables, exports, report."""

from __future__ import annotations

import dataclasses
import json
import tomllib

import matplotlib

matplotlib.use("Agg")
import pandas as pd
import pytest

from sessionval.errors import InputFormatError, MeasureSpecError
from sessionval.output import plots
from sessionval.output.columns import describe_column
from sessionval.workflow import (
    MeasureSelection,
    MeasureSettings,
    RunOutputs,
    correlation_step,
    load_run_config,
    measure_settings,
    run,
    run_settings,
)
from tests import builders


def _config(tmp_path, text: str):
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_measures_table_is_parsed_to_canonical_names(tmp_path):
    s = run_settings(
        _config(
            tmp_path,
            '[measures]\nsession = ["esNDCG(pref=0.9)@9", "mean( nDCG@10 )", "esNDCG@9"]\n'
            'query = ["AP"]\n',
        ),
        lenient=None,
        has_qrels=True,
    )
    assert s.measures == MeasureSettings(session=("esNDCG@9", "mean(nDCG@10)"), query=("AP",))
    assert s.measures.all == ("esNDCG@9", "mean(nDCG@10)", "AP")
    assert run_settings(None, lenient=None, has_qrels=True).measures == MeasureSettings()


@pytest.mark.parametrize(
    ("text", "error", "fragment"),
    [
        ("[measures]\nextra = []\n", InputFormatError, "unknown key(s) ['extra']"),
        ('[measures]\nsession = "sDCG"\n', InputFormatError, "must be a list"),
        ('[measures]\nsession = ["nDCG@10"]\n', MeasureSpecError, "list it under [measures] query"),
        ('[measures]\nquery = ["sRBP"]\n', MeasureSpecError, "list it under [measures] session"),
        ('[measures]\nsession = ["sDGC"]\n', MeasureSpecError, "unknown measure 'sDGC'"),
        ("measures = 3\n", InputFormatError, "[measures]: must be a table"),
    ],
)
def test_bad_measures_tables_fail_before_any_output(tmp_path, text, error, fragment):
    with pytest.raises(error) as info:
        run_settings(_config(tmp_path, text), lenient=None, has_qrels=True)
    assert fragment in str(info.value)


def test_a_preset_brings_its_measures_unless_the_table_says_otherwise():
    none, empty = MeasureSelection(), MeasureSelection(session=())
    assert measure_settings(none, preset="trec-session-2011").session == (
        "last(nDCG(gain=exp)@10)",
    )
    assert measure_settings(empty, preset="trec-session-2011").session == ()
    assert measure_settings(none, preset="jarvelin-2008").session == ()


def test_load_run_config_keeps_the_table_apart():
    rc = load_run_config(None)
    assert rc.measures == MeasureSelection()


def _study_with_ratings(root):
    root.mkdir()
    sessions = [
        builders.make_session(
            f"s{i}",
            user=f"u{i % 3}",
            topic="A",
            system="S1" if i % 2 else "S2",
            queries=[["d1", "d2"], ["d3"]][: 1 + i % 2],
            ratings={"satisfaction": float(1 + i % 5), "difficulty": float(5 - i % 4)},
        )
        for i in range(8)
    ]
    builders.write_jsonl(root / "sessions.jsonl", sessions)
    (root / "qrels.txt").write_text("A 0 d1 3\nA 0 d2 0\nA 0 d3 1\n")
    return root


def test_run_puts_the_chosen_measures_everywhere(tmp_path):
    study = _study_with_ratings(tmp_path / "study")
    conf = _config(
        tmp_path,
        'preset = "jiang-allan-2016"\n[measures]\nsession = ["esNDCG@9", "mean(nDCG_AE@9)"]\n'
        'query = ["nDCG_AE@9"]\n[run]\nformats = ["csv"]\n',
    )
    out = tmp_path / "out"
    run(study, qrels=study / "qrels.txt", out=out, config_path=conf, progress=False)
    ps = pd.read_csv(out / "tables" / "per_session.csv")
    assert {"esNDCG@9", "mean(nDCG_AE@9)"} <= set(ps.columns)
    assert "nDCG_AE@9" in pd.read_csv(out / "tables" / "per_query.csv").columns
    # correlations of sDCG's summaries and the chosen measures with both ratings
    corr = pd.read_csv(out / "tables" / "rating_correlations.csv")
    assert set(corr["rating"]) == {"rating_satisfaction", "rating_difficulty"}
    assert {"nsdcg", "esNDCG@9", "mean(nDCG_AE@9)"} <= set(corr["measure"])
    assert (out / "figures" / "rating_correlations.png").read_bytes().startswith(b"\x89PNG")
    html = (out / "report.html").read_text()
    assert "Measures against the searchers&#39; ratings" in html or "searchers' ratings" in html
    assert "esNDCG@9" in html  # in the per-system score table and the correlation table
    # the written configuration holds the table and runs again
    cfg = tomllib.loads((out / "config.toml").read_text())
    assert cfg["measures"] == {"session": ["esNDCG@9", "mean(nDCG_AE@9)"], "query": ["nDCG_AE@9"]}
    assert json.loads((out / "config.json").read_text())["measures"]["query"] == ["nDCG_AE@9"]
    codebook = pd.read_csv(out / "exports" / "codebook.csv")
    assert codebook.to_string().count("(no description)") == 0


def test_correlation_step_without_ratings_writes_nothing(tmp_path):
    outputs = RunOutputs(tmp_path)
    ps = pd.DataFrame({"session_id": ["a", "b"], "nsdcg": [0.1, 0.2]})
    settings = run_settings(None, lenient=None, has_qrels=True)
    assert correlation_step(outputs, ps, settings) is None
    assert outputs.written == []


def test_measure_columns_are_described_by_the_registry():
    for name, words in (
        ("esNDCG@9", ["Expected session nDCG", "kanoulas2011"]),
        ("mean(nDCG_AE@9)", ["Mean over queries", "M = nDCG_AE@9", "jiang2016ae"]),
        ("sRBP(b=0.9)@5", ["Session rank-biased precision", "lipani2019"]),
        ("CT", ["Cube Test", "trec-dd-jig"]),
        ("sDCG/q@9", ["sDCG per query"]),
    ):
        doc = describe_column(name)
        text = doc.label + doc.description
        for w in words:
            assert w in text, (name, w)


@pytest.mark.parametrize(("n", "kind"), [(40, "csv"), (5_001, "parquet")])
def test_the_points_behind_the_rating_figure_are_parquet_when_it_is_rasterised(tmp_path, n, kind):
    """Issue 26: the rating figure's points as CSV were 114 MB at 200k sessions."""
    import numpy as np

    from sessionval.output.rating_plots import RASTER_POINTS

    assert RASTER_POINTS == 5_000
    rng = np.random.default_rng(3)
    ps = pd.DataFrame(
        {
            "session_id": [f"s{i}" for i in range(n)],
            "nsdcg": rng.random(n),
            "rating_satisfaction": rng.integers(1, 6, n).astype(float),
        }
    )
    outputs = RunOutputs(tmp_path)
    settings = run_settings(None, lenient=None, has_qrels=True)
    section = correlation_step(outputs, ps, settings)
    assert section is not None
    other = "csv" if kind == "parquet" else "parquet"
    assert f"figures/rating_correlations.{kind}" in outputs.written
    assert f"figures/rating_correlations.{other}" not in outputs.written
    points = pd.read_csv if kind == "csv" else pd.read_parquet
    outputs.writes.wait()  # the points table is encoded on the run's writer thread
    assert len(points(outputs.root / f"figures/rating_correlations.{kind}")) == n
    assert f"(the points: figures/rating_correlations.{kind})" in section.figures[0].caption


@pytest.mark.parametrize("formats", [("png",), ("svg", "pdf")])
def test_the_rating_figure_is_written_in_the_figure_formats_and_rendered_once(tmp_path, formats):
    """``[figures] formats`` holds for the rating figure; the report shows the PNG written.

    (Reduced from 300 to 150 dpi, as every figure's: no second drawing.)
    """
    import numpy as np

    from sessionval.workflow.settings import FigureSettings

    rng = np.random.default_rng(4)
    ps = pd.DataFrame(
        {
            "session_id": [f"s{i}" for i in range(30)],
            "nsdcg": rng.random(30),
            "rating_satisfaction": rng.integers(1, 6, 30).astype(float),
        }
    )
    outputs = RunOutputs(tmp_path)
    settings = run_settings(None, lenient=None, has_qrels=True)
    settings = dataclasses.replace(settings, figures=FigureSettings(formats=formats))
    section = correlation_step(outputs, ps, settings)
    images = {f for f in outputs.written if f.startswith("figures/") and "." in f}
    stems = {f.rsplit(".", 1)[1] for f in images} - {"csv", "parquet"}
    assert stems == set(formats)
    figure = section.figures[0]
    assert figure.png.startswith(b"\x89PNG")
    if "png" in formats:
        written = (outputs.root / "figures/rating_correlations.png").read_bytes()
        assert figure.png == plots.reduced_png(written, 2)
    assert (figure.svg is not None) == ("svg" in formats)


def test_the_density_threshold_is_configured_and_the_caption_says_what_is_drawn(tmp_path):
    """Issue 26: above ``[figures] density_points`` sessions a panel is a 2-D histogram."""
    import numpy as np

    from sessionval.workflow import config_tables, to_toml

    rng = np.random.default_rng(5)
    ps = pd.DataFrame(
        {
            "session_id": [f"s{i}" for i in range(50)],
            "nsdcg": rng.random(50),
            "rating_satisfaction": rng.integers(1, 6, 50).astype(float),
        }
    )
    conf = _config(tmp_path, "[figures]\ndensity_points = 40\nformats = ['png']\n")
    settings = run_settings(conf, lenient=None, has_qrels=True)
    assert settings.figures.density_points == 40
    (figure,) = correlation_step(RunOutputs(tmp_path / "a"), ps, settings).figures
    assert "A panel of more than 40 sessions ([figures] density_points) is a 2-D histogram" in (
        figure.caption
    )
    # the default (5,000) keeps the points of this small study, and says so
    default = run_settings(None, lenient=None, has_qrels=True)
    assert default.figures.density_points == 5_000
    (figure,) = correlation_step(RunOutputs(tmp_path / "b"), ps, default).figures
    assert figure.caption.startswith("One point per session")
    # config.toml carries the key, and a value below 1 is refused where it is read
    assert tomllib.loads(to_toml(config_tables(settings)))["figures"]["density_points"] == 40
    with pytest.raises(InputFormatError, match="density_points"):
        run_settings(_config(tmp_path, "[figures]\ndensity_points = 0\n"), lenient=None,
                     has_qrels=True)  # fmt: skip
