"""The measure registry and its grammar: ``Name(param=value,...)@cutoff``.

Every single-query measure is declared once here with its parameters (typed, with
defaults), a one-line description, its formula and its reference; the parser, the
canonical names, the ``sessionval measures`` listing and ``docs/measures.md`` are all
generated from these declarations.

Names shared with ir_measures mean the same thing there: ``nDCG@10`` is trec_eval's
``ndcg_cut.10`` (gain = grade, discount log2(r + 1)), ``AP`` is ``map``, ``AP@k``
``map_cut.k``, ``RR`` ``recip_rank``, ``P@k`` ``P_k``, ``R@k`` ``recall_k``, ``Bpref``
(alias ``bpref``) and ``infAP``.  Sakai's P-measure and P+ are ``Pmeasure`` and ``Pplus``
because ``P`` is precision.  The name ``SDCG`` is never used (ir_measures: Scaled DCG).

Examples
--------
>>> m = parse_measure("nDCG(discount=jk2002, b=4)@10")
>>> m
nDCG(discount=jk2002,b=4)@10
>>> parse_measure(repr(m)) == m
True
>>> parse_measure("nDCG(discount=log2p1,b=2)@10")  # defaults are left out
nDCG@10
>>> parse_measure("nDGC@10")
Traceback (most recent call last):
...
sessionval.errors.MeasureSpecError: unknown measure 'nDGC' ...
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

import numpy as np

from .._types import FloatArray
from ..errors import MeasureSpecError
from ..judgments.gains import gain_scheme
from ..kernels.discounts import RANK_DISCOUNTS, RankDiscount
from .cg import gain_scalar
from .lists import EmptyPolicy, RankedLists
from .precision import average_precision, bpref, inf_ap, precision, recall, reciprocal_rank
from .sakai import _penalties, nwrr, o_measure, p_measure, p_plus, q_measure, wrr

__all__ = [
    "REGISTRY",
    "Compute",
    "Measure",
    "MeasureDef",
    "Param",
    "ParamValue",
    "describe_measures",
    "measures_markdown",
    "parse_measure",
    "parse_measures",
]

ParamValue: TypeAlias = "float | int | str"
Compute: TypeAlias = Callable[..., FloatArray]


@dataclass(frozen=True)
class Param:
    """One measure parameter: name, type, default, allowed values, meaning."""

    name: str
    kind: Literal["float", "int", "str"]
    default: float | int | str
    description: str
    choices: tuple[str, ...] = ()
    check: Callable[[Any], str | None] | None = field(default=None, compare=False)

    def convert(self, raw: object, *, measure: str) -> float | int | str:
        """Validate and normalise a value (from the grammar or from Python)."""
        try:
            if self.kind == "float":
                v: float | int | str = float(raw)  # type: ignore[arg-type]
                if not math.isfinite(float(v)):
                    raise ValueError
            elif self.kind == "int":
                fv = float(raw)  # type: ignore[arg-type]
                if not fv.is_integer():
                    raise ValueError
                v = int(fv)
            else:
                v = str(raw).strip()
        except (TypeError, ValueError):
            raise MeasureSpecError(
                f"{measure}: parameter {self.name}={raw!r} is not a valid {self.kind}"
            ) from None
        if self.choices and v not in self.choices:
            raise MeasureSpecError(
                f"{measure}: {self.name}={v!r} is not allowed; valid values: "
                + ", ".join(self.choices)
            )
        if self.check is not None:
            problem = self.check(v)
            if problem:
                raise MeasureSpecError(f"{measure}: {self.name}={raw!r}: {problem}")
        return v


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    return str(v)


@dataclass(frozen=True)
class MeasureDef:
    """The declaration of one measure.

    Parameters
    ----------
    name
        Canonical name in the grammar.
    pretty
        Human name.
    description
        One line.
    formula
        The formula as plain text.
    reference
        Citation key(s) and section.
    params
        Typed parameters (besides the cut-off).
    compute
        ``compute(lists, *, cutoff, empty, **params) -> float per list``.
    cutoff
        ``"optional"`` or ``"required"``.
    normalised
        Divides by an ideal/recall-base quantity: NaN (or 0) on an empty recall base.
    upper
        Upper bound under default parameters (None: unbounded).
    ideal_is_one
        The ideal ranking scores 1 (without a cut-off).
    aliases
        Other names the parser accepts.
    """

    name: str
    pretty: str
    description: str
    formula: str
    reference: str
    params: tuple[Param, ...]
    compute: Compute
    cutoff: Literal["optional", "required"] = "optional"
    normalised: bool = True
    upper: float | None = 1.0
    ideal_is_one: bool = True
    aliases: tuple[str, ...] = ()

    def param(self, name: str) -> Param:
        """Return the parameter called ``name``; the error lists the valid ones."""
        for p in self.params:
            if p.name == name:
                return p
        valid = ", ".join(p.name for p in self.params) or "none"
        raise MeasureSpecError(
            f"{self.name}: unknown parameter {name!r}; valid parameters: {valid}"
        )


@dataclass(frozen=True, eq=False)
class Measure:
    """A measure with its parameters and cut-off; ``repr`` is the canonical name.

    Equality and hashing use the canonical name, so ``nDCG@10`` equals
    ``nDCG(discount=log2p1)@10``.
    """

    definition: MeasureDef
    params: tuple[tuple[str, float | int | str], ...]
    cutoff: int | None = None

    @property
    def name(self) -> str:
        """The measure's registry name."""
        return self.definition.name

    def value(self, name: str) -> float | int | str:
        """Value of parameter ``name`` (its default when not given)."""
        for k, v in self.params:
            if k == name:
                return v
        return self.definition.param(name).default

    def __repr__(self) -> str:
        non_default = [
            f"{p.name}={_fmt(self.value(p.name))}"
            for p in self.definition.params
            if self.value(p.name) != p.default
        ]
        s = self.name + (f"({','.join(non_default)})" if non_default else "")
        return s + (f"@{self.cutoff}" if self.cutoff is not None else "")

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Measure):
            return repr(self) == repr(other)
        if isinstance(other, str):
            try:
                return repr(self) == repr(parse_measure(other))
            except MeasureSpecError:
                return False
        return NotImplemented

    def __hash__(self) -> int:
        return hash(repr(self))

    def __call__(self, **params: object) -> Measure:
        """Return a copy with some parameters changed: ``nDCG(discount="jk2002")``."""
        merged = dict(self.params)
        for k, v in params.items():
            merged[k] = self.definition.param(k).convert(v, measure=self.name)
        return _make(self.definition, merged, self.cutoff)

    def __matmul__(self, k: int) -> Measure:
        """Return a copy with cut-off ``k``: ``nDCG @ 10``."""
        return _make(self.definition, dict(self.params), _check_cutoff(k, self.name))

    def compute(self, lists: RankedLists, *, empty: EmptyPolicy = "nan") -> FloatArray:
        """One value per list of ``lists``."""
        kwargs = {p.name: self.value(p.name) for p in self.definition.params}
        return self.definition.compute(lists, cutoff=self.cutoff, empty=empty, **kwargs)


