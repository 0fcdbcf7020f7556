"""Other tools' names for the registry's measures: trec_eval's, ir_measures' and ranx's.

trec_eval names a *list* of measures with one word: ``P`` is ``P_5`` ...
``P_1000`` (its default cut-offs), ``P.5,10`` is ``P_5`` and ``P_10``, ``all_trec``
is every measure it prints, and each prints under trec_eval's own name
(``ndcg_cut_10``, ``iprec_at_recall_0.10``).  :class:`TrecEvalNames` expands such a
name into :class:`Named` measures, each with the label trec_eval prints.  ranx and
ir_measures write some variants as names with fixed parameters (ranx's
``ndcg_burges@10`` is ``nDCG(gain=exp)@10``, ``rbp.80`` is ``RBP(p=0.8)``):
:func:`foreign_rewrite` turns them into the grammar's spelling.  The declarations'
:class:`~sessionval.measures.grammar.Spelling` entries are the one source of both.

References: trec_eval 9.0 (``measures.c``: the measures of ``all_trec`` and their
order; ``m_*.c``: default cut-offs); ir_measures (MacAvaney et al. 2022)
[macavaney2022]; ranx (Bassani 2022) [bassani2022].
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from ..errors import MeasureSpecError
from .grammar import Measure, MeasureDef, ParamValue, Spelling, Tool, make, split_spec

__all__ = [
    "ALL_TREC",
    "RUNID",
    "TOOLS",
    "Named",
    "TrecEvalNames",
    "fixed_spellings",
    "foreign_rewrite",
    "spellings_table",
]

TOOLS: Final[tuple[tuple[Tool, str], ...]] = (
    ("trec_eval", "trec_eval / pytrec_eval"),
    ("ir_measures", "ir_measures"),
    ("ranx", "ranx"),
)
"""The tools whose names the table lists, with their column headers."""

RUNID: Final = "runid"
"""trec_eval's ``runid``: the run's tag, printed for ``all``; not a measure."""

ALL_TREC: Final[tuple[str, ...]] = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
    "bpref", "recip_rank", "iprec_at_recall", "P", "recall", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg",
    "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
)  # fmt: skip
"""trec_eval's ``all_trec``, in the order it prints them (trec_eval 9.0.x, as in
pytrec_eval; ``relstring``, a string, is left out)."""

# ``name``, ``name.x``, ``name_x`` or ``name.x,y,...`` (the shortest name leaving a suffix)
_FORM: Final = re.compile(r"([A-Za-z0-9][A-Za-z0-9_]*?)(?:[._](\d[\d.]*(?:,\d[\d.]*)*))?")
_RANX_RBP: Final = re.compile(r"rbp\.(\d+)")


@dataclass(frozen=True)
class Named:
    """A measure and the label it prints under.

    Parameters
    ----------
    measure
        The measure (``None``: trec_eval's ``runid``, the run's tag).
    label
        The name to print: trec_eval's (``P_10``) when asked by trec_eval's name,
        else the canonical name.
    trec_eval
        Whether it was asked by trec_eval's name (printed in trec_eval's layout).
    """

    measure: Measure | None
    label: str
    trec_eval: bool = False


class TrecEvalNames:
    """trec_eval's measure names over a set of declarations.

    Examples
    --------
    >>> from sessionval.measures.registry import REGISTRY
    >>> names = TrecEvalNames(REGISTRY.values())
    >>> [n.label for n in names.expand("P.5,10")]
    ['P_5', 'P_10']
    >>> names.expand("ndcg_cut.10")[0].measure
    nDCG@10
    >>> names.expand("nDCG@10") is None
    True
    """

    def __init__(self, defs: Iterable[MeasureDef]) -> None:
        self.table: dict[str, tuple[MeasureDef, Spelling]] = {
            s.name: (d, s) for d in defs for s in d.spellings if s.tool == "trec_eval"
        }

    def expand(self, spec: str) -> list[Named] | None:
        """The measures trec_eval's name ``spec`` prints; ``None`` when it is not one.

        Raises
        ------
        MeasureSpecError
            A cut-off on a name that takes none, a cut-off below 1, a bad value.
        """
        spec = spec.strip()
        if spec == "all_trec":
            return [n for name in ALL_TREC for n in self.expand(name) or ()]
        if spec == RUNID:
            return [Named(None, RUNID, True)]
        m = _FORM.fullmatch(spec)
        if m is None or m.group(1) not in self.table:
            return None
        defn, sp = self.table[m.group(1)]
        suffix = m.group(2)
        params: dict[str, ParamValue] = dict(sp.params)
        if suffix is None:
            if sp.cutoff != "required":
                return [Named(make(defn, params, None), sp.name, True)]
            if not sp.defaults:
                raise MeasureSpecError(
                    f"trec_eval's {sp.name} needs a cut-off, e.g. {sp.example()}"
                )
            values: list[float] = list(sp.defaults)
        elif sp.cutoff == "none":
            other = next(
                (s for d, s in self.table.values() if d is defn and s.cutoff != "none"), None
            )
            first = suffix.split(",")[0]
            raise MeasureSpecError(
                f"trec_eval's {sp.name} takes no cut-off"
                + (f"; {other.name}.{first} is {defn.name}@{first}" if other else "")
            )
        else:
            values = [self._value(sp, v, spec) for v in suffix.split(",")]
        out = []
        for v in values:
            if sp.at is not None:
                at = {**params, sp.at: defn.param(sp.at).convert(v, measure=defn.name)}
                out.append(Named(make(defn, at, None), sp.label(v), True))
            else:
                out.append(Named(make(defn, params, int(v)), sp.label(v), True))
        return out

    @staticmethod
    def _value(sp: Spelling, text: str, spec: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise MeasureSpecError(f"{spec}: {text!r} is not a number") from None
        if sp.at is None and (not v.is_integer() or v < 1):
            raise MeasureSpecError(f"{spec}: cut-off must be an integer >= 1, got {text!r}")
        return v


def fixed_spellings(
    defs: Iterable[MeasureDef], taken: Mapping[str, object]
) -> dict[str, tuple[MeasureDef, Spelling]]:
    """ranx/ir_measures names that fix parameters (``ndcg_burges``), not names of their own."""
    return {
        s.name: (d, s)
        for d in defs
        for s in d.spellings
        if s.tool != "trec_eval" and s.params and s.name not in taken
    }


def foreign_rewrite(spec: str, fixed: Mapping[str, tuple[MeasureDef, Spelling]]) -> str:
    """``spec`` in the grammar's spelling: ranx's ``rbp.80`` and fixed-parameter names rewritten.

    Examples
    --------
    >>> foreign_rewrite("rbp.95", {})
    'RBP(p=0.95,gain=grade)'
    """
    s = spec.strip()
    rbp = _RANX_RBP.fullmatch(s)
    if rbp is not None:
        return f"RBP(p=0.{rbp.group(1)},gain=grade)"  # ranx's RBP weighs the grade
    try:
        name, inside, cut = split_spec(s)
    except ValueError:
        return s
    if name not in fixed:
        return s
    defn, sp = fixed[name]
    args = [f"{k}={v}" for k, v in sp.params] + ([inside] if inside and inside.strip() else [])
    return f"{defn.name}({','.join(args)})" + (f"@{cut}" if cut is not None else "")


# ---------------------------------------------------------------------------
# the table of names (docs/measures.md)
# ---------------------------------------------------------------------------


def _kinds(d: MeasureDef, sp: Spelling) -> tuple[str, ...]:
    """The forms a spelling writes: ``bare``, with a cut-off ``k``, or a value ``x``."""
    if sp.at is not None or (d.at_param is not None and sp.cutoff != "none"):
        return ("x",)
    return {"none": ("bare",), "required": ("k",), "optional": ("bare", "k")}[sp.cutoff]


def _ours(d: MeasureDef, sp: Spelling, kind: str) -> str:
    """The canonical name of what ``sp`` means in form ``kind`` (``k``/``x`` as placeholders)."""
    given: dict[str, object] = {}
    for n, v in sp.params:  # another tool's parameter means one of ours (dcg=exp-log2: gain)
        given.update(d.translate[n](str(v)) if n in d.translate and n not in _own(d) else {n: v})
    params = {n: d.param(n).convert(v, measure=d.name) for n, v in given.items()}
    if kind == "x":
        at = sp.at or d.at_param or ""
        if at == d.at_param:
            return repr(make(d, {**params, at: 0.5}, None)).replace("@0.5", "@x")
        return repr(make(d, {**params, at: 0.25}, None)).replace("0.25", "x")
    text = repr(make(d, params, 10 if kind == "k" else None))
    return text.replace("@10", "@k") if kind == "k" else text


def _own(d: MeasureDef) -> set[str]:
    return {p.name for p in d.params}


def _written(sp: Spelling, kind: str, fixed: Mapping[str, object]) -> str:
    """How the tool writes it: trec_eval ``P.k``/``P_k``, others ``nDCG(dcg=exp-log2)@k``."""
    implied = sp.name in fixed  # ranx's ndcg_burges: the name fixes the parameters
    args = ",".join(f"{k}={v}" for k, v in sp.params)
    base = sp.name + (f"({args})" if args and not implied else "")
    if kind == "bare":
        return f"`{base}`"
    if sp.tool == "trec_eval":
        return f"`{base}.{kind}`, `{base}_{kind}`"
    return f"`{base}@{kind}`"


def spellings_table(defs: Iterable[MeasureDef], fixed: Mapping[str, object]) -> str:
    """The names other tools give each measure, as a Markdown table, with notes.

    One row per measure and form (bare, with a cut-off ``k`` or a value ``x``); a
    cell lists the names the tool gives exactly that measure.  Every name parses
    to the measure of its row with ``k`` or ``x`` put in
    (``tests/measures/test_names_table.py``).
    """
    lines = [
        "| sessionval | " + " | ".join(label for _, label in TOOLS) + " |",
        "|---|" + "---|" * len(TOOLS),
    ]
    lists: list[str] = []
    for d in defs:
        rows: dict[str, dict[str, list[str]]] = {}
        for sp in d.spellings:
            for kind in _kinds(d, sp):
                cells = rows.setdefault(_ours(d, sp, kind), {})
                cells.setdefault(sp.tool, []).append(_written(sp, kind, fixed))
            if sp.tool == "trec_eval" and sp.defaults:
                shown = ", ".join(f"{v:g}" for v in sp.defaults)
                lists.append(f"`{sp.name}` ({shown})")
        for ours, cells in rows.items():
            row = [", ".join(cells.get(tool, [])) or "-" for tool, _ in TOOLS]
            lines.append(f"| `{ours}` | " + " | ".join(row) + " |")
    notes = [
        f"- `{sp.example()}` ({sp.tool}): {sp.note}." for d in defs for sp in d.spellings if sp.note
    ]
    notes += [
        "- trec_eval's name without a suffix is the list it prints: " + "; ".join(lists) + ". "
        "`all_trec` is all of trec_eval's measures (" + ", ".join(ALL_TREC) + "); `runid` is "
        "the run's tag, printed for `all`.",
        "- ranx's `rbp.NN` is `RBP(p=0.NN,gain=grade)` (ranx weighs each rank by the grade).",
    ]
    return "\n".join([*lines, "", *notes])
