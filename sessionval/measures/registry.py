"""The measure registry: every declaration collected, one grammar for all of them.

Each family module declares its measures with the types of
:mod:`sessionval.measures.grammar` (ir_measures style, one family per file):
:mod:`~sessionval.measures.cg` (CG, DCG, nCG, nDCG), :mod:`~sessionval.measures.precision`
(AP, RR, P, R, bpref, infAP), :mod:`~sessionval.measures.sakai` (Q, O, P, P+, WRR,
NWRR), :mod:`~sessionval.measures.effort` (the adaptive-effort DCG_AE, nDCG_AE, RBP_AE,
P_AE), :mod:`~sessionval.measures.session` (sDCG, nsDCG, sDCG/q and the aggregates
``sum``/``mean``/``max``/``min``/``first``/``last``/``best``),
:mod:`~sessionval.measures.session_models` (esNDCG, esNCG, sRBP) and
:mod:`~sessionval.measures.dynamic_domain` (CT, nCT, ACT, EU).  This module collects
them; the parser, the canonical names, the ``sessionval measures`` listing and
``docs/measures.md`` all come from here.

Names shared with ir_measures mean the same thing there: ``nDCG@10`` is trec_eval's
``ndcg_cut.10`` (gain = grade, discount log2(r + 1)), ``AP`` is ``map``, ``AP@k``
``map_cut.k``, ``RR`` ``recip_rank``, ``P@k`` ``P_k``, ``R@k`` ``recall_k``, ``Bpref``
(alias ``bpref``), ``infAP``, ``ERR@k`` (gdeval), ``RBP(rel=1)`` and ``Judged@k``.
Sakai's P-measure and P+ are ``Pmeasure`` and ``Pplus`` because ``P`` is precision.
The name ``SDCG`` is never used (ir_measures: Scaled DCG).

Names users type elsewhere are accepted and mean exactly what they mean there
(the ``spellings`` of each declaration): trec_eval's
(``map``, ``ndcg_cut.10`` or ``ndcg_cut_10``, ``P.10`` or ``P_10``, ``recip_rank``,
``recall.100``), the lower-case spelling of any single-query name (``ndcg@10``,
``ap``, ``rr``, ``err@20``) and ranx's (``mrr``, ``precision@10``, ``recall@100``,
``map@100``).  :func:`spellings_markdown` renders the table.

Examples
--------
>>> m = parse_measure("nDCG(discount=jk2002, b=4)@10")
>>> m
nDCG(discount=jk2002,b=4)@10
>>> parse_measure(repr(m)) == m
True
>>> parse_measure("nDCG(discount=log2p1)@10")  # defaults are left out
nDCG@10
>>> parse_measure("sDCG(b=2,bq=4)@10")  # session parameters are kept: they override
sDCG(b=2,bq=4)@10
>>> parse_measure("last(nDCG(discount=log2p1)@10)")
last(nDCG@10)
>>> parse_measure("ndcg_cut.10"), parse_measure("P_10"), parse_measure("ndcg@10")
(nDCG@10, P@10, nDCG@10)
>>> parse_measure("nDGC@10")
Traceback (most recent call last):
...
sessionval.errors.MeasureSpecError: unknown measure 'nDGC' ...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..errors import MeasureSpecError
from .cascade import DEFINITIONS as _CASCADE
from .cg import DEFINITIONS as _CG
from .cg_trec import DEFINITIONS as _CG_TREC
from .dynamic_domain import DEFINITIONS as _DYNAMIC_DOMAIN
from .effort import DEFINITIONS as _EFFORT
from .grammar import Measure, MeasureDef, fmt, parse_with
from .names import Named, TrecEvalNames, fixed_spellings, foreign_rewrite, spellings_table
from .precision import DEFINITIONS as _PRECISION
from .recall_points import DEFINITIONS as _RECALL_POINTS
from .sakai import DEFINITIONS as _SAKAI
from .session import DEFINITIONS as _SESSION
from .session_models import DEFINITIONS as _SESSION_MODELS
from .sets import DEFINITIONS as _SETS

__all__ = [
    "REGISTRY",
    "Measure",
    "MeasureDef",
    "Named",
    "describe_measures",
    "measures_markdown",
    "named_measures",
    "parse_measure",
    "parse_measures",
    "registry_table",
    "spellings_markdown",
]

_DEFS: Final[tuple[MeasureDef, ...]] = (
    *_CG,
    *_PRECISION,
    *_SETS,
    *_RECALL_POINTS,
    *_CG_TREC,
    *_CASCADE,
    *_SAKAI,
    *_EFFORT,
    *_SESSION,
    *_SESSION_MODELS,
    *_DYNAMIC_DOMAIN,
)

REGISTRY: Final[dict[str, MeasureDef]] = {d.name: d for d in _DEFS}
"""Canonical name -> declaration."""

_LOOKUP: Final[dict[str, MeasureDef]] = {n: d for d in _DEFS for n in d.names}


def _other_names() -> dict[str, MeasureDef]:
    """Lower-case spellings of single-query names, and ranx's names.

    Not of session measures: ``SDCG`` is ir_measures' Scaled DCG, never ``sDCG``.
    Not the names that fix parameters (ranx's ``ndcg_burges``): :data:`_FIXED`.
    """
    out: dict[str, MeasureDef] = {}
    for d in _DEFS:
        if d.scope != "query":
            continue
        # ir_measures' own names (SetR is R), as written and in lower case
        own = [s.name for s in d.spellings if s.tool == "ir_measures" and not s.params]
        for n in own:
            if n not in _LOOKUP:
                out.setdefault(n, d)
        ranx = (s.name for s in d.spellings if s.tool == "ranx" and not s.params)
        for n in (*d.names, *own, *ranx):
            if n.lower() not in _LOOKUP:
                out.setdefault(n.lower(), d)
    return out


_OTHER_NAMES: Final[dict[str, MeasureDef]] = _other_names()

_TREC_EVAL: Final = TrecEvalNames(_DEFS)
"""trec_eval's names (``ndcg_cut`` -> nDCG with a cut-off; ``P`` -> its default cut-offs)."""

_FIXED: Final = fixed_spellings(_DEFS, _LOOKUP)
"""ranx's and ir_measures' names that fix parameters: ``ndcg_burges`` -> ``nDCG(gain=exp)``."""

_HINT: Final = (
    "; trec_eval names: "
    + ", ".join(s.example(k=10) for _, s in _TREC_EVAL.table.values())
    + ", all_trec"
)


def _parse_one(spec: str) -> Measure:
    return parse_with(foreign_rewrite(spec, _FIXED), _LOOKUP, also=_OTHER_NAMES, hint=_HINT)


def parse_measure(spec: str | Measure) -> Measure:
    """Parse ``Name(param=value,...)@cutoff`` or ``agg(Measure)`` into a :class:`Measure`.

    Parameters
    ----------
    spec
        A measure string (or a measure, returned as is): the grammar's, or the name
        trec_eval, ir_measures or ranx gives it.

    Returns
    -------
    Measure

    Raises
    ------
    MeasureSpecError
        Unknown name or parameter (the message lists the valid ones from the
        registry), bad value, bad or missing cut-off, a parameter the measure does
        not use (``nDCG(b=3)``: ``log2p1`` has no base), a trec_eval name of several
        measures (``P``: use :func:`parse_measures`).

    Examples
    --------
    >>> parse_measure("Q@1000").cutoff
    1000
    >>> parse_measure("bpref")
    Bpref
    >>> parse_measure("map_cut.10"), parse_measure("recip_rank"), parse_measure("ap(rel=2)")
    (AP@10, RR, AP(rel=2))
    >>> parse_measure("IPrec@0.5"), parse_measure("ndcg_burges@10"), parse_measure("rbp.95")
    (IPrec@0.5, nDCG(gain=exp)@10, RBP(p=0.95,gain=grade))
    >>> parse_measure("AP(foo=1)")
    Traceback (most recent call last):
    ...
    sessionval.errors.MeasureSpecError: AP: unknown parameter 'foo'; valid parameters: rel
    >>> parse_measure("nDCG(b=3)@10")
    Traceback (most recent call last):
    ...
    sessionval.errors.MeasureSpecError: nDCG(b=3)@10: b is not used by discount=log2p1; ...
    """
    if isinstance(spec, Measure):
        return spec
    named = _TREC_EVAL.expand(spec)
    if named is None:
        return _parse_one(spec)
    if len(named) == 1 and named[0].measure is not None:
        return named[0].measure
    labels = ", ".join(n.label for n in named[:4]) + (", ..." if len(named) > 4 else "")
    entry = _TREC_EVAL.table.get(spec.strip())
    example = entry[1].example() if entry is not None else "P.10"
    raise MeasureSpecError(
        f"trec_eval's {spec.strip()} is {len(named)} measures ({labels}); parse_measure "
        f"takes one: name one cut-off here, e.g. {example}, or give the name to "
        "parse_measures (or -m), which expands it"
    )


def named_measures(specs: Sequence[str | Measure]) -> list[Named]:
    """Parse several measures with the label each prints under (exact duplicates dropped).

    A trec_eval name expands to the measures trec_eval prints for it, labelled as
    trec_eval labels them (``P`` -> ``P_5`` ... ``P_1000``; ``all_trec``: every
    measure of trec_eval's ``all_trec``, ``runid`` too, whose measure is ``None``);
    any other name is one measure labelled by its canonical name.

    Examples
    --------
    >>> [n.label for n in named_measures(["ndcg_cut.10", "nDCG@10", "success"])]
    ['ndcg_cut_10', 'nDCG@10', 'success_1', 'success_5', 'success_10']
    """
    out: list[Named] = []
    for s in specs:
        if isinstance(s, Measure):
            found = [Named(s, repr(s))]
        else:
            found = _TREC_EVAL.expand(s) or [Named(m := _parse_one(s), repr(m))]
        out += [n for n in found if n not in out]
    return out


def parse_measures(specs: Sequence[str | Measure]) -> list[Measure]:
    """Parse several measures, dropping exact duplicates (first kept)."""
    out: list[Measure] = []
    for n in named_measures(specs):
        if n.measure is not None and n.measure not in out:
            out.append(n.measure)
    return out


def _param_text(d: MeasureDef) -> str:
    return " | ".join(
        (f"{p.name}={fmt(p.default)}" if p.default is not None else p.name) + f": {p.description}"
        for p in d.params
    )


def describe_measures() -> list[dict[str, str]]:
    """One record per registered measure (name, scope, pretty, description, params, ...).

    Used by ``sessionval measures`` and :func:`measures_markdown`.
    """
    return [
        {
            "name": d.signature(),
            "scope": d.scope,
            "pretty": d.pretty,
            "description": d.description,
            "params": _param_text(d),
            "formula": d.formula,
            "reference": d.reference,
            "aliases": ", ".join(d.aliases),
            "normalised": "yes" if d.normalised else "no",
            "example": d.example,
        }
        for d in _DEFS
    ]


def _section(rows: list[dict[str, str]]) -> list[str]:
    lines: list[str] = []
    for row in rows:
        lines += [
            f"### `{row['name']}`: {row['pretty']}",
            "",
            row["description"] + ".",
            "",
            f"- formula: `{row['formula']}`",
            f"- normalised: {row['normalised']}",
            f"- parameters: {row['params'] or 'none'}",
            f"- reference: {row['reference']}",
        ]
        if row["aliases"]:
            lines.append(f"- aliases: {row['aliases']}")
        if row.get("example"):
            lines.append(f"- worked example: {row['example']}")
        lines.append("")
    return lines


def _cell(text: str) -> str:
    """Text for a Markdown table cell (a pipe would end the cell)."""
    return text.replace("|", "\\|")


def registry_table() -> str:
    """The registry as one Markdown table: measure, formula, parameters, reference.

    Examples
    --------
    >>> registry_table().splitlines()[0]
    '| measure | scope | formula | parameters (default) | reference |'
    """
    lines = [
        "| measure | scope | formula | parameters (default) | reference |",
        "|---|---|---|---|---|",
    ]
    for d in _DEFS:
        params = ", ".join(
            f"`{p.name}`" + (f" ({fmt(p.default)})" if p.default is not None else "")
            for p in d.params
        )
        lines.append(
            f"| `{d.signature()}` | {d.scope} | `{_cell(d.formula)}` | {params or '-'} | "
            f"{_cell(d.reference)} |"
        )
    return "\n".join(lines)


def spellings_markdown() -> str:
    """The names other tools give each measure, as a Markdown table (from the registry).

    Every name in the table is accepted by :func:`parse_measure` and means the same
    numbers as in the tool (with the tool's tie order: ``ties="trec_eval"``, the
    default of runs).

    Examples
    --------
    >>> print(next(r for r in spellings_markdown().splitlines() if r.startswith("| `P@k`")))
    | `P@k` | `P.k`, `P_k` | `P@k` | `precision@k` |
    """
    return spellings_table(_DEFS, _FIXED)


def measures_markdown() -> str:
    """Render the measure reference as Markdown (``docs/measures.md`` is this text)."""
    lines = [
        "# Measures",
        "",
        "Generated from the registry (`sessionval.measures.registry`) by",
        "`sessionval measures --format markdown`; do not edit by hand.",
        "",
        "Grammar: `Name(param=value,...)@k`, e.g. `nDCG(discount=jk2002,b=2)@10`, `Q@1000`,",
        "`Bpref`, `sDCG(b=2,bq=4)@10`, and `agg(Measure)` for a per-session aggregate of a",
        "single-query measure, e.g. `last(nDCG@10)`. Only parameters that differ from their",
        "default appear in the canonical name of a single-query measure, so",
        "`nDCG(discount=log2p1)@10` is `nDCG@10`. A parameter the measure does not use is an",
        "error (`nDCG(b=3)@10`: `log2p1` has no base). Names shared with ir_measures mean the",
        "same (trec_eval): `nDCG@10` = `ndcg_cut.10`, `AP` = `map`, `AP@k` = `map_cut.k`,",
        "`RR` = `recip_rank`, `P@k` = `P_k`, `R@k` = `recall_k`, `Bpref` = `bpref`,",
        "`infAP` = `infAP`; trec_eval's names themselves, the lower-case spelling of any",
        "single-query name (`ndcg@10`, `ap`, `rr`) and ir_measures' and ranx's names are",
        "accepted too (table below). A trec_eval name without its suffix is the list",
        "trec_eval prints (`P` is `P_5` ... `P_1000`, `P.5,10` is `P_5` and `P_10`), and",
        "`all_trec` every measure of trec_eval's `all_trec`: `sessionval evaluate` prints",
        "each under trec_eval's name, in trec_eval's layout when every measure is named so.",
        "",
        "Conventions: ranks start at 1; relevant means grade >= `rel` (default 1);",
        "`R` is the recall base size, `N` the judged non-relevant count; `count(r)`",
        "relevant documents in the top r, `cg(r)`/`cg_I(r)` cumulated gain of the list /",
        "of the ideal vector, `r_1` rank of the first relevant document, `r_p` of the",
        "first document of the highest grade retrieved. A *normalised* measure is NaN for",
        "a topic with an empty recall base (counted; `--empty zero` gives 0 as trec_eval).",
        "Unjudged documents have gain 0 (policy `zero`), or are removed (`condense`).",
        "",
        "Gains (`gain=`): `grade` (the grade itself, trec_eval), `0-1-2-3`, `0-1-1-1`,",
        "`0-0-0-1`, `0-1-10-100` (the sDCG paper), `0-1-4-10`, `exp` (2^g - 1), any dash list",
        "of gains for grades 0, 1, 2, ... (`0-2-5`) or a mapping `{0:0,1:1,2:5}`. Negative",
        "grades (TREC -2/-1) are clipped to 0 by default (`--negative keep` sends them",
        "through the gain function, `error` rejects them); bpref and infAP count them as",
        "judged non-relevant.",
        "",
        "Ranking order (`evaluate`, `compare`, `meta`, `evaluate_run`, `from_run`): score",
        "descending, ties by document id descending, compared as bytes (`--ties trec_eval`,",
        "the default: what trec_eval, and so pytrec_eval, ir_measures and gdeval, do), by",
        "document id ascending (`--ties doc_id`) or in file order (`--ties input`). Logs",
        "(`RankedLists.from_frame`) keep their ranks; CAsT runs read as sessions",
        "(`load_cast`) are ordered as trec_eval too. Run topics without",
        "judgments are skipped and counted; `-c` adds judged topics missing from the run as",
        "empty lists (trec_eval `-c`). `sessionval evaluate` and `evaluate_run` score a",
        "judged topic without relevant documents 0, as trec_eval (`--empty nan` leaves it",
        "out of the means).",
        "",
        "Cross-checked to 1e-9 against pytrec_eval (ndcg, ndcg_cut, map, map_cut,",
        "recip_rank, bpref, infAP, P, recall) and pyNTCIREVAL (Q, O, P, P+, AP, RR, nDCG",
        "with the jk2002 discount) in `tests/measures/test_crosscheck.py`, and against",
        "ir_measures (ERR@k through gdeval to its 5 printed decimals, RBP(rel=1) through",
        "cwl_eval, Judged@k) in `tests/measures/test_crosscheck_ir_measures.py`. Every",
        "numeric measure of trec_eval's `all_trec`, under trec_eval's names, against",
        "pytrec_eval per query and over queries in `tests/measures/test_crosscheck_trec_eval.py`;",
        "ir_measures' names (SetP, SetF, NumRel, Success(rel=2)@5, IPrec@0.5, ...) against",
        "ir_measures in `tests/measures/test_names_table.py`.",
        "",
        "Over queries a measure is averaged, except the counts (`NumQ`, `NumRet`, `NumRel`,",
        "`NumRelRet`, `NumNonRelJudgedRet`: summed, as trec_eval) and `GMAP`/`GMBpref`",
        "(per query the log, over queries exp of the mean: trec_eval's `gm_map`).",
        "",
        "Erratum: Järvelin et al. (2008)'s appendix prints DCG' (jk2008, b=4) as",
        "`<3, 4, 5.67, 5.67, 5.67, 6.11, 6.94, 8.14, 9.30, 9.30>`; ranks 2 and 8 are slips,",
        "the formula (implemented) gives `<3, 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24,",
        "9.24>`.",
        "",
        "Defaults: single-query measures follow trec_eval (`discount=log2p1`, `b=2`,",
        "`gain=grade`), and so do `gain_scalar`, `gain_vectors` and",
        "`discounted_cumulated_gain`. Session measures take every parameter they do not",
        "give from the evaluation's `SessionConfig` (defaults: Järvelin et al. 2008, see",
        "`docs/sessions.md`); their canonical name lists exactly the parameters given, and",
        "`@X` sets `cutoff`.",
        "",
        "## The registry",
        "",
        registry_table(),
        "",
        "## Names from trec_eval, ir_measures and ranx",
        "",
        "Each name below is accepted wherever a measure is named and gives the same",
        "numbers as the tool (ranx breaks score ties its own way; the others as trec_eval).",
        "Any single-query name may also be written in lower case (`ndcg@10`, `ap`, `err@20`).",
        "",
        spellings_markdown(),
        "",
        "## Single-query measures",
        "",
        "One value per ranked list (`evaluate_run`, `evaluate_lists`, `sessionval evaluate`,",
        "the `per_query()` table of a session evaluation).",
        "",
    ]
    rows = describe_measures()
    lines += _section([r for r in rows if r["scope"] == "query"])
    lines += [
        "## Session measures",
        "",
        "One value per session (`sessionval.evaluate(frame, judgments, config,",
        "measures=[...])`, a column of `per_session()` named by the canonical name).",
        "`sDCG`, `nsDCG` and `sDCG/q` run the session vectors with the evaluation's",
        "configuration changed by their parameters (`query_discount=none` gives the forms",
        "without query discount); `sum(M)`, `mean(M)`, `max(M)`, `min(M)`, `first(M)`,",
        "`last(M)` and `best(M)` aggregate a single-query measure `M`, computed on each",
        "query's own logged list, over the session's queries; `esNDCG`, `esNCG`, `sRBP`,",
        "`CT`, `nCT`, `ACT` and `EU` read the session positions (the configuration's gains,",
        "duplicate policy and `@X`) chunk by chunk. `docs/session-measures.md` compares them.",
        "",
    ]
    lines += _section([r for r in rows if r["scope"] == "session"])
    return "\n".join(lines)
