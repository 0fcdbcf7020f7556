"""Sums per design cell (sessionval.analysis.cell_sums): equal to the local functions.

Every test splits a per-session table into partitions by session (searchers and topics
span partitions; each partition's id columns categorical with its own categories, as a
worker's evaluation makes them), sums each, combines the partials and compares with the
local function on the whole table.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.analysis.by_design import compare_cells, compare_per_session
from sessionval.analysis.cell_sums import (
    blocked_scores_from_cells,
    cell_sums,
    combine,
    design_from_cells,
    score_table_from_cells,
    unjudged_from_cells,
)
from sessionval.analysis.compare import blocked_scores
from sessionval.analysis.design import detect_design
from sessionval.analysis.stats import score_table
from sessionval.errors import StatisticsError
from sessionval.frame.order import sorted_categories
from sessionval.synth import simulate_scores

MEASURES = ["nsdcg", "sdcg"]
LAYOUTS = [
    ("within", "nested"),
    ("within", "crossed"),
    ("between", "nested"),
    ("by_topic", "nested"),
]


def _study(design: str, topics: str, *, n_systems: int = 3, seed: int = 1, **kw) -> pd.DataFrame:
    """A per-session table with two scores, one missing in two sessions (unjudged)."""
    ps = simulate_scores(
        design=design, topics=topics, n_searchers=8, n_systems=n_systems, seed=seed, **kw
    )
    ps["sdcg"] = 3 * ps["nsdcg"] + 0.01 * np.arange(len(ps))
    ps.loc[[1, 5], "sdcg"] = np.nan
    return ps


def _as_partition(part: pd.DataFrame, categorical: bool) -> pd.DataFrame:
    """A partition as a worker has it: its own categories (in id order) of the id columns."""
    part = part.reset_index(drop=True)
    if categorical:
        for col in ("user_id", "topic_id", "system_id"):
            cat = part[col].astype("category")
            part[col] = sorted_categories(cat) if sorted_categories(cat) is not None else cat
    return part


def _split(
    ps: pd.DataFrame, n_parts: int, seed: int = 0, *, categorical: bool = False
) -> list[pd.DataFrame]:
    which = np.random.default_rng(seed).integers(0, n_parts, len(ps))
    return [_as_partition(ps[which == k], categorical) for k in range(n_parts)]


def _combined(ps: pd.DataFrame, n_parts: int = 3, seed: int = 0, **kw):
    parts = [cell_sums(p, **kw) for p in _split(ps, n_parts, seed)]
    acc = parts[0]
    for p in parts[1:]:  # a fold, as the client does it
        acc = combine(acc, p)
    return acc


@pytest.mark.parametrize(("design", "topics"), LAYOUTS)
def test_score_table_design_blocks_and_notes_equal_the_local_ones(design, topics) -> None:
    ps = _study(design, topics)
    cells = _combined(ps)
    pd.testing.assert_frame_equal(
        score_table_from_cells(cells, measures=MEASURES),
        score_table(ps, measures=MEASURES),
        rtol=1e-12,
    )
    assert design_from_cells(cells) == detect_design(ps)
    for block in ("user_id", "topic_id"):
        pd.testing.assert_frame_equal(
            blocked_scores_from_cells(cells, measures=MEASURES, block=block),
            blocked_scores(ps, measures=MEASURES, block=block),
            rtol=1e-12,
        )
    topics_gone = sorted(set(ps.loc[ps["sdcg"].isna(), "topic_id"]))
    assert unjudged_from_cells(cells) == (2, topics_gone)
    assert cells.n_sessions == len(ps)


@pytest.mark.parametrize(("design", "topics"), LAYOUTS)
@pytest.mark.parametrize("test", ["paired-t", "wilcoxon", "randomisation"])
def test_comparisons_equal_compare_per_session(design, topics, test) -> None:
    ps = _study(design, topics, period_sd=0.05)
    kw = {"measures": MEASURES, "test": test, "resamples": 200}
    local = compare_per_session(ps, **kw)
    cells = compare_cells(_combined(ps, n_parts=4), **kw)
    pd.testing.assert_frame_equal(cells, local, rtol=1e-12)
    assert cells.attrs["notes"] == local.attrs["notes"]
    assert cells.attrs["design"] == local.attrs["design"]
    assert (cells["design"] == design).all() and (cells["block"] != "").all()


def test_tukey_hsd_and_overridden_designs_equal_the_local_ones() -> None:
    ps = _study("within", "crossed")
    cells = _combined(ps)
    for kw in (
        {"correction": "tukey-hsd"},
        {"design": "between"},
        {"block": "searcher+topic"},
        {"design": "by_topic"},
    ):
        local = compare_per_session(ps, measures=MEASURES, **kw)
        pd.testing.assert_frame_equal(
            compare_cells(cells, measures=MEASURES, **kw), local, rtol=1e-12
        )


def test_blocks_model_of_cells_with_several_sessions_is_the_session_level_ols() -> None:
    # three sessions per searcher × topic × system: the cell means weighted by their
    # sessions plus the sessions' spread within cells give the session-level fit
    ps = simulate_scores(
        design="within", topics="crossed", n_searchers=8, n_topics=2, sessions_per_searcher=12,
        system_effect=0.05, seed=3,
    ).drop(columns="session_order")  # fmt: skip
    # one session without an sdcg: its cell has values of both measures but in
    # different numbers, so the two are fitted apart, as the local run does
    ps["sdcg"] = 2 * ps["nsdcg"] + 0.1 * (ps.index % 3)
    ps.loc[4, "sdcg"] = np.nan
    cells = _combined(ps, n_parts=4)
    assert (cells.n == 3).all()
    local = compare_per_session(ps, measures=MEASURES, block="searcher+topic")
    got = compare_cells(cells, measures=MEASURES, block="searcher+topic")
    assert (got["test"] == "ols-blocks").all()
    pd.testing.assert_frame_equal(got, local, rtol=1e-12)


def test_cells_without_order_fit_no_period_and_say_so() -> None:
    ps = _study("within", "nested")
    cells = _combined(ps, by_order=False)
    assert "session_order" not in cells.keys.columns
    got = compare_cells(cells, measures=MEASURES)
    assert (got["test"] == "ols-blocks").all()
    assert any("no period effect" in n for n in got.attrs["notes"])
    # the model without the period is the local one without the order column
    local = compare_per_session(ps.drop(columns="session_order"), measures=MEASURES)
    pd.testing.assert_frame_equal(got, local, rtol=1e-12)


def test_systems_keep_the_local_order_categorical_or_not() -> None:
    ps = _study("within", "crossed")
    # first appearance differs from sorted order: S3 first
    ps = pd.concat([ps[ps["system_id"] == "S3"], ps[ps["system_id"] != "S3"]], ignore_index=True)
    ps["session_id"] = [f"x{i:03d}" for i in range(len(ps))]
    local = compare_per_session(ps, measures=MEASURES)
    assert local["a"].iloc[0] == "S3"
    pd.testing.assert_frame_equal(
        compare_cells(_combined(ps), measures=MEASURES), local, rtol=1e-12
    )
    # categorical system_id: id order of the values, whatever each partition's categories
    cat = ps.assign(system_id=ps["system_id"].astype("category"))
    parts = [cell_sums(p) for p in _split(cat, 3, categorical=True)]
    got = compare_cells(combine(*parts), measures=MEASURES)
    pd.testing.assert_frame_equal(got, compare_per_session(cat, measures=MEASURES), rtol=1e-12)
    assert got["a"].iloc[0] == "S1"


def test_partials_are_small_picklable_and_bounded_by_cells() -> None:
    ps = _study("within", "crossed")
    many = pd.concat([ps] * 20, ignore_index=True)  # 20 times the sessions, the same cells
    many["session_id"] = [f"s{i:05d}" for i in range(len(many))]
    few, lots = _combined(ps), _combined(many)
    assert len(lots.keys) == len(few.keys) and lots.n_sessions == 20 * len(ps)
    again = pickle.loads(pickle.dumps(lots))
    np.testing.assert_array_equal(again.total, lots.total)
    pd.testing.assert_frame_equal(
        score_table_from_cells(lots, measures=MEASURES),
        score_table(many, measures=MEASURES),
        rtol=1e-12,
    )


def test_a_constant_score_keeps_a_zero_spread() -> None:
    ps = _study("within", "crossed").assign(flat=0.1)
    table = score_table_from_cells(_combined(ps), measures=["flat"])
    assert (table["sd"].abs() < 1e-15).all()


def test_bad_input_is_refused_with_a_message() -> None:
    ps = _study("between", "nested")
    with pytest.raises(StatisticsError, match=r"missing to sum its cells"):
        cell_sums(ps, ["nope"])
    with pytest.raises(StatisticsError, match="no cell sums"):
        combine()
    with pytest.raises(StatisticsError, match="different measures"):
        combine(cell_sums(ps, ["nsdcg"]), cell_sums(ps, ["sdcg"]))
    with pytest.raises(StatisticsError, match="were not summed"):
        compare_cells(cell_sums(ps, ["nsdcg"]), measures=["sdcg"])
    with pytest.raises(StatisticsError, match="unknown design"):
        design_from_cells(cell_sums(ps), design="latin")


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(LAYOUTS),
    st.integers(1, 5),
    st.integers(0, 2**16),
    st.randoms(use_true_random=False),
)
def test_results_do_not_depend_on_the_split_or_the_order_of_combining(
    layout, n_parts, seed, rnd
) -> None:
    ps = _study(*layout, seed=seed % 7)
    parts = [cell_sums(p) for p in _split(ps, n_parts, seed, categorical=bool(seed % 2))]
    rnd.shuffle(parts)
    acc = parts[0]
    for p in parts[1:]:
        acc = combine(p, acc) if rnd.random() < 0.5 else combine(acc, p)
    whole = cell_sums(ps)
    np.testing.assert_array_equal(acc.count, whole.count)
    np.testing.assert_array_equal(acc.n, whole.n)
    pd.testing.assert_frame_equal(acc.keys, whole.keys)
    np.testing.assert_allclose(acc.total, whole.total, rtol=1e-12, atol=1e-13)
    pd.testing.assert_frame_equal(
        compare_cells(acc, measures=MEASURES),
        compare_per_session(ps, measures=MEASURES),
        rtol=1e-11,
    )


def test_an_empty_partition_and_a_study_without_searchers_combine() -> None:
    ps = _study("by_topic", "nested").drop(columns="user_id")
    empty = cell_sums(ps.iloc[:0])
    assert len(empty.keys) == 0 and empty.n_sessions == 0
    cells = combine(empty, *[cell_sums(p) for p in _split(ps, 2)])
    assert design_from_cells(cells) == detect_design(ps)
    pd.testing.assert_frame_equal(
        compare_cells(cells, measures=MEASURES), compare_per_session(ps, measures=MEASURES)
    )
