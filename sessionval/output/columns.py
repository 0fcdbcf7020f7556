"""The data dictionary: what every output column means, its unit and the parameters behind it.

One place documents the columns of the evaluation's tables (``per_session``,
``per_query``, ``per_position``) and of the exports (long form ``measure``/``value``,
the by-system ``<score>__<system>`` spread, ``rating_*`` families), and one place
says what each parameter of the configuration means.  The export codebook, the
HTML report and the figures' parameter captions all render from here.

Parameter texts come from the configuration itself, never from a copy: a
parameter's meaning is :class:`~sessionval.evaluation.config.SessionConfig`'s field
description; the rank and query discounts print the formula and source of the
*configured* kind from :data:`~sessionval.kernels.discounts.RANK_DISCOUNT_TABLE` /
:data:`~sessionval.kernels.discounts.QUERY_DISCOUNT_TABLE`; gains print the gain
scheme's name and values.  So under ``SessionConfig.preset("jiang-allan-2016")``
the codebook and report show ``qd(q) = 1 / log_bq(q + bq - 1)``, under the defaults
``qd(q) = 1 / (1 + log_bq(q))``.

Column texts may hold ``{d}`` (the configured rank discount) and ``{qd}`` (the
configured query discount); :func:`describe_column` fills them in.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from ..errors import MeasureSpecError
from ..evaluation.config import SessionConfig
from ..judgments.gains import GainScheme
from ..kernels.discounts import QUERY_DISCOUNT_TABLE, RANK_DISCOUNT_TABLE, DiscountKind
from ..measures.registry import parse_measure

__all__ = [
    "IDEAL_PARAMETERS",
    "PARAMETER_SYMBOLS",
    "QUERY_PARAMETERS",
    "SESSION_PARAMETERS",
    "ColumnDoc",
    "Level",
    "ParameterDoc",
    "Parameters",
    "configuration",
    "describe_column",
    "discount_kinds",
    "format_value",
    "parameter_docs",
    "parameter_meaning",
    "params_text",
    "render_parameters",
]

#: The table a column belongs to: some names mean different things per table
#: (``sdcg`` is the session's final sDCG, the query's sDCG_q or S[p] at a position).
Level: TypeAlias = Literal["session", "query", "position"]

#: A configuration: the model itself, or a mapping of (some of) its fields (``model_dump()``).
Parameters: TypeAlias = SessionConfig | Mapping[str, object]

#: Parameters behind session measures (:class:`SessionConfig` field names).
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

#: How a parameter is printed where the papers use a symbol (the cut-off is X).
PARAMETER_SYMBOLS: Final[dict[str, str]] = {"cutoff": "X"}

# Meanings of the fields SessionConfig leaves without a description (its own
# ``Field(description=...)`` wins as soon as it has one).
_FIELD_FALLBACK: Final[dict[str, str]] = {
    "negative": "negative grades: clip to 0, keep, or error",
    "unjudged": "unjudged documents: gain 0, condensed out, or error",
    "discount": "rank discount",
    "query_discount": "query discount",
    "duplicates": "a document returned again later: every time, first time only, dropped",
    "ideal": "how the ideal session is built",
    "normalise": "normalise each session then average, or divide averages",
    "stopped": "sessions of different lengths: hold the last value, or only active ones",
}


# ---------------------------------------------------------------------------------------------
# parameters


def configuration(parameters: Parameters) -> SessionConfig:
    """The typed configuration behind ``parameters`` (fields not given take their defaults).

    Keys that are not :class:`SessionConfig` fields (notes, figure settings) are
    ignored; the rest is validated like a new configuration.

    Examples
    --------
    >>> configuration({"b": 4, "cutoff": 5, "note": "ignored"}).b
    4.0
    """
    if isinstance(parameters, SessionConfig):
        return parameters
    known = {k: v for k, v in parameters.items() if k in SessionConfig.model_fields}
    return SessionConfig.model_validate(known)


def _with_source(kind: DiscountKind) -> str:
    return f"{kind.formula} ({kind.reference})" if kind.reference else kind.formula


def discount_kinds(parameters: Parameters) -> dict[str, DiscountKind]:
    """The configured rank discount ``"d"`` and query discount ``"qd"`` (formula and source).

    Examples
    --------
    >>> discount_kinds({})["qd"].formula
    'qd(q) = 1 / (1 + log_bq(q))'
    >>> discount_kinds(SessionConfig.preset("jiang-allan-2016"))["d"].formula
    'd(i) = log_b(i + b - 1)'
    """
    cfg = configuration(parameters)
    # bq = inf turns the query discount off whatever its kind
    query_kind = "none" if math.isinf(cfg.bq) else cfg.query_discount
    return {"d": RANK_DISCOUNT_TABLE[cfg.discount], "qd": QUERY_DISCOUNT_TABLE[query_kind]}


def _scheme_text(scheme: GainScheme) -> str:
    if scheme.kind == "exp":
        return f"{scheme.name}: gain = 2^grade - 1"
    if scheme.kind == "grade":
        return f"{scheme.name}: gain = grade"
    values = ", ".join(f"{g} -> {format_value(v)}" for g, v in scheme.mapping)
    return f"{scheme.name} (grade {values})"


def parameter_meaning(name: str, parameters: Parameters) -> str:
    """What parameter ``name`` means under the given configuration.

    The field's description, and for the discounts and gains the configured
    formula or scheme; ``""`` for a name that is not a configuration field.

    Examples
    --------
    >>> parameter_meaning("bq", {})
    'log base of the query discount (inf: none): qd(q) = 1 / (1 + log_bq(q)) (...)'
    >>> parameter_meaning("gains", {"gains": "0-1-10-100"})
    'gain scheme: 0-1-10-100 (grade 0 -> 0, 1 -> 1, 2 -> 10, 3 -> 100)'
    """
    field = SessionConfig.model_fields.get(name)
    if field is None:
        return ""
    base = field.description or _FIELD_FALLBACK.get(name, "")
    cfg = configuration(parameters)
    kinds = discount_kinds(cfg)
    d, qd = _with_source(kinds["d"]), _with_source(kinds["qd"])
    detail = {
        "b": d,
        "discount": f"{cfg.discount}, {d}",
        "bq": qd,
        "query_discount": f"{cfg.query_discount}, {qd}",
        "gains": _scheme_text(cfg.scheme()),
    }.get(name)
    return f"{base}: {detail}" if detail else base


@dataclass(frozen=True, slots=True)
class ParameterDoc:
    """One parameter as the report and codebook print it."""

    name: str
    symbol: str
    value: str
    meaning: str


def parameter_docs(parameters: Parameters) -> list[ParameterDoc]:
    """Every given parameter with its printed value and meaning, in the given order.

    Examples
    --------
    >>> [(p.symbol, p.value) for p in parameter_docs({"b": 2.0, "cutoff": 10})]
    [('b', '2'), ('X', '10')]
    """
    values = parameters.model_dump() if isinstance(parameters, SessionConfig) else parameters
    cfg = configuration(parameters)
    return [
        ParameterDoc(
            name=k,
            symbol=PARAMETER_SYMBOLS.get(k, k),
            value=format_value(v),
            meaning=parameter_meaning(k, cfg),
        )
        for k, v in values.items()
    ]


def format_value(v: object) -> str:
    """A parameter value as printed: integral floats without ``.0``, mappings as ``{k: v}``.

    Examples
    --------
    >>> format_value(2.0), format_value(1.5), format_value({0: 0.0, 1: 2.5}), format_value(None)
    ('2', '1.5', '{0: 0, 1: 2.5}', 'None')
    """
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}: {format_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list | tuple):
        return ", ".join(format_value(x) for x in v)
    return str(v)


def render_parameters(keys: Sequence[str], parameters: Mapping[str, object]) -> str:
    """``key=value`` of the given keys present in ``parameters`` (the codebook's column).

    Examples
    --------
    >>> render_parameters(("b", "bq", "cutoff", "ideal"), {"b": 2.0, "bq": 4.0, "cutoff": 10})
    'b=2, bq=4, X=10'
    """
    return ", ".join(
        f"{PARAMETER_SYMBOLS.get(k, k)}={format_value(parameters[k])}"
        for k in keys
        if k in parameters
    )


def params_text(params: Mapping[str, object]) -> str:
    """The parameters behind a figure, as the papers print them (the figures' caption).

    ``b``, ``bq``, ``X`` (``cutoff``) and the gain scheme when given, then the rank
    and query discounts and the duplicate policy when they differ from the defaults.

    Parameters
    ----------
    params
        Configuration values (``SessionConfig.model_dump()`` or a subset);
        ``cutoff`` is printed as ``X``.

    Returns
    -------
    str

    Examples
    --------
    >>> params_text({"b": 2.0, "bq": 4.0, "cutoff": 10, "gains": "0-1-10-100"})
    'b=2; bq=4; X=10; gains 0-1-10-100'
    >>> params_text(SessionConfig.preset("jiang-allan-2016").model_dump())
    'b=2; bq=4; X=10; gains exp; discount shifted-log; query_discount shifted-log'
    """
    parts: list[str] = []
    for key in ("b", "bq", "cutoff"):
        if params.get(key) is not None:
            parts.append(f"{PARAMETER_SYMBOLS.get(key, key)}={format_value(params[key])}")
    if "gains" in params:
        parts.append(f"gains {configuration({'gains': params['gains']}).scheme().name}")
    for key in ("discount", "query_discount", "duplicates"):
        value = params.get(key)
        if value is not None and value != SessionConfig.model_fields[key].default:
            parts.append(f"{key} {value}")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------------
# columns


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
    """A per-query column named after a registered measure (``nDCG@10``), or None."""
    try:
        measure = parse_measure(name)
    except MeasureSpecError:
        return None
    d = measure.definition
    return ColumnDoc(
        label=f"{d.pretty}, {measure!r}"[:80],
        unit="score",
        parameters=("gains", "judgments", "unjudged", "negative"),
        description=f"{d.description}: {d.formula} ({d.reference}).",
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
        defaults of :class:`SessionConfig`).

    Returns
    -------
    ColumnDoc

    Examples
    --------
    >>> describe_column("nsdcg").unit
    'ratio 0-1'
    >>> describe_column("rating_satisfaction").label
    "Searcher's post-task rating: satisfaction"
    >>> describe_column("qd", parameters=SessionConfig.preset("jiang-allan-2016")).description
    'qd(q) = 1 / log_bq(q + bq - 1).'
    """
    kinds = discount_kinds(parameters if parameters is not None else {})
    formulas = {key: kind.formula for key, kind in kinds.items()}
    if "__" in name:
        base, system = name.split("__", 1)
        inner = describe_column(base, parameters=parameters)
        what = "Number" if base == "n_sessions" else "Mean"
        return ColumnDoc(
            label=f"{inner.label}, system {system}"[:80],
            unit=inner.unit,
            parameters=inner.parameters,
            description=f"{what} of {base} over the searcher's sessions with system "
            f"{system}. {inner.description}".strip(),
        )
    key = name.lower()
    exact = _BY_LEVEL.get(level, {}).get(key) or _COLUMNS.get(key)
    if exact is not None:
        return _render(exact, (), formulas)
    for pattern, doc in _PATTERNS:
        m = pattern.match(key)
        if m is not None:
            return _render(doc, m.groups(), formulas)
    measure = _measure_doc(name)
    if measure is not None:
        return measure
    return ColumnDoc(label=name[:80], unit="", parameters=(), description=_GENERIC)
