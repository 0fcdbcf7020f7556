"""Sessions, their ordered queries and ranked results."""

from __future__ import annotations

from typing import Final, Self

from pydantic import AwareDatetime, Field, ValidationInfo, model_validator

from .._types import DocId, Grade, Identifier, NonNegativeFloat, Position, Rank, Text
from ..rules import check_one_to_n, check_unique_within, scan_depth_fix
from ._base import Model

__all__ = [
    "REPAIR_LATER",
    "Query",
    "Result",
    "Session",
]


#: validation context of a lenient load: a document listed twice in one result list is let
#: through, for the one repair of the flat table (``sessionval.validate.repair``) to fix
REPAIR_LATER: Final = {"repeated_documents": "repair later"}


class Result(Model):
    """One ranked result shown to the searcher.

    ``user_grade`` is the searcher's own relevance judgment, when the study
    recorded one; reference judgments live apart, per topic.
    """

    rank: Rank
    doc_id: DocId
    url: Text | None = None
    title: Text | None = None
    snippet: Text | None = None
    clicks: int = Field(default=0, ge=0)
    dwell: NonNegativeFloat | None = None
    user_grade: Grade | None = None


class Query(Model):
    """One query of a session with its ranked results (possibly none).

    ``scan_depth`` is the last rank the searcher examined, when logged; it may
    replace the fixed top-X of session measures.  ``qrels_id`` names the set of
    reference judgments that applies when judgments are per session or per turn
    (TREC CAsT ``topic_turn``, lab studies); by default the session's topic.
    """

    position: Position
    text: Text = ""
    query_id: str | None = None
    time: AwareDatetime | None = None
    scan_depth: int | None = Field(default=None, ge=0)
    qrels_id: str | None = None
    results: tuple[Result, ...] = ()

    @model_validator(mode="after")
    def _ranked_list(self, info: ValidationInfo) -> Self:
        bad = check_one_to_n([r.rank for r in self.results], what="rank")
        if bad:
            raise ValueError(f"results[{int(bad.rows[0])}].rank: {bad.messages[0]}")
        codes = {d: i for i, d in enumerate(dict.fromkeys(r.doc_id for r in self.results))}
        # a lenient load repairs a repeated document in the flat table (REPAIR_LATER)
        dup = (
            None
            if info.context == REPAIR_LATER
            else check_unique_within([codes[r.doc_id] for r in self.results])
        )
        if dup:
            i = int(dup.rows[0])
            raise ValueError(f"results[{i}].doc_id: {dup.messages[0]} ({self.results[i].doc_id!r})")
        if self.scan_depth is not None and self.scan_depth > len(self.results):
            n = len(self.results)
            raise ValueError(
                f"scan_depth {self.scan_depth} exceeds the number of results ({n}): "
                + scan_depth_fix(n)
            )
        return self


class Session(Model):
    """One searcher's ordered sequence of queries on one topic with one system.

    Queries are stored in position order; positions must be ``1..n`` without gaps.
    ``ratings`` holds post-task questionnaire answers (e.g. ``{"satisfaction": 4}``).
    """

    session_id: Identifier
    user_id: Identifier
    topic_id: Identifier
    system_id: Identifier
    start_time: AwareDatetime | None = None
    end_time: AwareDatetime | None = None
    ratings: dict[str, float] = Field(default_factory=dict)
    queries: tuple[Query, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        bad = check_one_to_n([q.position for q in self.queries], what="query position")
        if bad:
            raise ValueError(f"queries[{int(bad.rows[0])}].position: {bad.messages[0]}")
        if any(
            a.position > b.position for a, b in zip(self.queries, self.queries[1:], strict=False)
        ):
            object.__setattr__(
                self, "queries", tuple(sorted(self.queries, key=lambda q: q.position))
            )
        if self.start_time and self.end_time and self.end_time < self.start_time:
            raise ValueError(f"end_time {self.end_time} is before start_time {self.start_time}")
        return self

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return len(self.queries)

    @property
    def duration(self) -> float | None:
        """Session length in seconds, when both times are known."""
        if self.start_time is None or self.end_time is None:
            return None
        return (self.end_time - self.start_time).total_seconds()
