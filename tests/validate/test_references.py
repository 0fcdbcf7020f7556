from __future__ import annotations

import pytest

from sessionval.errors import ValidationFailed
from sessionval.models import Study, Topic, User
from sessionval.validate.flat import frame_from_flat
from sessionval.validate.references import check_references, unjudged_keys
from tests import builders


def two_sessions():
    flat = builders.small_flat(user_id=["u1", "u1", "u1", "u2"], topic_id=["B", "B", "B", "A"])
    loaded = frame_from_flat(flat)
    return loaded.frame, loaded.report


def test_unjudged_keys_in_order_of_first_use():
    frame, _ = two_sessions()
    assert unjudged_keys(frame, None) == ()
    assert unjudged_keys(frame, builders.judgments([("X", "a", 1)])) == ("B", "A")
    assert unjudged_keys(frame, builders.judgments([("B", "a", 1)])) == ("A",)


def test_check_references_strict_and_lenient():
    frame, report = two_sessions()
    study = Study(users=(User(user_id="u1"),), topics=(Topic(topic_id="A"), Topic(topic_id="B")))
    kw = {"source": "t", "max_problems": 10}
    with pytest.raises(ValidationFailed, match="unknown user"):
        check_references(frame, report, study, None, mode="strict", **kw)
    kept, after = check_references(frame, report, study, None, mode="lenient", **kw)
    assert kept.sessions["session_id"].astype(str).tolist() == ["s1"]
    assert (after.sessions_accepted, after.sessions_rejected) == (1, 1)
    assert [p.record for p in after.problems] == ["s2"]


def test_check_references_topic_without_judgments():
    frame, report = two_sessions()
    study = Study(topics=(Topic(topic_id="A", judged=False), Topic(topic_id="B")))
    j = builders.judgments([("A", "a", 1)])
    with pytest.raises(ValidationFailed, match="topic 'B' has no reference judgments"):
        check_references(frame, report, study, j, source="t", mode="strict", max_problems=10)
