"""Study-level cross-references: every session's user, topic and system known, topics judged.

Run after the record-level rules of :mod:`sessionval.validate.flat`, once the
study header and the judgments are known.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..errors import raise_if_any
from ..frame import JudgmentFrame, SessionFrame
from ..models.study import Study
from ..problems import LoadReport, Mode, Problem

__all__ = [
    "attach_entities",
    "check_references",
    "drop_sessions",
    "unjudged_keys",
]


def check_references(
    frame: SessionFrame,
    report: LoadReport,
    study: Study,
    judgments: JudgmentFrame | None,
    *,
    source: str,
    mode: Mode,
    max_problems: int,
) -> tuple[SessionFrame, LoadReport]:
    """Check every session's user, topic and system against the header, and topics judged.

    A session whose user, topic or system the header does not list (when it lists
    any), or whose topic has no judgments and is not declared unjudged, is a
    problem: strict mode raises them all, lenient mode drops those sessions and
    adds the problems to the report.

    Returns
    -------
    (SessionFrame, LoadReport)
        The frame without the rejected sessions and the updated report.

    Raises
    ------
    ValidationFailed
        Strict mode and at least one problem.
    """
    s = frame.sessions
    bad = np.zeros(len(s), dtype=bool)
    problems: list[Problem] = []
    for col, known in (
        ("user_id", [u.user_id for u in study.users]),
        ("topic_id", [t.topic_id for t in study.topics]),
        ("system_id", [x.system_id for x in study.systems]),
    ):
        if not known:
            continue
        unknown_mask = ~s[col].isin(known).to_numpy()
        listed = ", ".join(sorted(known)[:12]) + (" …" if len(known) > 12 else "")
        for i in np.flatnonzero(unknown_mask).tolist():
            problems.append(
                Problem(
                    source,
                    f"session {s['session_id'].iloc[i]}",
                    col,
                    f"unknown {col[:-3]} (known in the study header: {listed})",
                    repr(str(s[col].iloc[i])),
                    str(s["session_id"].iloc[i]),
                )
            )
        bad |= unknown_mask
    if judgments is not None:
        judged = set(judgments.topics.astype(str))
        declared = {t.topic_id for t in study.topics if not t.judged}
        keys = frame.queries["qrels_id"].astype(str)
        q_sess = frame.queries["session_id"].cat.codes.to_numpy()
        topic_of_q = s["topic_id"].astype(str).to_numpy()[q_sess]
        # the rule binds the topic's judgments; a query with its own judgment set (a CAsT
        # turn, a lab session) may legitimately have none: it is counted, not rejected
        q_bad = ~keys.isin(judged | declared).to_numpy() & (keys.to_numpy() == topic_of_q)
        sess_bad = np.zeros(len(s), dtype=bool)
        sess_bad[q_sess[q_bad]] = True
        for i in np.flatnonzero(sess_bad & ~bad).tolist():
            key = keys[(q_sess == i) & q_bad].iloc[0]
            problems.append(
                Problem(
                    source,
                    f"session {s['session_id'].iloc[i]}",
                    "topic_id",
                    f"topic {key!r} has no reference judgments in {judgments.source} "
                    "and is not declared "
                    'unjudged (add judgments, or set "judged": false on the topic in study.json)',
                    repr(key),
                    str(s["session_id"].iloc[i]),
                )
            )
        bad |= sess_bad
    if not problems:
        return frame, report
    if mode == "strict":
        raise_if_any(problems, limit=max_problems)
    report = dataclasses.replace(report, problems=[*report.problems, *problems])
    report.sessions_rejected += int(bad.sum())
    report.sessions_accepted -= int(bad.sum())
    return drop_sessions(frame, bad), report


def drop_sessions(frame: SessionFrame, drop: np.ndarray) -> SessionFrame:
    """A frame without the sessions flagged in ``drop`` (boolean per session row)."""
    if not drop.any():
        return frame
    keep_s = ~drop
    q_keep = keep_s[frame.queries["session_id"].cat.codes.to_numpy()]
    r_keep = q_keep[frame.results["query_idx"].to_numpy()]
    new_q_idx = np.cumsum(q_keep) - 1
    names = frame.sessions["session_id"].cat.categories[keep_s]
    cat = pd.CategoricalDtype(names)
    sessions = frame.sessions[keep_s].reset_index(drop=True)
    sessions["session_id"] = sessions["session_id"].astype(str).astype(cat)
    queries = frame.queries[q_keep].reset_index(drop=True)
    queries["session_id"] = queries["session_id"].astype(str).astype(cat)
    results = frame.results[r_keep].reset_index(drop=True)
    results["session_id"] = results["session_id"].astype(str).astype(cat)
    results["query_idx"] = new_q_idx[results["query_idx"].to_numpy()].astype(np.int32)
    return dataclasses.replace(frame, sessions=sessions, queries=queries, results=results)


def attach_entities(frame: SessionFrame, study: Study) -> SessionFrame:
    """Replace the id-only entity tables with the header's attributes where it has them."""
    users, topics, systems = frame.users, frame.topics, frame.systems
    if study.users:
        attrs = pd.DataFrame([{"user_id": u.user_id, **u.attributes} for u in study.users])
        users = users.merge(attrs.astype({"user_id": "string"}), on="user_id", how="left")
    if study.topics:
        t = pd.DataFrame([t.model_dump() for t in study.topics]).astype({"topic_id": "string"})
        topics = topics[["topic_id"]].merge(t, on="topic_id", how="left")
        topics["judged"] = topics["judged"].fillna(True).astype(bool)
        topics[["title", "description"]] = topics[["title", "description"]].fillna("")
    if study.systems:
        x = pd.DataFrame([x.model_dump() for x in study.systems]).astype({"system_id": "string"})
        systems = systems[["system_id"]].merge(x, on="system_id", how="left").fillna("")
    return dataclasses.replace(
        frame,
        users=users,
        topics=topics,
        systems=systems,
        grade_scale=study.user_grade_scale or study.grade_scale,
    )


def unjudged_keys(frame: SessionFrame, judgments: JudgmentFrame | None) -> tuple[str, ...]:
    """Judgment keys (``queries["qrels_id"]``) that have no judgment, in order of first use.

    Examples
    --------
    >>> from sessionval.validate.flat import frame_from_flat
    >>> from sessionval.validate.judgments import judgments_from_records
    >>> flat = pd.DataFrame({"session_id": ["s1", "s2"], "user_id": "u", "topic_id": ["B", "A"],
    ...     "system_id": "S", "query_pos": 1, "rank": 1, "doc_id": "d"})
    >>> unjudged_keys(frame_from_flat(flat).frame, judgments_from_records([("A", "d", 1)]))
    ('B',)
    """
    if judgments is None:
        return ()
    keys = frame.queries["qrels_id"]
    codes = keys.cat.codes.to_numpy()
    used = keys.cat.categories[pd.unique(codes[codes >= 0])].astype(str)
    judged = set(judgments.topics.astype(str))
    return tuple(k for k in used if k not in judged)
