from __future__ import annotations

import pytest
from pydantic import ValidationError

from sessionval import GradeScale, Query, Result, Session, Study, Topic
from sessionval.models import Judgment
from sessionval.validate.judgments import judgments_from_records


def _q(pos: int, docs: list[str]) -> Query:
    return Query(
        position=pos, results=tuple(Result(rank=i + 1, doc_id=d) for i, d in enumerate(docs))
    )


def test_frozen_and_extra_forbid():
    r = Result(rank=1, doc_id="d")
    with pytest.raises(ValidationError):
        r.rank = 2  # type: ignore[misc]
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Result(rank=1, doc_id="d", bogus=1)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("ranks", "message"),
    [
        ([1, 3], "rank 3 leaves a gap: expected 2"),
        ([1, 1], "rank 1 appears twice"),
        ([2, 3], "rank 2 leaves a gap: expected 1"),
    ],
)
def test_ranks_one_to_k(ranks, message):
    with pytest.raises(ValidationError, match=message):
        Query(position=1, results=[Result(rank=r, doc_id=f"d{r}{i}") for i, r in enumerate(ranks)])


def test_rank_must_be_positive():
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        Result(rank=0, doc_id="d")


def test_document_once_per_list():
    with pytest.raises(ValidationError, match=r"document occurs more than once.*'d1'"):
        Query(position=1, results=[Result(rank=1, doc_id="d1"), Result(rank=2, doc_id="d1")])


def test_positions_without_gaps_and_sorted():
    with pytest.raises(ValidationError, match="query position 3 leaves a gap: expected 2"):
        Session(
            session_id="s", user_id="u", topic_id="t", system_id="S", queries=[_q(1, []), _q(3, [])]
        )
    s = Session(
        session_id="s",
        user_id="u",
        topic_id="t",
        system_id="S",
        queries=[_q(2, ["b"]), _q(1, ["a"])],
    )
    assert [q.position for q in s.queries] == [1, 2]


def test_session_needs_a_query_and_ordered_times():
    with pytest.raises(ValidationError, match="at least 1 item"):
        Session(session_id="s", user_id="u", topic_id="t", system_id="S", queries=[])
    with pytest.raises(ValidationError, match="before start_time"):
        Session(
            session_id="s",
            user_id="u",
            topic_id="t",
            system_id="S",
            queries=[_q(1, [])],
            start_time="2020-01-01T10:00:00Z",
            end_time="2020-01-01T09:00:00Z",
        )


def test_scan_depth_bounded_by_results():
    with pytest.raises(ValidationError, match="scan_depth 3 exceeds the number of results \\(2\\)"):
        Query(
            position=1,
            scan_depth=3,
            results=[Result(rank=1, doc_id="a"), Result(rank=2, doc_id="b")],
        )


def test_grade_scale():
    scale = GradeScale.default()
    assert scale.grades == (0, 1, 2, 3)
    with pytest.raises(
        ValueError, match=r"grade 4 is not on the grade scale \(allowed: 0, 1, 2, 3\)"
    ):
        scale.check(4)


def test_study_grades_inside_scale_and_topics_judged():
    s = Session(session_id="s", user_id="u", topic_id="T", system_id="S", queries=[_q(1, ["a"])])
    with pytest.raises(ValidationError, match="grade 7 is not on the scale"):
        Study(sessions=(s,), judgments=(Judgment(topic_id="T", doc_id="a", grade=7),))
    with pytest.raises(
        ValidationError, match="topic 'X' has no judgments and is not declared unjudged"
    ):
        Study(
            sessions=(s.model_copy(update={"topic_id": "X"}),),
            judgments=(Judgment(topic_id="T", doc_id="a", grade=1),),
        )
    ok = Study(
        topics=(Topic(topic_id="X", judged=False), Topic(topic_id="T")),
        sessions=(s.model_copy(update={"topic_id": "X"}),),
        judgments=(Judgment(topic_id="T", doc_id="a", grade=1),),
    )
    assert ok.sessions[0].topic_id == "X"


def test_study_rejects_duplicate_ids_and_unknown_references():
    s = Session(session_id="s", user_id="u", topic_id="T", system_id="S", queries=[_q(1, ["a"])])
    with pytest.raises(ValidationError, match="duplicate session id 's'"):
        Study(sessions=(s, s))
    with pytest.raises(ValidationError, match="unknown topic 'T'"):
        Study(topics=(Topic(topic_id="other"),), sessions=(s,))


def test_user_grade_on_scale():
    q = Query(position=1, results=[Result(rank=1, doc_id="a", user_grade=5)])
    s = Session(session_id="s", user_id="u", topic_id="T", system_id="S", queries=[q])
    with pytest.raises(ValidationError, match="user_grade 5 is not on the scale"):
        Study(sessions=(s,))


def test_round_trip_json():
    s = Session(
        session_id="s",
        user_id="u",
        topic_id="T",
        system_id="S",
        ratings={"satisfaction": 4},
        queries=[_q(1, ["a", "b"]), _q(2, [])],
    )
    assert Session.model_validate_json(s.model_dump_json()) == s


def test_docs_frame_md_is_generated_from_the_schema():
    from pathlib import Path

    from sessionval.frame import frame_schema_markdown

    committed = (Path(__file__).resolve().parents[2] / "docs" / "frame.md").read_text()
    assert committed == frame_schema_markdown(), "regenerate docs/frame.md (see its header)"


def test_docs_formats_md_flat_layout_is_generated_from_flat_columns():
    import re
    from pathlib import Path

    from sessionval.frame import flat_layout_markdown

    text = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text()
    section = re.search(
        r"<!-- flat-layout:begin[^\n]*-->\n(.*?)\n<!-- flat-layout:end -->", text, re.S
    )
    assert section is not None, "docs/formats.md lost its flat-layout markers"
    assert section.group(1) == flat_layout_markdown(), "regenerate the table (see its marker)"


def test_judgment_frame_from_records():
    from sessionval import JudgmentError

    jf = judgments_from_records(
        [("T", "a", 3), ("T", "b", 0, "expert")], scale=GradeScale.default()
    )
    assert jf.table["assessor"].astype(str).tolist() == ["", "expert"]
    assert str(jf.table["grade"].dtype) == "int16"
    with pytest.raises(JudgmentError, match=r"\(record 1\): grade: not on the scale 'graded 0-3'"):
        judgments_from_records([("T", "a", 3), ("T", "b", 7)], scale=GradeScale.default())
