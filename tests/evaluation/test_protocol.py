"""Both evaluation objects share one result protocol (tables, shapes, summary, means)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from sessionval import EvaluationResult, SessionEvaluation, SingleEvaluation, evaluate
from sessionval.errors import SessionvalError
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.lists import evaluate_run
from tests.builders import frame, judgments

RUN = {"1": {"a": 2.0, "b": 1.0}, "2": {"a": 1.0}}
QRELS = {"1": {"b": 1, "c": 2}, "2": {"a": 1}}


def _single() -> SingleEvaluation:
    return evaluate_run(RUN, QRELS, ["P@1", "AP", "NumRet"])


def _session() -> SessionEvaluation:
    f = frame(
        [
            ("s1", "u1", "t1", "A", [["d1", "d2"], ["d3"]]),
            ("s2", "u2", "t1", "B", [["d2"]]),
        ]
    )
    j = judgments([("t1", "d1", 1), ("t1", "d3", 2), ("t1", "d2", 0)])
    return evaluate(f, j, SessionConfig(), measures=["P@1", "sDCG"])


@pytest.mark.parametrize("make", [_single, _session])
def test_both_satisfy_the_protocol(make: type) -> None:
    ev: EvaluationResult = make()
    assert isinstance(ev, EvaluationResult)
    summary = ev.summary()
    assert list(summary.columns) == ["measure", "value", "n"]
    assert ev.means == dict(zip(summary["measure"], summary["value"], strict=True))
    assert {"n_queries", "n_unjudged", "n_negative"} <= set(ev.counts())
    long = ev.long("query")
    assert list(long.columns[-2:]) == ["measure", "value"]
    wide = ev.per_query()
    assert len(wide) == ev.counts()["n_queries"]
    # the long table is the wide one melted, unit-major
    measures = list(dict.fromkeys(long["measure"]))
    np.testing.assert_array_equal(
        long["value"].to_numpy(), wide[measures].to_numpy(dtype=float).reshape(-1)
    )


def test_single_per_query_is_wide_and_long_is_tidy() -> None:
    ev = _single()
    wide = ev.per_query()
    assert list(wide.columns) == ["query_id", "P@1", "AP", "NumRet"]
    assert wide["AP"].tolist() == [0.25, 1.0]  # b at rank 2 of two relevant
    assert ev.long()["measure"].tolist()[:3] == ["P@1", "AP", "NumRet"]
    s = ev.summary()
    assert s.set_index("measure")["value"].to_dict() == {"P@1": 0.5, "AP": 0.625, "NumRet": 3.0}
    with pytest.raises(SessionvalError, match="one level"):
        ev.long("session")


def test_single_per_query_attribute_still_reads_the_long_table_and_warns() -> None:
    ev = _single()
    with pytest.warns(DeprecationWarning, match=r"ev\.long\(\)") as caught:
        values = ev.per_query["value"].tolist()
    assert values == ev.long()["value"].tolist()
    assert caught[0].filename == __file__  # points at the user's line
    with pytest.warns(DeprecationWarning):
        assert ev.per_query.head(1)["measure"].tolist() == ["P@1"]
    with pytest.warns(DeprecationWarning, match="per_query"):
        old = ev.wide()
    assert old.index.name == "query_id"
    pd.testing.assert_frame_equal(
        old.reset_index(), ev.per_query(), check_names=False, check_index_type=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev.per_query()  # the method spelling does not warn


def test_session_long_summary_and_counts() -> None:
    ev = _session()
    s = ev.summary()
    assert s["measure"].tolist() == ["sdcg", "nsdcg", "sDCG", "dcg", "ndcg", "P@1"]
    per_session = ev.per_session()
    by = s.set_index("measure")
    assert by.loc["nsdcg", "value"] == pytest.approx(per_session["nsdcg"].mean())
    assert by.loc["nsdcg", "n"] == 2
    assert by.loc["P@1", "value"] == pytest.approx(ev.per_query()["P@1"].mean())
    long = ev.long("session")
    assert list(long.columns) == [
        "session_id",
        "user_id",
        "topic_id",
        "system_id",
        "measure",
        "value",
    ]
    assert long["measure"].tolist()[:3] == ["sdcg", "nsdcg", "sDCG"]
    assert ev.counts() == {
        "n_sessions": 2,
        "n_queries": 3,
        "n_positions": int(ev.sessions["n_positions"].sum()),
        "n_unjudged": 0,
        "n_negative": 0,
        "n_empty_ideal": 0,
    }
    with pytest.raises(SessionvalError, match="'session' and 'query'"):
        ev.long("position")


def test_session_summary_count_keys_still_work_and_warn() -> None:
    ev = _session()
    with pytest.warns(DeprecationWarning, match="counts"):
        assert ev.summary()["n_sessions"] == 2
    with pytest.warns(DeprecationWarning):
        assert ev.summary()["config"] == ev.config.model_dump(mode="json")
    assert ev.summary()["value"].size == 6  # a column is a column, no warning
