"""Hand-computed sessions for every policy, with the arithmetic written out.

Judgments of topic T (gains 0-1-10-100): a = 3 (100), b = 2 (10), c = 1 (1), z = 0.
Ideal gain vector of T: (100, 10, 1).  Rank discount jk2008, b = 2:
d(1) = 1, d(2) = 2, d(3) = 1 + log2 3 = 2.5849625.  Query discount, bq = 4:
qd(1) = 1, qd(2) = 1 / (1 + log4 2) = 2/3.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from sessionval.analysis.curves import individual_curves, query_curves, session_curves
from sessionval.errors import MeasureSpecError
from sessionval.evaluation.config import PRESETS, SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.validate.flat import frame_from_flat
from tests import builders
from tests.builders import judgments

D3 = 1 + math.log2(3)
Q2 = 2 / 3


qrels = judgments


T = qrels([("T", "a", 3), ("T", "b", 2), ("T", "c", 1), ("T", "z", 0)])


def study(
    sessions: dict[str, list[list[str]]],
    *,
    system: dict[str, str] | None = None,
    scan: dict[tuple[str, int], int] | None = None,
    topic: str = "T",
):
    """Sessions of one searcher ``u`` on ``topic``; systems default to S1."""
    specs = [
        (sid, "u", topic, (system or {}).get(sid, "S1"), lists) for sid, lists in sessions.items()
    ]
    return builders.frame(specs, scan=scan)


S1 = study({"s1": [["z", "a"], ["a", "b", "c"]]})


def vec(ev, col: str = "sdcg") -> list[float]:
    return ev.per_position()[col].tolist()


# ---------------------------------------------------------------------------------------------
# duplicates


def test_every_pad_x3() -> None:
    ev = evaluate(S1, T, SessionConfig(cutoff=3))
    # Q1 slot (z, a, pad): 0, 100/d(2) = 50, 0
    # Q2 slot (a, b, c) × 2/3: 100/1·2/3 = 66.667, 10/2·2/3 = 3.333, 1/d(3)·2/3 = 0.2579
    expected = [0, 50, 50, 50 + 100 * Q2, 50 + 100 * Q2 + 5 * Q2, 50 + 105 * Q2 + Q2 / D3]
    assert vec(ev) == pytest.approx(expected)
    # ideal per query (100, 10/2, 1/d(3)), second copy × 2/3
    i1 = [100, 105, 105 + 1 / D3]
    ideal = [*i1, i1[-1] + 100 * Q2, i1[-1] + 105 * Q2, i1[-1] + (105 + 1 / D3) * Q2]
    assert vec(ev, "ideal") == pytest.approx(ideal)
    s = ev.per_session().iloc[0]
    assert s["sdcg"] == pytest.approx(expected[-1])
    assert s["nsdcg"] == pytest.approx(expected[-1] / ideal[-1])
    assert s["avg_pos_sdcg"] == pytest.approx(sum(expected) / 6)


def test_first_zeroes_repeat_keeps_rank() -> None:
    ev = evaluate(S1, T, SessionConfig(cutoff=3, duplicates="first"))
    # a was shown by Q1: 0 at Q2 rank 1; b keeps rank 2 (10/2·2/3), c rank 3
    expected = [0, 50, 50, 50, 50 + 5 * Q2, 50 + 5 * Q2 + Q2 / D3]
    assert vec(ev) == pytest.approx(expected)
    assert ev.per_query()["n_repeats"].tolist() == [0, 1]


def test_drop_moves_list_up() -> None:
    ev = evaluate(S1, T, SessionConfig(cutoff=3, duplicates="drop"))
    # Q2 becomes (b, c, pad): 10/1·2/3 = 6.667, 1/2·2/3 = 0.333, 0
    expected = [0, 50, 50, 50 + 10 * Q2, 50 + 10 * Q2 + 0.5 * Q2, 50 + 10.5 * Q2]
    assert vec(ev) == pytest.approx(expected)
    pos = ev.per_position()
    assert pos["doc_rank"].iloc[3] == 2  # b was logged at rank 2, shown at slot rank 1
    assert pos["rank"].iloc[3] == 1
    q = ev.per_query()
    assert q["n_available"].tolist() == [2, 2]
    assert q["padded"].tolist() == [True, True]


def test_repeat_only_counts_if_shown_before() -> None:
    # X = 1: Q1 shows only z; its a at rank 2 was never shown, so Q2's a is new
    ev = evaluate(S1, T, SessionConfig(cutoff=1, duplicates="first"))
    assert vec(ev) == pytest.approx([0, 100 * Q2])


# ---------------------------------------------------------------------------------------------
# short lists


def test_short_none_concatenates_as_is() -> None:
    ev = evaluate(S1, T, SessionConfig(cutoff=3, short_lists="none"))
    # Q1 has 2 results: 2 positions; ideal copy 1 cut to 2 positions
    assert vec(ev) == pytest.approx([0, 50, 50 + 100 * Q2, 50 + 105 * Q2, 50 + 105 * Q2 + Q2 / D3])
    assert vec(ev, "ideal") == pytest.approx(
        [100, 105, 105 + 100 * Q2, 105 + 105 * Q2, 105 + (105 + 1 / D3) * Q2]
    )
    assert ev.per_query()["n_scored"].tolist() == [2, 3]


def test_short_min_pads_to_m() -> None:
    ev = evaluate(S1, T, SessionConfig(cutoff=5, short_lists="min:3"))
    # X = 5, Q1 has 2 results -> max(2, 3) = 3 positions; Q2 has 3 -> 3 positions
    assert ev.per_query()["n_scored"].tolist() == [3, 3]
    assert ev.per_query()["padded"].tolist() == [True, False]
    s = ev.per_session().iloc[0]
    assert s["n_positions"] == 6
    assert s["sdcg"] == pytest.approx(50 + 105 * Q2 + Q2 / D3)


def test_empty_query_pad_vs_none() -> None:
    fr = study({"s": [[], ["a"]]})
    pad = evaluate(fr, T, SessionConfig(cutoff=2))
    none = evaluate(fr, T, SessionConfig(cutoff=2, short_lists="none"))
    # pad: Q1 occupies 2 empty positions; none: Q1 occupies nothing but Q2 is still q = 2
    assert vec(pad) == pytest.approx([0, 0, 100 * Q2, 100 * Q2])
    assert vec(none) == pytest.approx([100 * Q2])


# ---------------------------------------------------------------------------------------------
# scan depth


def test_scan_depth_replace_and_cap() -> None:
    fr = study({"s": [["a", "b", "c"]]}, scan={("s", 1): 1})
    # scan depth 1: only a is scored, 1 position
    for mode in ("replace", "cap"):
        ev = evaluate(fr, T, SessionConfig(cutoff=3, scan_depth=mode))
        assert vec(ev) == pytest.approx([100])
    fr3 = study({"s": [["a", "b", "c"]]}, scan={("s", 1): 3})
    # X = 2: replace uses 3 positions, cap keeps 2
    assert len(vec(evaluate(fr3, T, SessionConfig(cutoff=2, scan_depth="replace")))) == 3
    assert len(vec(evaluate(fr3, T, SessionConfig(cutoff=2, scan_depth="cap")))) == 2


# ---------------------------------------------------------------------------------------------
# ideal rules


def test_ideal_no_repeat_greedy() -> None:
    fr = study({"s": [["z"], ["z"]]})
    ev = evaluate(fr, T, SessionConfig(cutoff=2, ideal="no-repeat"))
    # position weights: (q1,1) 1, (q1,2) 1/2, (q2,1) 2/3, (q2,2) 1/3
    # gains 100, 10, 1 go to weights 1, 2/3, 1/2: positions get (100, 1, 10, 0)
    assert ev.per_position()["ideal"].tolist() == pytest.approx(
        [100, 100.5, 100.5 + 10 * Q2, 100.5 + 10 * Q2]
    )
    rep = evaluate(fr, T, SessionConfig(cutoff=2))
    assert vec(rep, "ideal") == pytest.approx([100, 105, 105 + 100 * Q2, 105 + 105 * Q2])


def test_no_repeat_needs_one_key_per_session() -> None:
    flat = pd.DataFrame(
        {
            "session_id": "s",
            "user_id": "u",
            "topic_id": "T",
            "system_id": "S",
            "query_pos": [1, 2],
            "rank": 1,
            "doc_id": ["a", "b"],
        }
    )
    fr = frame_from_flat(flat).frame
    q = fr.queries.copy()
    q["qrels_id"] = pd.Categorical(["s:1", "s:2"])
    fr2 = type(fr)(sessions=fr.sessions, queries=q, results=fr.results)
    j = qrels([("s:1", "a", 3), ("s:2", "b", 1)])
    # per-turn judgments work with the repeated ideal: each query uses its own key
    ev = evaluate(fr2, j, SessionConfig(cutoff=1))
    assert vec(ev, "ideal") == pytest.approx([100, 100 + 1 * Q2])
    with pytest.raises(MeasureSpecError, match="one judgment key per session"):
        evaluate(fr2, j, SessionConfig(cutoff=1, ideal="no-repeat"))


def test_empty_recall_base_is_nan_or_zero() -> None:
    fr = study({"s": [["a"]]}, topic="U")
    j = qrels([("U", "z", 0)])  # topic U is judged, with no relevant document
    ev = evaluate(fr, j, SessionConfig(cutoff=1))
    assert math.isnan(ev.per_session()["nsdcg"].iloc[0])
    assert ev.n_empty_ideal == 1
    ev0 = evaluate(fr, j, SessionConfig(cutoff=1, empty_ideal="zero"))
    assert ev0.per_session()["nsdcg"].iloc[0] == 0.0
    # without any judgment the topic has no score at all, whatever empty_ideal says
    ps = evaluate(fr, T, SessionConfig(cutoff=1, empty_ideal="zero")).per_session()
    assert ps[["sdcg", "nsdcg"]].isna().all().all()


# ---------------------------------------------------------------------------------------------
# reference values


def test_appendix_example_b4_follows_formula_not_print() -> None:
    # Järvelin et al. 2008 appendix: G' = <3,2,3,0,0,1,2,2,3,0>, b = 4, gains = grades.
    # Formula: <3, 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24, 9.24>; the paper prints
    # 4 and 8.14 at ranks 2 and 8 (slips, spec section 2).
    grades = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
    docs = [f"g{i}" for i in range(10)]
    j = qrels([("T", d, g) for d, g in zip(docs, grades, strict=True)])
    ev = evaluate(study({"s": [docs]}), j, SessionConfig(cutoff=10, b=4, gains="0-1-2-3"))
    assert np.round(vec(ev), 2).tolist() == [
        3,
        4.33,
        6.01,
        6.01,
        6.01,
        6.44,
        7.28,
        8.08,
        9.24,
        9.24,
    ]


def test_one_query_session_is_dcg() -> None:
    ev = evaluate(study({"s": [["z", "c", "a"]]}), T, SessionConfig(cutoff=3))
    dcg = 0 / 1 + 1 / 2 + 100 / D3
    assert ev.per_session()["sdcg"].iloc[0] == pytest.approx(dcg)
    assert ev.per_query()["dcg"].iloc[0] == pytest.approx(dcg)


def test_bq_infinite_is_sum_of_dcgs() -> None:
    ev = evaluate(S1, T, SessionConfig(cutoff=3, bq=math.inf))
    # Q1: 100/2 = 50; Q2: 100 + 10/2 + 1/d(3)
    assert ev.per_session()["sdcg"].iloc[0] == pytest.approx(50 + 105 + 1 / D3)
    assert ev.per_session()["sdcg"].iloc[0] == pytest.approx(ev.per_query()["dcg"].sum())
    # the limit is approached (slowly: qd(2) = 1/(1 + ln 2 / ln bq))
    errs = [
        155 + 1 / D3 - evaluate(S1, T, SessionConfig(cutoff=3, bq=bq)).per_session()["sdcg"][0]
        for bq in (1e3, 1e12, 1e300)
    ]
    assert errs[0] > errs[1] > errs[2] > 0
    assert errs[2] < 2e-3 * 155


def test_jiang_allan_preset_by_hand() -> None:
    # per-session judged pool: a = 2, b = 0, c = 1; exp gains 3, 0, 1
    j = qrels([("s", "a", 2), ("s", "b", 0), ("s", "c", 1)])
    flat = pd.DataFrame(
        {
            "session_id": "s",
            "user_id": "u",
            "topic_id": "T",
            "system_id": "S",
            "query_pos": [1, 1, 2],
            "rank": [1, 2, 1],
            "doc_id": ["a", "b", "c"],
        }
    )
    fr = frame_from_flat(flat).frame
    q = fr.queries.copy()
    q["qrels_id"] = pd.Categorical(["s", "s"])
    fr = type(fr)(sessions=fr.sessions, queries=q, results=fr.results)
    ev = evaluate(fr, j, SessionConfig.preset("jiang-allan-2016"))
    # rank discount 1/log2(r+1); query discount 1/log4(q+3): q=2 -> 1/log4(5) = 0.861353
    qd2 = 1 / math.log(5, 4)
    sdcg = 3 + 0 + qd2 * 1
    ideal_query = 3 + 1 / math.log2(3)  # pool sorted (3, 1, 0)
    s = ev.per_session().iloc[0]
    assert s["sdcg"] == pytest.approx(sdcg)
    assert s["ideal"] == pytest.approx(ideal_query * (1 + qd2))
    assert s["nsdcg"] == pytest.approx(3.861353 / 6.758442, abs=1e-6)
    assert s["sdcg_per_query"] == pytest.approx(sdcg / 2)


def test_summary_first_found_best_last() -> None:
    fr = study({"s": [["z", "c"], ["b", "a"]]})
    ev = evaluate(fr, T, SessionConfig(cutoff=2))
    s = ev.per_session().iloc[0]
    assert (s["first_rel_query"], s["first_rel_rank"]) == (1, 2)  # c at Q1 rank 2
    assert (s["first_hrel_query"], s["first_hrel_rank"]) == (2, 2)  # a at Q2 rank 2
    assert s["n_relevant_found"] == 3
    assert s["n_highly_relevant_found"] == 1
    # DCG_1 = 1/2, DCG_2 = 10 + 100/2 = 60: best = last = Q2
    assert s["best_query_pos"] == 2
    assert s["best_dcg"] == pytest.approx(60)
    assert s["last_sdcg"] == pytest.approx(60 * Q2)
    q = ev.per_query()
    assert q["is_last"].tolist() == [False, True]
    assert q["is_best"].tolist() == [False, True]
    # best by sDCG: Q2 has 40 > 0.5, still Q2
    ev2 = evaluate(fr, T, SessionConfig(cutoff=2, best_by="sdcg"))
    assert ev2.per_session()["best_sdcg"].iloc[0] == pytest.approx(40)


def test_no_relevant_found_is_na() -> None:
    ev = evaluate(study({"s": [["z"]]}), T, SessionConfig(cutoff=1))
    s = ev.per_session().iloc[0]
    assert pd.isna(s["first_rel_query"]) and pd.isna(s["first_hrel_rank"])
    assert s["n_relevant_found"] == 0


def test_searcher_judgments() -> None:
    flat = pd.DataFrame(
        {
            "session_id": "s",
            "user_id": "u",
            "topic_id": "T",
            "system_id": "S",
            "query_pos": 1,
            "rank": [1, 2],
            "doc_id": ["x", "y"],
            "user_grade": [1, 3],
        }
    )
    fr = frame_from_flat(flat).frame
    ev = evaluate(fr, None, SessionConfig(cutoff=2, judgments="searcher"))
    # gains 1, 100 -> 1 + 100/2 = 51; ideal from the searchers' grades: 100 + 1/2
    s = ev.per_session().iloc[0]
    assert s["sdcg"] == pytest.approx(51)
    assert s["ideal"] == pytest.approx(100.5)


def test_per_query_measures_from_registry() -> None:
    ev = evaluate(
        S1, T, SessionConfig(cutoff=3), measures=["DCG(gain=0-1-10-100,discount=jk2008)@2", "RR"]
    )
    q = ev.per_query()
    cols = list(ev.measures)
    assert len(cols) == 2 and all(c in q.columns for c in cols)
    # Q1 (z, a): DCG@2 = 0 + 100/(1 + log2 2) = 50; Q2 (a, b): 100 + 10/2 = 105
    assert q[cols[0]].tolist() == pytest.approx([50, 105])
    # RR: first relevant at rank 2 in Q1, rank 1 in Q2
    assert q[cols[1]].tolist() == pytest.approx([0.5, 1.0])
    with pytest.raises(MeasureSpecError):
        evaluate(S1, T, measures=["NoSuchMeasure@3"])


# ---------------------------------------------------------------------------------------------
# aggregation: hold / active, per-session / of-averages

AB = study({"A": [["a"]], "B": [["z"], ["b"]]})
# X = 1: A: S = (100), I = (100); B: S = (0, 10·2/3), I = (100, 100 + 100·2/3)


def curve(df: pd.DataFrame, measure: str) -> list[float]:
    return df[df["measure"] == measure]["value"].tolist()


def test_curves_hold_per_session() -> None:
    ev = evaluate(AB, T, SessionConfig(cutoff=1))
    df = session_curves(ev)
    # position 1: (100 + 0)/2; position 2: A holds 100 -> (100 + 6.667)/2
    assert curve(df, "sdcg") == pytest.approx([50, (100 + 10 * Q2) / 2])
    # nsDCG: A (1), B (0, 6.667/166.667 = 0.04): (1 + 0)/2, (1 + 0.04)/2
    assert curve(df, "nsdcg") == pytest.approx([0.5, 0.52])
    assert df["n_sessions"].tolist()[:2] == [2, 2]


def test_curves_active() -> None:
    ev = evaluate(AB, T, SessionConfig(cutoff=1))
    df = session_curves(ev, stopped="active")
    assert curve(df, "sdcg") == pytest.approx([50, 10 * Q2])  # only B at position 2
    assert curve(df, "nsdcg") == pytest.approx([0.5, 0.04])
    assert df[df["measure"] == "sdcg"]["n_sessions"].tolist() == [2, 1]


def test_curves_of_averages() -> None:
    ev = evaluate(AB, T, SessionConfig(cutoff=1, normalise="of-averages"))
    df = session_curves(ev)
    # position 2 (hold): mean S = 53.333, mean I = (100 + 166.667)/2 = 133.333 -> 0.4
    assert curve(df, "nsdcg") == pytest.approx([0.5, 0.4])
    act = session_curves(ev, stopped="active")
    assert curve(act, "nsdcg") == pytest.approx([0.5, 0.04])


def test_curves_subsets_and_groups() -> None:
    fr = study({"A": [["a"]], "B": [["z"], ["b"]]}, system={"A": "S1", "B": "S2"})
    ev = evaluate(fr, T, SessionConfig(cutoff=1))
    df = session_curves(ev)
    s1 = df[(df["system_id"] == "S1") & (df["measure"] == "sdcg")]["value"].tolist()
    assert s1 == pytest.approx([100, 100])  # held to the longest session
    sub = session_curves(ev, by=(), min_queries=2)
    assert curve(sub, "sdcg") == pytest.approx([0, 10 * Q2])
    both = session_curves(ev, by=("system_id", "topic_id"))
    assert set(both.columns) == {
        "system_id",
        "topic_id",
        "position",
        "query",
        "measure",
        "value",
        "n_sessions",
    }


def test_individual_curves_held() -> None:
    ev = evaluate(AB, T, SessionConfig(cutoff=1))
    df = individual_curves(ev)
    a = df[(df["session_id"] == "A") & (df["measure"] == "sdcg")]
    assert a["value"].tolist() == [100, 100]
    assert a["stopped"].tolist() == [False, True]


def test_query_curves_last_vs_nonlast() -> None:
    ev = evaluate(AB, T, SessionConfig(cutoff=1))
    df = query_curves(ev, ranks=2)
    sd = df[df["measure"] == "sdcg_q"]
    last = sd[sd["group"] == "last"]["value"].tolist()
    # last: A's Q1 (100, 100) and B's Q2 (10·2/3 at rank 1) -> mean
    assert last == pytest.approx([(100 + 10 * Q2) / 2] * 2)
    assert sd[sd["group"] == "non-last"]["value"].tolist() == [0, 0]
    best = query_curves(ev, ranks=1, compare="best")
    assert set(best["group"]) == {"best", "other"}


# ---------------------------------------------------------------------------------------------
# configuration


def test_config_json_round_trip_and_attached() -> None:
    cfg = SessionConfig(bq=math.inf, short_lists="min:3", gains={0: 0, 1: 2, 2: 5, 3: 9})
    back = SessionConfig.model_validate_json(cfg.model_dump_json())
    assert back == cfg
    ev = evaluate(S1, T, SessionConfig())
    attached = ev.per_session().attrs["config"]
    assert SessionConfig(**json.loads(json.dumps(attached))) == ev.config


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_build(name: str) -> None:
    cfg = SessionConfig.preset(name)
    assert cfg.preset_name == name
    assert SessionConfig.preset(name, cutoff=5).cutoff == 5


@pytest.mark.parametrize(
    "kwargs",
    [
        {"b": 1.0},
        {"bq": 0.5},
        {"cutoff": 0},
        {"short_lists": "pad:3"},
        {"gains": "0-x"},
        {"duplicates": "some"},
    ],
)
def test_bad_config(kwargs: dict) -> None:
    with pytest.raises(ValueError):  # pydantic ValidationError or MeasureSpecError
        SessionConfig(**kwargs)


def test_unknown_preset_lists_known() -> None:
    with pytest.raises(MeasureSpecError, match="jarvelin-2008"):
        SessionConfig.preset("nope")


# ---------------------------------------------------------------------------------------------
# errors


def test_errors_name_the_problem() -> None:
    from sessionval.errors import InputFormatError, JudgmentError

    with pytest.raises(JudgmentError, match="needs judgments"):
        evaluate(S1, None, SessionConfig())
    fr = study({"s": [["a", "unjudged-doc"]]})
    with pytest.raises(JudgmentError, match="unjudged"):
        evaluate(fr, T, SessionConfig(unjudged="error"))
    # queries not grouped by session
    two = study({"s": [["a"], ["b"]], "t": [["c"]]})
    q = two.queries.iloc[[0, 2, 1]].reset_index(drop=True)
    bad = type(two)(sessions=two.sessions, queries=q, results=two.results)
    with pytest.raises(InputFormatError, match="grouped by session"):
        evaluate(bad, T, SessionConfig())


def test_condense_moves_judged_documents_up() -> None:
    fr = study({"s": [["x", "a"]]})  # x is unjudged
    zero = evaluate(fr, T, SessionConfig(cutoff=2))
    cond = evaluate(fr, T, SessionConfig(cutoff=2, unjudged="condense"))
    assert zero.per_session()["sdcg"][0] == pytest.approx(50)  # a at rank 2: 100/2
    assert cond.per_session()["sdcg"][0] == pytest.approx(100)  # a moves to rank 1
    assert cond.per_position()["doc_rank"].tolist()[0] == 2
    assert zero.n_unjudged == 1
    curves = query_curves(cond, ranks=2)
    assert curves[curves["measure"] == "dcg_q"]["value"].tolist() == [100, 100]
