"""The data dictionary of output columns: meaning, unit and the parameters behind each.

One place documents the columns of the evaluation's tables (``per_session``,
``per_query``, ``per_position``: their names and order are
:data:`~sessionval.evaluation.columns.TABLE_COLUMNS`, which the tables are built from,
and :func:`columns_of` pairs each with its entry here) and of the exports (long form
``measure``/``value``, the by-system ``<score>__<system>`` spread, ``rating_*``
families).  The export
codebook and the Stata/SPSS variable labels read it.

Column texts may hold ``{d}`` (the configured rank discount) and ``{qd}`` (the
configured query discount); :func:`describe_column` fills them in from the
configuration, so a preset's formulas are the ones printed.  What each parameter
means is the other half of the dictionary, :mod:`sessionval.output.parameters`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ..errors import MeasureSpecError
from ..evaluation.columns import TABLE_COLUMNS, Level
from ..measures.registry import parse_measure
from .parameters import Parameters, discount_kinds

__all__ = [
    "IDEAL_PARAMETERS",
    "QUERY_PARAMETERS",
    "SESSION_PARAMETERS",
    "ColumnDoc",
    "Level",
    "columns_of",
    "describe_column",
]

#: Parameters behind session measures (``SessionConfig`` field names).
SESSION_PARAMETERS: Final[tuple[str, ...]] = (
    "b",
    "bq",
    "cutoff",
    "gains",
    "discount",
    "query_discount",
    "duplicates",
    "short_lists",
    "scan_depth",
    "judgments",
    "unjudged",
    "negative",
)
#: Parameters behind single-query scores (no query discount, no session policy).
QUERY_PARAMETERS: Final[tuple[str, ...]] = (
    "b",
    "cutoff",
    "gains",
    "discount",
    "judgments",
    "unjudged",
    "negative",
)
#: Parameters behind ideal-normalised session scores.
IDEAL_PARAMETERS: Final[tuple[str, ...]] = (*SESSION_PARAMETERS, "ideal", "empty_ideal")


@dataclass(frozen=True, slots=True)
class ColumnDoc:
    """Meaning of one output column.

    Parameters
    ----------
    label
        Short variable label (at most 80 characters: Stata's limit).
    unit
        Unit or scale of the values (``"gain"``, ``"rank"``, ``"count"``, ``""`` for ids).
    parameters
        Configuration keys the values depend on (``("b", "bq", "cutoff", "gains")``).
    description
        Longer meaning for the codebook.
    """

    label: str
    unit: str
    parameters: tuple[str, ...] = ()
    description: str = ""


_D = ColumnDoc
_SESSION_VECTOR_POSITION = _D(
    "Position in the concatenated session vector",
    "position",
    ("cutoff", "short_lists"),
    "Position p in the concatenated top-X session vector; query ceil(p/X) when padded.",
)
_QUERY_POS = _D(
    "Query position in session", "position (1 = first)", (), "Order of the query in its session."
)
_SDCG_Q = _D(
    "Query-discounted DCG of the query at X, sDCG_q",
    "discounted gain",
    SESSION_PARAMETERS,
    "qd(q) * DCG_q[X] with {qd} and {d}.",
)

_COLUMNS: Final[dict[str, ColumnDoc]] = {
    # identifiers
    "session_id": _D("Session identifier", "", (), "One searcher's session on one topic."),
    "user_id": _D("Searcher identifier", "", (), "The study participant."),
    "topic_id": _D("Topic / scenario", "", (), "Search topic or task scenario."),
    "system_id": _D("System", "", (), "Search system or interface condition."),
    "scenario": _D("Scenario", "", (), "Search task scenario."),
    "query_id": _D("Query identifier", "", (), "Query id from the log (session:pos if absent)."),
    "qrels_id": _D("Judgment set of the query", "", (), "Topic (or session) judgments used."),
    "doc_id": _D("Document identifier", "", (), "The document shown at this position."),
    "text": _D("Query text", "", (), "Query as typed by the searcher."),
    "query_pos": _QUERY_POS,
    "q": _QUERY_POS,
    "rank": _D("Rank in the query's list", "rank (1 = top)", (), "Rank of the result."),
    "doc_rank": _D(
        "Rank of the document in its own list",
        "rank",
        (),
        "Logged rank; differs from the slot rank under duplicates=drop or unjudged=condense.",
    ),
    "pos": _SESSION_VECTOR_POSITION,
    "position": _SESSION_VECTOR_POSITION,
    # counts and flags
    "n_queries": _D("Number of queries in session", "count", (), "Queries the searcher issued."),
    "n_sessions": _D("Number of sessions", "count", (), "Sessions of the searcher."),
    "n_results": _D("Number of results of the query", "count", (), "Results logged."),
    "n_available": _D("Results available in the list", "count", (), ""),
    "n_scored": _D(
        "Ranks of the query scored (top-X after policies)",
        "count",
        ("cutoff", "short_lists", "scan_depth", "duplicates"),
        "",
    ),
    "n_repeats": _D("Results already returned earlier in the session", "count", (), ""),
    "n_positions": _D(
        "Positions in the session vector (n queries x X when padded)",
        "count",
        ("cutoff", "short_lists", "scan_depth"),
        "Length of the concatenated session vector.",
    ),
    "padded": _D(
        "Query list padded to X",
        "0 = no, 1 = yes",
        ("cutoff", "short_lists"),
        "The list was shorter than X and padded with zero gain.",
    ),
    "is_last": _D("Last query of the session", "0 = no, 1 = yes", (), "Query is the last one."),
    "is_best": _D(
        "Best query of the session",
        "0 = no, 1 = yes",
        (*SESSION_PARAMETERS, "best_by"),
        "Query with the highest DCG_q (or sDCG_q, per best_by) at X, the earliest on ties.",
    ),
    "n_relevant_found": _D(
        "Distinct relevant documents found",
        "count",
        ("duplicates", "cutoff"),
        "Distinct documents with grade > 0 in the session's top-X lists.",
    ),
    "n_highly_relevant_found": _D(
        "Distinct highly relevant documents found",
        "count",
        ("duplicates", "cutoff", "high_grade"),
        "Distinct documents of the top grade in the session's top-X lists.",
    ),
    "n_relevant": _D(
        "Relevant documents of the topic (recall base)",
        "count",
        (),
        "Documents judged relevant for the topic.",
    ),
    "best_query_pos": _D("Position of the session's best query", "position", ("cutoff",), ""),
    # judgments and gains
    "grade": _D("Relevance grade", "grade", ("judgments",), "Grade of the result (reference)."),
    "gain": _D(
        "Gain of the result",
        "gain",
        ("gains", "judgments"),
        "Gain of the result's grade under the gain scheme.",
    ),
    # scores
    "qd": _D("Query discount qd(q)", "factor 0-1", ("bq", "query_discount"), "{qd}."),
    "dcg": _D(
        "DCG of the query at X",
        "discounted gain",
        QUERY_PARAMETERS,
        "The query's own DCG at rank X (ranks restart at 1), {d}.",
    ),
    "sdcg_q": _SDCG_Q,
    "ideal_dcg": _D(
        "Ideal DCG at X for the query's topic", "discounted gain", QUERY_PARAMETERS, "{d}."
    ),
    "ndcg": _D(
        "Normalised DCG of the query at X", "ratio 0-1", QUERY_PARAMETERS, "dcg / ideal_dcg."
    ),
    "sdcg": _D(
        "Session DCG at the end of the session, sDCG[nX]",
        "discounted gain",
        SESSION_PARAMETERS,
        "Järvelin et al. 2008 sDCG at the last position of the session, {d}, {qd}.",
    ),
    "nsdcg": _D(
        "Normalised session DCG, nsDCG[nX]",
        "ratio 0-1",
        IDEAL_PARAMETERS,
        "sDCG divided by the ideal session's sDCG at the same position.",
    ),
    "ideal": _D(
        "Ideal session DCG at the same position",
        "discounted gain",
        IDEAL_PARAMETERS,
        "Top-X ideal gains concatenated n times, query-discounted and cumulated ({qd}).",
    ),
    "avg_pos": _D(
        "Mean sDCG over session positions, avg-pos(S, nX)",
        "discounted gain",
        SESSION_PARAMETERS,
        "Average of the session vector over its nX positions.",
    ),
    "avg_pos_sdcg": _D(
        "Mean sDCG over the session's positions, avg-pos(S, nX)",
        "discounted gain",
        SESSION_PARAMETERS,
        "Average of the session vector over its positions.",
    ),
    "avg_pos_nsdcg": _D(
        "Mean nsDCG over the session's positions",
        "ratio 0-1",
        IDEAL_PARAMETERS,
        "Average of the normalised session vector over its positions.",
    ),
    "sdcg_per_query": _D(
        "Final sDCG divided by the number of queries",
        "discounted gain per query",
        SESSION_PARAMETERS,
        "sDCG/#queries, a length-normalised session score used in the literature.",
    ),
    # covariates of a session (sessionval.analysis.covariates)
    "session_start": _D("Session start (UTC)", "time", (), "When the session started, as logged."),
    "session_end": _D("Session end (UTC)", "time", (), "When the session ended, as logged."),
    "duration_s": _D(
        "Session duration in seconds",
        "seconds",
        (),
        "session_end - session_start (missing when either is not logged).",
    ),
    "session_order": _D(
        "Order of the session in the searcher's sequence",
        "position (1 = first)",
        (),
        "The session's place among its searcher's sessions by start time (sessions "
        "without a start time after the timed ones, in input order): learning and "
        "fatigue covariate.",
    ),
    # long form
    "measure": _D("Score name", "", (), "Name of the score in the wide table's columns."),
    "value": _D("Score value", "as the score", (), "Value of the score named in `measure`."),
}

_QUERY_COLUMNS: Final[dict[str, ColumnDoc]] = {
    "sdcg": _SDCG_Q,
    "ideal": _D(
        "Ideal query-discounted DCG at X for this query position",
        "discounted gain",
        IDEAL_PARAMETERS,
        "",
    ),
}

_POSITION_COLUMNS: Final[dict[str, ColumnDoc]] = {
    "rank": _D(
        "Rank inside the query's slot",
        "rank (1 = top)",
        ("cutoff", "short_lists", "duplicates", "unjudged"),
        "The rank the rank discount uses: {d}.",
    ),
    "sdcg": _D(
        "Session DCG at this position, S[p]",
        "discounted gain",
        SESSION_PARAMETERS,
        "Gains to this position, rank- and query-discounted and cumulated: {d}, {qd}.",
    ),
    "ideal": _D(
        "Ideal session DCG at this position, I[p]",
        "discounted gain",
        IDEAL_PARAMETERS,
        "The ideal session's S at the same position.",
    ),
    "nsdcg": _D(
        "Normalised session DCG at this position, S[p]/I[p]",
        "ratio 0-1",
        IDEAL_PARAMETERS,
        "NaN (or 0, per empty_ideal) where the ideal is 0.",
    ),
    "gain": _D(
        "Gain credited at this position",
        "gain",
        ("gains", "judgments", "duplicates"),
        "Gain of the document's grade (0 on padding and on repeats not credited).",
    ),
}

_BY_LEVEL: Final[dict[str, dict[str, ColumnDoc]]] = {
    "query": _QUERY_COLUMNS,
    "position": _POSITION_COLUMNS,
}

# Families of columns (checked in order after the exact names); ``{0}``… are the groups.
_PATTERNS: Final[tuple[tuple[re.Pattern[str], ColumnDoc], ...]] = (
    (
        re.compile(r"^rating_(.+)$"),
        _D(
            "Searcher's post-task rating: {0}",
            "rating scale",
            (),
            "Rating the searcher gave after the task.",
        ),
    ),
    (
        re.compile(r"^user_(.+)$"),
        _D(
            "Searcher attribute: {0}",
            "as in study.json",
            (),
            "Attribute {0} of the searcher, from the study header (study.json users).",
        ),
    ),
    (
        re.compile(r"^(last|best)_(sdcg_q|sdcg)$"),
        _D(
            "sDCG_q at X of the session's {0} query",
            "discounted gain",
            SESSION_PARAMETERS,
            "Query-discounted DCG at X of the {0} query: qd(q) * DCG_q[X], {qd}.",
        ),
    ),
    (
        re.compile(r"^(last|best)_dcg$"),
        _D(
            "DCG at X of the session's {0} query",
            "discounted gain",
            QUERY_PARAMETERS,
            "Undiscounted-by-position DCG at X of the {0} query, {d}.",
        ),
    ),
    (
        re.compile(r"^(last|best)_(nsdcg|ndcg)$"),
        _D("Normalised DCG at X of the session's {0} query", "ratio 0-1", IDEAL_PARAMETERS, ""),
    ),
    (
        re.compile(r"^(last|best)_(query|pos|query_pos)$"),
        _D("Position of the session's {0} query", "position", (), ""),
    ),
    (
        re.compile(r"^first_(rel|relevant)_(query|pos|query_pos)$"),
        _D(
            "Query position of the first relevant result",
            "position",
            ("cutoff",),
            "First query whose top-X list holds a document with grade > 0 (missing: none).",
        ),
    ),
    (
        re.compile(r"^first_(rel|relevant)_rank$"),
        _D("Rank of the first relevant result in that query", "rank", ("cutoff",), ""),
    ),
    (
        re.compile(r"^first_(hrel|highly_relevant)_(query|pos|query_pos)$"),
        _D(
            "Query position of the first highly relevant result",
            "position",
            ("cutoff", "high_grade"),
            "First query whose top-X list holds a document of the top grade (missing: none).",
        ),
    ),
    (
        re.compile(r"^first_(hrel|highly_relevant)_rank$"),
        _D(
            "Rank of the first highly relevant result in that query",
            "rank",
            ("cutoff", "high_grade"),
            "",
        ),
    ),
    (
        re.compile(r"^n?s?dcg(_q)?_?(at_?)?(\d+)$"),
        _D("Score at cut-off {2}", "discounted gain", SESSION_PARAMETERS, ""),
    ),
)

_GENERIC: Final = "(no description)"


def _render(doc: ColumnDoc, groups: Sequence[str | None], formulas: Mapping[str, str]) -> ColumnDoc:
    """Fill the pattern groups and the configured formulas into a column's texts."""
    return ColumnDoc(
        label=doc.label.format(*groups, **formulas)[:80],
        unit=doc.unit,
        parameters=doc.parameters,
        description=doc.description.format(*groups, **formulas),
    )


def _measure_doc(name: str) -> ColumnDoc | None:
    """A column named after a registered measure (``nDCG@10``, ``esNDCG@9``), or None.

    The texts come from the registry (pretty name, description, formula, reference),
    so every canonical measure name is described where the measure is declared; an
    aggregate (``mean(nDCG@10)``) describes the measure inside too.
    """
    try:
        measure = parse_measure(name)
    except MeasureSpecError:
        return None
    d = measure.definition
    text = f"{d.description}: {d.formula} ({d.reference})"
    if measure.inner is not None:
        inner = measure.inner.definition
        text += f"; M = {measure.inner!r}, {inner.description}: {inner.formula} ({inner.reference})"
    session = measure.scope == "session" and measure.inner is None
    return ColumnDoc(
        label=f"{d.pretty}, {measure!r}"[:80],
        unit="score",
        parameters=SESSION_PARAMETERS
        if session
        else ("gains", "judgments", "unjudged", "negative"),
        description=text + ".",
    )


def describe_column(
    name: str, *, level: Level = "session", parameters: Parameters | None = None
) -> ColumnDoc:
    """Return the documentation of an output column (exact name, then families).

    Unknown names get a generic entry naming the column, so a codebook is never
    missing a row.

    Parameters
    ----------
    name
        Column name as written (``"nsdcg"``, ``"rating_satisfaction"``,
        ``"nsdcg__S1"`` of the by-system spread).
    level
        Table the column belongs to: in per-query tables ``sdcg`` is the query's
        own query-discounted DCG (sDCG_q), in per-position tables the session DCG
        ``S[p]`` at that position, in per-session tables the final sDCG.
    parameters
        The configuration whose discount formulas the texts quote (default: the
        defaults of :class:`~sessionval.evaluation.config.SessionConfig`).

    Returns
    -------
    ColumnDoc

    Examples
    --------
    >>> describe_column("nsdcg").unit
    'ratio 0-1'
    >>> describe_column("rating_satisfaction").label
    "Searcher's post-task rating: satisfaction"
    >>> from sessionval.evaluation.config import SessionConfig
    >>> describe_column("qd", parameters=SessionConfig.preset("jiang-allan-2016")).description
    'qd(q) = 1 / log_bq(q + bq - 1).'
    """
    kinds = discount_kinds(parameters if parameters is not None else {})
    formulas = {key: kind.formula for key, kind in kinds.items()}
    if "__" in name:
        base, system = name.split("__", 1)
        inner = describe_column(base, parameters=parameters)
        what = "Number" if base == "n_sessions" else "Mean"
        suffix = f", system {system}"
        head = inner.label
        if len(head) + len(suffix) > 80:  # the system is what tells the columns apart: keep it
            head = head[: max(0, 77 - len(suffix))] + "..."
        return ColumnDoc(
            label=(head + suffix)[:80],
            unit=inner.unit,
            parameters=inner.parameters,
            description=f"{what} of {base} over the searcher's sessions with system "
            f"{system}. {inner.description}".strip(),
        )
    key = name.lower()
    exact = _BY_LEVEL.get(level, {}).get(key) or _COLUMNS.get(key)
    if exact is not None:
        return _render(exact, (), formulas)
    # a canonical measure name: its description is the registry's, never a family's
    measure = _measure_doc(name)
    if measure is not None:
        return measure
    for pattern, doc in _PATTERNS:
        m = pattern.match(key)
        if m is not None:
            return _render(doc, m.groups(), formulas)
    return ColumnDoc(label=name[:80], unit="", parameters=(), description=_GENERIC)


def columns_of(level: Level, *, parameters: Parameters | None = None) -> dict[str, ColumnDoc]:
    """The built-in columns of an evaluation table, in its order, each with its entry.

    Parameters
    ----------
    level
        ``"session"``, ``"query"`` or ``"position"``.
    parameters
        As :func:`describe_column`.

    Examples
    --------
    >>> list(columns_of("position"))[:4]
    ['session_id', 'query_pos', 'rank', 'position']
    """
    return {
        name: describe_column(name, level=level, parameters=parameters)
        for name in TABLE_COLUMNS[level]
    }