def _check_cutoff(k: object, name: str) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or int(k) < 1:
        raise MeasureSpecError(f"{name}: cut-off must be an integer >= 1, got {k!r}")
    return int(k)


def _make(defn: MeasureDef, params: Mapping[str, float | int | str], cutoff: int | None) -> Measure:
    if defn.cutoff == "required" and cutoff is None:
        raise MeasureSpecError(f"{defn.name} needs a cut-off, e.g. {defn.name}@10")
    ordered = tuple((p.name, params[p.name]) for p in defn.params if p.name in params)
    return Measure(defn, ordered, cutoff)


# ---------------------------------------------------------------------------
# declarations
# ---------------------------------------------------------------------------


def _b_check(v: Any) -> str | None:
    return None if float(v) > 1 else "log base must be > 1"


def _gain_check(v: Any) -> str | None:
    try:
        gain_scheme(str(v))
    except MeasureSpecError as exc:
        return str(exc)
    return None


def _pen_check(v: Any) -> str | None:
    try:
        _penalties(str(v))
    except MeasureSpecError as exc:
        return str(exc)
    return None


def _positive(v: Any) -> str | None:
    return None if float(v) >= 0 else "must be >= 0"


_DISCOUNT = Param(
    "discount",
    "str",
    "log2p1",
    "rank discount d(j): jk2008 1+log_b j, jk2002 1 below b then log_b j, "
    "jk2002rn 1 at rank 1 then log_b j, log2p1 log2(j+1), none 1",
    choices=RANK_DISCOUNTS,
)
_B = Param("b", "float", 2.0, "log base of the jk* discounts (> 1)", check=_b_check)
_GAIN = Param(
    "gain",
    "str",
    "grade",
    "gain scheme: grade, 0-1-2-3, 0-1-1-1, 0-0-0-1, 0-1-10-100, 0-1-4-10, exp, or a dash list",
    check=_gain_check,
)
_REL = Param("rel", "int", 1, "minimum grade counted as relevant", check=_positive)
_BETA = Param("beta", "float", 1.0, "weight of gain in the blended ratio", check=_positive)
_PEN = Param(
    "penalties",
    "str",
    "4-3-2",
    "WRR penalty beta per grade 1, 2, 3, ... (each > 1)",
    check=_pen_check,
)


