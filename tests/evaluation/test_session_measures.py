"""Session measures requested by name equal the configuration-driven columns."""

from __future__ import annotations

import numpy as np
import pytest

from sessionval.errors import MeasureSpecError
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.measures.grammar import MeasureDef, Param, parse_with
from sessionval.measures.params import SESSION_PARAMS
from sessionval.measures.registry import parse_measure


@pytest.mark.parametrize("seed", range(3))
def test_sdcg_measure_equals_the_config_column(seed: int, random_study) -> None:
    frame, judg = random_study(seed)
    ev = evaluate(frame, judg, SessionConfig(), measures=["sDCG(b=2,bq=4)@10", "nsDCG@10"])
    s = ev.per_session()
    assert ev.session_measures == ("sDCG(b=2,bq=4)@10", "nsDCG@10")
    np.testing.assert_array_equal(s["sDCG(b=2,bq=4)@10"], s["sdcg"])
    np.testing.assert_array_equal(s["nsDCG@10"], s["nsdcg"])


@pytest.mark.parametrize(
    ("config", "measure", "changes"),
    [
        (SessionConfig(b=3, cutoff=5), "sDCG(b=2,bq=4)@10", {"b": 2, "bq": 4, "cutoff": 10}),
        (SessionConfig.preset("jiang-allan-2016"), "nsDCG@10", {"cutoff": 10}),
        (
            SessionConfig(),
            "nsDCG(duplicates=drop,short_lists=none,ideal=no-repeat)@4",
            {"duplicates": "drop", "short_lists": "none", "ideal": "no-repeat", "cutoff": 4},
        ),
        (
            SessionConfig(duplicates="first"),
            "sDCG(discount=shifted-log,query_discount=none,gain=exp)",
            {"discount": "shifted-log", "query_discount": "none", "gains": "exp"},
        ),
        (SessionConfig(scan_depth="cap"), "sDCG(scan_depth=ignore)@3", {"scan_depth": "ignore"}),
    ],
)
def test_measure_parameters_override_the_configuration(
    config: SessionConfig, measure: str, changes: dict, random_study
) -> None:
    frame, judg = random_study(7)
    ev = evaluate(frame, judg, config, measures=[measure])
    if "cutoff" not in changes and "@" in measure:
        changes["cutoff"] = int(measure.rsplit("@", 1)[1])
    ref = evaluate(frame, judg, config.replace(**changes)).per_session()
    column = "nsdcg" if measure.startswith("nsDCG") else "sdcg"
    np.testing.assert_array_equal(ev.per_session()[repr(parse_measure(measure))], ref[column])
    # the evaluation's own columns keep the evaluation's configuration
    np.testing.assert_array_equal(
        ev.per_session()["sdcg"], evaluate(frame, judg, config).per_session()["sdcg"]
    )


def test_last_and_best_aggregates_equal_the_last_and_best_columns(random_study) -> None:
    frame, judg = random_study(11)
    dcg = "DCG(discount=jk2008,gain=0-1-10-100)@10"
    ev = evaluate(
        frame, judg, SessionConfig(), measures=[f"last({dcg})", f"best({dcg})", "last(nDCG@10)"]
    )
    s, q = ev.per_session(), ev.per_query()
    np.testing.assert_allclose(s[f"last({dcg})"], s["last_dcg"], rtol=1e-12)
    np.testing.assert_allclose(s[f"best({dcg})"], s["best_dcg"], rtol=1e-12)
    # last(M) is M of the is_last query; M itself is not a per-query column unless asked
    assert "nDCG@10" not in q.columns
    ndcg = evaluate(frame, judg, measures=["nDCG@10"]).per_query()
    # queries are grouped by session, in session order: one last query per session
    last = ndcg[ndcg["is_last"]]["nDCG@10"].to_numpy()
    np.testing.assert_array_equal(s["last(nDCG@10)"], last)


def test_query_and_session_measures_together_and_as_objects(random_study) -> None:
    frame, judg = random_study(2, n_sessions=5)
    ev = evaluate(frame, judg, measures=["AP", parse_measure("sDCG@10"), "best(AP)", "AP"])
    assert ev.measures == ("AP",)
    assert ev.session_measures == ("sDCG@10", "best(AP)")
    q = ev.per_query()
    best = q.groupby("session_id", observed=True, sort=False)["AP"].max().to_numpy()
    np.testing.assert_array_equal(ev.per_session()["best(AP)"], best)


def test_an_unused_base_is_refused_under_the_configuration(random_study) -> None:
    frame, judg = random_study(1, n_sessions=3)
    with pytest.raises(MeasureSpecError, match="b is not used by discount=log2p1"):
        evaluate(frame, judg, SessionConfig(discount="log2p1"), measures=["sDCG(b=3)@10"])
    with pytest.raises(MeasureSpecError, match="bq is not used by query_discount=none"):
        evaluate(frame, judg, SessionConfig(query_discount="none"), measures=["sDCG(bq=3)"])


def test_a_new_session_measure_is_one_declaration_and_a_kernel_call(random_study) -> None:
    """The seam issue 13 builds on: sDCG/q with an own parameter, declared here only."""
    per_query = MeasureDef(
        "sDCG/q",
        "sDCG per query",
        "sDCG divided by the number of queries",
        "sDCG/q = S[P] / n",
        "jiang2016",
        (*SESSION_PARAMS, Param("scale", "float", 1.0, "a factor of the measure's own")),
        lambda s, *, empty, scale: scale * s.final / s.n_queries,
        scope="session",
        normalised=False,
        upper=None,
        ideal_is_one=False,
    )
    m = parse_with("sDCG/q(bq=2,scale=2)@5", {"sDCG/q": per_query})
    assert m.config_changes() == {"bq": 2.0, "cutoff": 5} and m.own_params() == {"scale": 2.0}
    frame, judg = random_study(4, n_sessions=10)
    ev = evaluate(frame, judg, measures=[m])
    ref = evaluate(frame, judg, SessionConfig(bq=2, cutoff=5)).per_session()
    np.testing.assert_allclose(ev.per_session()[repr(m)], 2 * ref["sdcg_per_query"])
