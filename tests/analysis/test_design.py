"""Design detection of a comparison of systems (sessionval.analysis.design)."""

from __future__ import annotations

import pandas as pd
import pytest

from sessionval.analysis.design import detect_design
from sessionval.errors import StatisticsError


def _latin(n_users: int = 4) -> pd.DataFrame:
    """Each searcher uses both systems, each on two of four topics (a Latin square)."""
    rows = []
    for u in range(n_users):
        for k, t in enumerate(["t1", "t2", "t3", "t4"]):
            rows.append((f"u{u}", t, "AB"[(k // 2 + u) % 2], k + 1))
    return pd.DataFrame(rows, columns=["user_id", "topic_id", "system_id", "session_order"])


def test_latin_square_is_within_searchers_with_topic_blocks() -> None:
    d = detect_design(_latin())
    assert (d.design, d.block, d.topics, d.latin_square) == (
        "within",
        "searcher+topic",
        "nested",
        True,
    )
    assert d.description == "4 searchers × 2 systems within searchers, 4 topics in a Latin square"


def test_crossed_topics_within_searchers() -> None:
    ps = pd.DataFrame(
        {"user_id": ["u1"] * 4, "system_id": ["A", "B"] * 2, "topic_id": ["t1", "t1", "t2", "t2"]}
    )
    d = detect_design(ps)
    assert (d.design, d.block, d.topics, d.latin_square) == ("within", "searcher", "crossed", False)


def test_each_searcher_one_system_is_between() -> None:
    ps = pd.DataFrame(
        {"user_id": ["u1", "u2", "u3", "u4"], "system_id": ["A", "A", "B", "B"], "topic_id": "t1"}
    )
    d = detect_design(ps)
    assert (d.design, d.block, d.n_searchers) == ("between", "none", 4)


@pytest.mark.parametrize("searcher", ["system", "absent", "one-per-system"])
def test_runs_are_compared_by_topic(searcher: str) -> None:
    ps = pd.DataFrame({"system_id": ["A", "A", "B", "B"], "topic_id": ["1", "2", "1", "2"]})
    if searcher == "system":
        ps["user_id"] = ps["system_id"]
    elif searcher == "one-per-system":
        ps["user_id"] = ps["system_id"].map({"A": "x", "B": "y"})
    d = detect_design(ps)
    assert (d.design, d.block, d.n_searchers) == ("by_topic", "topic", 0)
    assert d.description == "2 systems compared by topic on 2 topics"


def test_one_system_is_a_log() -> None:
    d = detect_design(pd.DataFrame({"user_id": ["u1"], "system_id": ["A"], "topic_id": ["1"]}))
    assert d.design == "log"
    assert "nothing to compare" in d.description


def test_override_and_its_errors() -> None:
    d = detect_design(_latin(), design="within", block="searcher")
    assert (d.design, d.block, d.overridden) == ("within", "searcher", True)
    with pytest.raises(StatisticsError, match=r"unknown design 'paired'; allowed: auto, within"):
        detect_design(_latin(), design="paired")
    with pytest.raises(StatisticsError, match=r"unknown block 'user'; allowed: auto, searcher"):
        detect_design(_latin(), block="user")
    runs = pd.DataFrame({"system_id": ["A", "B"], "topic_id": ["1", "1"]})
    with pytest.raises(StatisticsError, match="needs searchers"):
        detect_design(runs, design="within")


def _as_categories(ps: pd.DataFrame) -> pd.DataFrame:
    """The id columns as categoricals with an unused category, as a run's table has them."""
    return ps.assign(
        **{
            c: pd.Categorical(ps[c], categories=[*pd.unique(ps[c].dropna()), "unused"])
            for c in ("user_id", "system_id", "topic_id")
        }
    )


@pytest.mark.parametrize(
    "ps",
    [
        _latin(),
        _latin().assign(user_id=lambda d: d["system_id"]),  # each searcher named as its system
        _latin().assign(user_id=lambda d: d["user_id"].where(d["user_id"] != "u1")),  # missing
        pd.DataFrame(  # between: each searcher one system
            {
                "user_id": ["u1", "u1", "u2", "u2", "u3", "u4"],
                "system_id": ["A", "A", "B", "B", "A", "B"],
                "topic_id": ["t1", "t2", "t1", "t2", "t1", "t2"],
            }
        ),
    ],
)
def test_design_read_from_codes_is_the_design_of_the_text(ps: pd.DataFrame) -> None:
    # the cells are told apart by codes, not text: categoricals (unused categories, a
    # searcher named as its system, missing searchers) give the design of the text columns
    from sessionval.analysis.design import design_of_cells

    text = pd.DataFrame(
        {k: ps[c].astype(str) for k, c in (("u", "user_id"), ("s", "system_id"), ("t", "topic_id"))}
    )
    expected = design_of_cells(text.drop_duplicates(), n_sessions=len(ps), has_searcher=True)
    assert detect_design(ps) == expected
    assert detect_design(_as_categories(ps)) == expected


def test_values_of_one_text_are_one_level() -> None:
    # 1 and "1" are one searcher, as their text is
    ps = _latin(2)
    ps["user_id"] = ps["user_id"].map({"u0": 1, "u1": "1"}).astype(object)
    assert detect_design(ps).n_searchers == 1