def _cg(kind: Literal["CG", "DCG", "nCG", "nDCG"]) -> Compute:
    def compute(
        lists: RankedLists,
        *,
        cutoff: int | None,
        empty: EmptyPolicy,
        gain: str,
        discount: RankDiscount = "none",
        b: float = 2.0,
    ) -> FloatArray:
        return gain_scalar(
            lists, kind=kind, cutoff=cutoff, discount=discount, b=b, gain=gain, empty=empty
        )

    return compute


def _plain(fn: Callable[..., FloatArray], *, zero_empty: bool = False) -> Compute:
    def compute(
        lists: RankedLists, *, cutoff: int | None, empty: EmptyPolicy, **kw: Any
    ) -> FloatArray:
        return fn(lists, cutoff=cutoff, empty="zero" if zero_empty else empty, **kw)

    return compute


_JK = "jk2002 (Järvelin & Kekäläinen 2002, TOIS 20(4), sec. 2)"
_SAKAI = "sakai2007 (Sakai 2007, IPSJ TOD 48(SIG9), sec. 3)"

_DEFS: Final[tuple[MeasureDef, ...]] = (
    MeasureDef(
        "CG",
        "Cumulated gain",
        "sum of gains down to rank k (whole list without a cut-off)",
        "CG@k = sum_{j<=k} G[j]",
        _JK,
        (_GAIN,),
        _cg("CG"),
        normalised=False,
        upper=None,
        ideal_is_one=False,
    ),
    MeasureDef(
        "DCG",
        "Discounted cumulated gain",
        "sum of discounted gains down to rank k",
        "DCG@k = sum_{j<=k} G[j] / d(j)",
        _JK + "; jk2008 (Järvelin et al. 2008, ECIR, sec. 3); Burges et al. 2005 (log2p1)",
        (_DISCOUNT, _B, _GAIN),
        _cg("DCG"),
        normalised=False,
        upper=None,
        ideal_is_one=False,
    ),
    MeasureDef(
        "nCG",
        "Normalised cumulated gain",
        "CG@k divided by the ideal vector's CG@k",
        "nCG@k = CG@k / CG_I@k",
        _JK,
        (_GAIN,),
        _cg("nCG"),
    ),
    MeasureDef(
        "nDCG",
        "Normalised discounted cumulated gain",
        "DCG@k over the ideal DCG@k; defaults are trec_eval's ndcg / ndcg_cut",
        "nDCG@k = DCG@k / DCG_I@k",
        _JK + "; jk2008; trec_eval ndcg",
        (_DISCOUNT, _B, _GAIN),
        _cg("nDCG"),
    ),
    MeasureDef(
        "AP",
        "Average precision",
        "mean precision at the relevant documents; AP@k divides by R (trec_eval map_cut)",
        "AP@k = (1/R) sum_{r<=k} isrel(r) count(r)/r",
        _SAKAI + "; trec_eval map",
        (_REL,),
        _plain(average_precision),
    ),
    MeasureDef(
        "Q",
        "Q-measure",
        "AP with the blended ratio; Q@k divides by min(R, k) (NTCIREVAL)",
        "BR(r) = (count(r) + beta cg(r)) / (r + beta cg_I(r)); Q = (1/R) sum_r isrel(r) BR(r)",
        _SAKAI,
        (_BETA, _GAIN),
        _plain(q_measure),
    ),
    MeasureDef(
        "O",
        "O-measure",
        "blended ratio at the first relevant document (0 when none)",
        "O = BR(r_1)",
        _SAKAI,
        (_BETA, _GAIN),
        _plain(o_measure),
    ),
    MeasureDef(
        "Pmeasure",
        "P-measure",
        "blended ratio at the first document of the highest grade retrieved",
        "P = BR(r_p)",
        _SAKAI,
        (_BETA, _GAIN),
        _plain(p_measure),
    ),
    MeasureDef(
        "Pplus",
        "P+-measure",
        "mean blended ratio over relevant documents down to r_p",
        "P+ = (1/count(r_p)) sum_{r<=r_p} isrel(r) BR(r)",
        _SAKAI,
        (_BETA, _GAIN),
        _plain(p_plus),
    ),
    MeasureDef(
        "RR",
        "Reciprocal rank",
        "1 / rank of the first relevant document, 0 when none (trec_eval recip_rank)",
        "RR = 1 / r_1",
        _SAKAI + "; trec_eval recip_rank",
        (_REL,),
        _plain(reciprocal_rank, zero_empty=True),
        normalised=False,
    ),
    MeasureDef(
        "WRR",
        "Weighted reciprocal rank",
        "reciprocal rank with a grade-dependent penalty (can exceed 1)",
        "WRR = 1 / (r_1 - 1/beta(L_1))",
        _SAKAI,
        (_PEN,),
        _plain(wrr, zero_empty=True),
        normalised=False,
        upper=2.0,
        ideal_is_one=False,
    ),
    MeasureDef(
        "NWRR",
        "Normalised weighted reciprocal rank",
        "WRR divided by its maximum for the topic's highest grade M",
        "NWRR = (1 - 1/beta(M)) / (r_1 - 1/beta(L_1))",
        _SAKAI,
        (_PEN,),
        _plain(nwrr),
    ),
    MeasureDef(
        "P",
        "Precision",
        "relevant documents in the top k divided by k (trec_eval P_k)",
        "P@k = count(k) / k",
        "trec_eval P",
        (_REL,),
        _plain(precision, zero_empty=True),
        cutoff="required",
        normalised=False,
        ideal_is_one=False,
    ),
    MeasureDef(
        "R",
        "Recall",
        "relevant documents in the top k divided by R (trec_eval recall_k)",
        "R@k = count(k) / R",
        "trec_eval recall",
        (_REL,),
        _plain(recall),
    ),
    MeasureDef(
        "Bpref",
        "bpref",
        "binary preference: judged non-relevant documents above each relevant one",
        "bpref = (1/R) sum_{rel x} (1 - min(|N above x|, R) / min(R, N))",
        "bompada2007 (Bompada et al. 2007, SIGIR, sec. 2); Buckley & Voorhees 2004; trec_eval",
        (_REL,),
        _plain(bpref),
        aliases=("bpref",),
    ),
    MeasureDef(
        "infAP",
        "Inferred average precision",
        "AP estimated from incomplete judgments (agrees with trec_eval infAP)",
        "infAP = (1/R) sum_{rel k} [1/k + ((k-1)/k)(|J|/(k-1))((R_a+e)/(R_a+N_a+2e))]",
        "bompada2007 (sec. 2); Yilmaz & Aslam 2006; trec_eval infAP",
        (_REL,),
        _plain(inf_ap),
    ),
)

