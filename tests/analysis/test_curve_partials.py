"""Figure partials: sums of partitions of sessions that add up to the whole study's.

``analysis/curve_partials.py`` (issue 28, item 2): each partition's partial holds the
per-group sums of the curves, Figure 4's candidates and the cell counts; combined by
the values of their labels they are the whole study's, whatever the split.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

from sessionval.analysis.curve_bands import add_bands
from sessionval.analysis.curve_partials import (
    FigurePartial,
    cell_counts,
    combine_figure_partials,
    figure_partial,
    in_study_order,
)
from sessionval.errors import JudgmentError, MeasureSpecError
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.validate.flat import frame_from_flat
from tests import builders
from tests.figure_partitions import random_split, synthetic_study

SETTINGS = {"ranks": 10, "min_queries": 3, "max_sessions": 2}


def _partials(n_parts: int, seed: int, config: SessionConfig | None = None) -> list[FigurePartial]:
    study = synthetic_study()
    split = random_split(study.loaded.frame.n_sessions, n_parts, seed)
    return [
        figure_partial(ev, squares=True, **SETTINGS)
        for ev in study.evaluate_parts(split, config or SessionConfig())
    ]


def _whole(config: SessionConfig | None = None) -> FigurePartial:
    ev = synthetic_study().evaluate(config or SessionConfig())
    return figure_partial(ev, squares=True, **SETTINGS)


def test_the_partitions_code_their_categories_differently():
    parts = _partials(3, seed=0)
    topics = [tuple(p.categories["topic_id"]) for p in parts]
    users = [tuple(p.categories["user_id"]) for p in parts]
    assert len(set(users)) == 3  # searchers span partitions, each coded its own way
    assert all(set(t) == set(topics[0]) for t in topics)


@pytest.mark.parametrize("config", [SessionConfig(), SessionConfig(normalise="of-averages")])
def test_combined_sums_are_the_whole_studys(config):
    whole = in_study_order(_whole(config))
    combined = in_study_order(combine_figure_partials(*_partials(3, seed=1, config=config)))
    for name in ("sessions", "scenario_all", "scenario_long"):
        a, b = getattr(whole, name), getattr(combined, name)
        pd.testing.assert_frame_equal(a.labels, b.labels)
        np.testing.assert_array_equal(a.n_sessions, b.n_sessions)
        np.testing.assert_array_equal(a.longest, b.longest)
        assert a.sums.keys() == b.sums.keys()
        width = int(a.longest.max())  # the tail column of a part's sums may sit further out
        for key, total in a.sums.items():
            np.testing.assert_allclose(
                total[:, :width], b.columns(width)[key], rtol=1e-12, err_msg=f"{name} {key}"
            )
    for name in ("last", "best"):
        a, b = getattr(whole, name), getattr(combined, name)
        pd.testing.assert_frame_equal(a.labels, b.labels)
        np.testing.assert_array_equal(a.n, b.n)
        for key, total in a.sums.items():
            np.testing.assert_allclose(total, b.sums[key], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(whole.cg.names, combined.cg.names)
    assert whole.cg.count.sum() == combined.cg.count.sum()
    pd.testing.assert_frame_equal(whole.cells, combined.cells)
    assert whole.deepest == combined.deepest
    for column, values in whole.categories.items():
        pd.testing.assert_index_equal(values, combined.categories[column])


def test_figure_4_candidates_are_the_first_sessions_of_each_cell_by_id():
    study = synthetic_study()
    combined = combine_figure_partials(*_partials(4, seed=2))
    ids = combined.candidates.ids
    sessions = study.loaded.frame.sessions.astype({"session_id": str})
    expected = (
        sessions.astype(str)
        .sort_values("session_id")
        .groupby(["topic_id", "system_id"])
        .head(SETTINGS["max_sessions"])
    )
    assert sorted(ids["session_id"]) == sorted(expected["session_id"])
    assert len(ids) <= len(combined.cells) * SETTINGS["max_sessions"]
    # each candidate keeps its own vectors, whichever partition it came from
    whole = _whole()
    at = pd.Index(whole.candidates.ids["session_id"]).get_indexer(ids["session_id"])
    np.testing.assert_array_equal(whole.candidates.plen[at], combined.candidates.plen)
    np.testing.assert_array_equal(
        np.concatenate([whole.candidates.take(np.array([i])).vectors["sdcg"] for i in at]),
        combined.candidates.vectors["sdcg"],
    )


def test_a_partial_holds_groups_not_sessions():
    partial = combine_figure_partials(*_partials(2, seed=3))
    for sums in (partial.sessions, partial.scenario_all, partial.scenario_long):
        assert all(a.shape[0] == len(sums.labels) for a in sums.sums.values())
    for sums in (partial.last, partial.best):
        assert all(a.shape == (2 * len(sums.labels), 10) for a in sums.sums.values())
    n_systems, n_keys = partial.cg.count.shape
    assert partial.cg.sums["cg"].shape == (n_systems, n_keys, 10)
    assert partial.categories["session_id"].size == 0  # no session id is kept
    back = pickle.loads(pickle.dumps(partial))
    np.testing.assert_array_equal(back.sessions.sums["s"], partial.sessions.sums["s"])


def test_cell_counts():
    frame = builders.frame(
        [
            ("s1", "u1", "A", "S1", [["d1"], ["d2"], ["d3"]]),
            ("s2", "u1", "A", "S1", [["d1"]]),
            ("s3", "u2", "B", "S1", [["d1"], ["d2"], ["d3"]]),
        ]
    )
    counts = cell_counts(frame.sessions, min_queries=3)
    assert counts.to_dict("list") == {
        "topic_id": ["A", "B"],
        "system_id": ["S1", "S1"],
        "n_sessions": [2, 1],
        "n_long": [1, 1],
    }


def test_partials_of_other_settings_are_refused():
    study = synthetic_study()
    split = random_split(study.loaded.frame.n_sessions, 2, seed=0)
    a, b = study.evaluate_parts(split, SessionConfig())
    with pytest.raises(MeasureSpecError, match="max_sessions"):
        combine_figure_partials(
            figure_partial(a, **SETTINGS), figure_partial(b, **(SETTINGS | {"max_sessions": 5}))
        )
    other = evaluate(b.frame, study.judgments, SessionConfig(b=4))
    with pytest.raises(MeasureSpecError, match="config"):
        combine_figure_partials(figure_partial(a, **SETTINGS), figure_partial(other, **SETTINGS))


def test_partitions_judged_differently_are_refused():
    study = synthetic_study()
    split = random_split(study.loaded.frame.n_sessions, 2, seed=0)
    a, b = study.partitions(split)
    table = study.judgments.table
    # one more relevant document for every topic changes the ideal vectors of partition b
    extra = [(str(t), "extra-doc", 3) for t in table["topic_id"].astype(str).unique()]
    rows = list(
        zip(table["topic_id"].astype(str), table["doc_id"].astype(str), table["grade"], strict=True)
    )
    other = builders.judgments(rows + extra)
    ev_a = evaluate(frame_from_flat(a).frame, study.judgments, SessionConfig())
    ev_b = evaluate(frame_from_flat(b).frame, other, SessionConfig())
    with pytest.raises(JudgmentError, match="ideal vectors"):
        combine_figure_partials(figure_partial(ev_a, **SETTINGS), figure_partial(ev_b, **SETTINGS))


def test_equal_values_have_no_spread_in_any_summation_order():
    # 222.0186... twenty times (a mean ideal curve's point): its sum of squares and mean
    # leave a residue of one ulp, 4.7e-10, which was a standard error of 1.1e-6
    x = np.full(20, 222.01861405338258)
    assert (x**2).sum() - 20 * x.mean() ** 2 > 0
    table = pd.DataFrame({"value": [x.mean(), x[::-1].mean()]})
    banded = add_bands(
        table, mean="value", sumsq=np.array([(x**2).sum()] * 2), n=[20, 20], confidence=0.95
    )
    assert banded["se"].tolist() == [0.0, 0.0]
    spread = add_bands(
        pd.DataFrame({"value": [2.0]}), mean="value", sumsq=np.array([10.0]), n=[2], confidence=0.9
    )
    assert spread["se"].iloc[0] == pytest.approx(1.0)  # values 1 and 3