REGISTRY: Final[dict[str, MeasureDef]] = {d.name: d for d in _DEFS}
"""Canonical name -> declaration."""

_LOOKUP: Final[dict[str, MeasureDef]] = {
    **{d.name: d for d in _DEFS},
    **{a: d for d in _DEFS for a in d.aliases},
}

_SPEC = re.compile(
    r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_+]*)\s*"
    r"(?:\((?P<params>[^()]*)\))?\s*"
    r"(?:@\s*(?P<cutoff>[^\s]+))?\s*$"
)


def parse_measure(spec: str | Measure) -> Measure:
    """Parse ``Name(param=value,...)@cutoff`` into a :class:`Measure`.

    Parameters
    ----------
    spec
        A measure string (or a measure, returned as is).

    Returns
    -------
    Measure

    Raises
    ------
    MeasureSpecError
        Unknown name or parameter (the message lists the valid ones from the
        registry), bad value, bad or missing cut-off.

    Examples
    --------
    >>> parse_measure("Q@1000").cutoff
    1000
    >>> parse_measure("bpref")
    Bpref
    >>> parse_measure("AP(foo=1)")
    Traceback (most recent call last):
    ...
    sessionval.errors.MeasureSpecError: AP: unknown parameter 'foo'; valid parameters: rel
    """
    if isinstance(spec, Measure):
        return spec
    m = _SPEC.match(spec)
    if not m:
        raise MeasureSpecError(
            f"cannot parse measure {spec!r}; expected Name(param=value,...)@cutoff, e.g. nDCG@10"
        )
    name = m.group("name")
    defn = _LOOKUP.get(name)
    if defn is None:
        raise MeasureSpecError(
            f"unknown measure {name!r} in {spec!r}; valid measures: "
            + ", ".join(sorted(_LOOKUP, key=str.lower))
        )
    params: dict[str, float | int | str] = {}
    raw = m.group("params")
    if raw is not None and raw.strip():
        for item in _split_params(raw):
            if "=" not in item:
                raise MeasureSpecError(
                    f"{defn.name}: parameter {item.strip()!r} must be written name=value"
                )
            k, v = (x.strip() for x in item.split("=", 1))
            p = defn.param(k)
            if k in params:
                raise MeasureSpecError(f"{defn.name}: parameter {k!r} given twice")
            val = p.convert(v, measure=defn.name)
            if p.name == "gain":
                val = gain_scheme(str(val)).name
            params[k] = val
    cutoff = None
    if m.group("cutoff") is not None:
        c = m.group("cutoff")
        if not c.isdigit() or int(c) < 1:
            raise MeasureSpecError(f"{defn.name}: cut-off must be an integer >= 1, got {c!r}")
        cutoff = int(c)
    return _make(defn, params, cutoff)


def _split_params(raw: str) -> list[str]:
    """Split on commas outside braces (a gain mapping ``{0:0,1:5}`` holds commas)."""
    items: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in raw:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur))
    return items


def parse_measures(specs: Sequence[str | Measure]) -> list[Measure]:
    """Parse several measures, dropping exact duplicates (first kept)."""
    out: list[Measure] = []
    for s in specs:
        m = parse_measure(s)
        if m not in out:
            out.append(m)
    return out


def describe_measures() -> list[dict[str, str]]:
    """One record per registered measure (name, pretty, description, params, formula, reference).

    Used by ``sessionval measures`` and :func:`measures_markdown`.
    """
    rows = []
    for d in _DEFS:
        params = " | ".join(f"{p.name}={_fmt(p.default)}: {p.description}" for p in d.params)
        rows.append(
            {
                "name": d.name + ("@k" if d.cutoff == "required" else "[@k]"),
                "pretty": d.pretty,
                "description": d.description,
                "params": params,
                "formula": d.formula,
                "reference": d.reference,
                "aliases": ", ".join(d.aliases),
                "normalised": "yes" if d.normalised else "no",
            }
        )
    return rows


def measures_markdown() -> str:
    """Render the measure reference as Markdown (``docs/measures.md`` is this text)."""
    lines = [
        "# Single-query measures",
        "",
        "Generated from the registry (`sessionval.measures.registry`) by",
        "`sessionval measures --format markdown`; do not edit by hand.",
        "",
        "Grammar: `Name(param=value,...)@k`, e.g. `nDCG(discount=jk2002,b=2)@10`, `Q@1000`,",
        "`Bpref`. Only parameters that differ from their default appear in the canonical name,",
        "so `nDCG(discount=log2p1)@10` is `nDCG@10`. Names shared with ir_measures mean the",
        "same (trec_eval): `nDCG@10` = `ndcg_cut.10`, `AP` = `map`, `AP@k` = `map_cut.k`,",
        "`RR` = `recip_rank`, `P@k` = `P_k`, `R@k` = `recall_k`, `Bpref` = `bpref`,",
        "`infAP` = `infAP`.",
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
        "Ranking order (`sessionval evaluate`, `RankedLists.from_run`): score descending,",
        "ties by document id ascending (`--ties doc_id`, default: independent of file",
        "order), by document id descending (`--ties trec_eval`, what trec_eval does) or",
        "in file order (`--ties input`). Logs (`RankedLists.from_frame`) keep their ranks.",
        "Run topics without judgments are skipped and counted; `-c` adds judged topics",
        "missing from the run as empty lists (trec_eval `-c`).",
        "",
        "Cross-checked to 1e-9 against pytrec_eval (ndcg, ndcg_cut, map, map_cut,",
        "recip_rank, bpref, infAP, P, recall) and pyNTCIREVAL (Q, O, P, P+, AP, RR, nDCG",
        "with the jk2002 discount) in `tests/metrics/test_metrics_crosscheck.py`.",
        "",
        "Erratum: Järvelin et al. (2008)'s appendix prints DCG' (jk2008, b=4) as",
        "`<3, 4, 5.67, 5.67, 5.67, 6.11, 6.94, 8.14, 9.30, 9.30>`; ranks 2 and 8 are slips,",
        "the formula (implemented) gives `<3, 4.33, 6.01, 6.01, 6.01, 6.44, 7.28, 8.08, 9.24,",
        "9.24>`.",
        "",
    ]
    for row in describe_measures():
        lines += [
            f"## `{row['name']}`: {row['pretty']}",
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
        lines.append("")
    return "\n".join(lines)
