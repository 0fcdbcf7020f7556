"""The measure grammar and its types: ``Name(param=value,...)@cutoff`` and ``agg(Measure)``.

One grammar for single-query and session measures (ir_measures style):

* ``nDCG(discount=jk2002,b=4)@10``: a measure with parameters and a cut-off;
* ``sDCG(b=2,bq=4)@10``: a session measure; its parameters are fields of the
  evaluation's :class:`~sessionval.evaluation.config.SessionConfig` and the cut-off is
  ``X`` (``cutoff``); parameters it does not give come from that configuration;
* ``last(nDCG@10)``: an aggregate of a single-query measure over each session's
  queries.

:class:`Param`, :class:`MeasureDef` and :class:`Measure` are declared here;
each family module (``cg``, ``precision``, ``sakai``, ``session``) declares its
measures with them and :mod:`sessionval.measures.registry` collects them.  Values
are parsed once, here, into typed values (a
:class:`~sessionval.judgments.gains.GainScheme` for ``gain``, a
:class:`~sessionval.kernels.slots.ShortLists` for ``short_lists``); the kernels
trust them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np

from .._types import FloatArray
from ..errors import MeasureSpecError
from .lists import EmptyPolicy, RankedLists

__all__ = [
    "Compute",
    "Measure",
    "MeasureDef",
    "Param",
    "ParamValue",
    "Scope",
    "Spelling",
    "Tool",
    "parse_with",
    "split_spec",
]

ParamValue: TypeAlias = Any
"""A parsed parameter value: float, int, str or a typed value (GainScheme, ShortLists)."""

Compute: TypeAlias = Callable[..., FloatArray]
Scope: TypeAlias = Literal["query", "session"]
Resolve: TypeAlias = Callable[[str], ParamValue]
Tool: TypeAlias = Literal["trec_eval", "ir_measures", "ranx"]


@dataclass(frozen=True)
class Spelling:
    """How another tool writes a measure, meaning exactly the same numbers.

    Parameters
    ----------
    tool
        ``"trec_eval"`` (also pytrec_eval), ``"ir_measures"`` or ``"ranx"``.
    name
        The tool's name.  trec_eval writes a cut-off as ``name.k`` or ``name_k``
        (``ndcg_cut.10``), ir_measures and ranx as ``name@k``.
    cutoff
        ``"required"``, ``"optional"`` or ``"none"``: whether the tool's name takes
        a cut-off (trec_eval's ``map`` takes none, ``map_cut`` requires one).
    params
        Parameters the tool's name fixes (``(("rel", 1),)``); others are defaults.
    note
        Where the tool's bare name means something else (printed in the table).
    defaults
        trec_eval: the cut-offs (or parameter values) its bare name prints, e.g.
        ``P`` prints ``P_5`` ... ``P_1000``; empty: the bare name is one measure.
    at
        The parameter the suffix sets instead of the cut-off (trec_eval's
        ``Rprec_mult.0.2`` sets ``mult``, ``iprec_at_recall.0.1`` and ir_measures'
        ``IPrec@0.1`` set ``recall``); trec_eval prints such values with two
        decimals (``Rprec_mult_0.20``).

    Examples
    --------
    >>> Spelling("trec_eval", "ndcg_cut", "required").example()
    'ndcg_cut.10'
    """

    tool: Tool
    name: str
    cutoff: Literal["required", "optional", "none"] = "none"
    params: tuple[tuple[str, ParamValue], ...] = ()
    note: str = ""
    defaults: tuple[float, ...] = ()
    at: str | None = None

    def label(self, value: float | None) -> str:
        """trec_eval's output name for one value of the suffix (``P_10``, ``Rprec_mult_0.20``).

        Examples
        --------
        >>> Spelling("trec_eval", "iprec_at_recall", "required", at="recall").label(0.1)
        'iprec_at_recall_0.10'
        """
        if value is None:
            return self.name
        return f"{self.name}_{value:.2f}" if self.at else f"{self.name}_{int(value)}"

    def example(self, k: int = 10) -> str:
        """The spelling as a user types it, with cut-off ``k`` when it takes one."""
        args = ",".join(f"{n}={v}" for n, v in self.params)
        text = self.name + (f"({args})" if args else "")
        if self.cutoff == "none":
            return text
        value = "0.5" if self.at is not None else str(k)
        return text + (f".{value}" if self.tool == "trec_eval" else f"@{value}")


@dataclass(frozen=True)
class Param:
    """One measure parameter: name, type, default, allowed values, meaning.

    Parameters
    ----------
    name
        Name in the grammar.
    kind
        ``"float"``, ``"int"`` or ``"str"`` (how the text is read).
    default
        Typed default; ``None`` for a session measure's parameter, which takes the
        evaluation configuration's value when not given.
    description
        Meaning (printed by ``sessionval measures``).
    choices
        Allowed values of a ``str`` parameter (the error lists them).
    check
        Returns a problem text for a bad value, or ``None``.
    parse
        Turns the text of a ``str`` parameter into its typed value (raises
        :class:`MeasureSpecError`); ``str(value)`` must give the canonical text back.
    field
        Session measures: the :class:`~sessionval.evaluation.config.SessionConfig`
        field the value sets; ``None``: the measure's own parameter, passed to its
        ``compute`` (every single-query parameter).
    """

    name: str
    kind: Literal["float", "int", "str"]
    default: ParamValue
    description: str
    choices: tuple[str, ...] = ()
    check: Callable[[Any], str | None] | None = field(default=None, compare=False)
    parse: Callable[[Any], Any] | None = field(default=None, compare=False)
    field: str | None = None

    def convert(self, raw: object, *, measure: str) -> ParamValue:
        """Validate and normalise a value (from the grammar or from Python)."""
        try:
            if self.kind == "float":
                v: ParamValue = float(raw)  # type: ignore[arg-type]
                if not math.isfinite(float(v)):
                    raise ValueError
            elif self.kind == "int":
                fv = float(raw)  # type: ignore[arg-type]
                if not fv.is_integer():
                    raise ValueError
                v = int(fv)
            else:
                v = _unquote(raw) if isinstance(raw, str) else raw
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
        if self.parse is not None:
            try:
                v = self.parse(v)
            except MeasureSpecError as exc:
                raise MeasureSpecError(f"{measure}: {self.name}={raw!r}: {exc}") from None
        return v


def _unquote(text: str) -> str:
    """A value as ir_measures writes it, quoted (``'exp-log2'``), or bare."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    return t


def fmt(v: object) -> str:
    """Canonical text of a parameter value (``2.0`` -> ``2``; typed values by ``str``)."""
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    return str(v)


@dataclass(frozen=True)
class MeasureDef:
    """The declaration of one measure (see the family modules for examples).

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
        ``scope="query"``: ``compute(lists, *, cutoff, empty, **params)``, one float
        per list.  ``scope="session"``: ``compute(scores, *, empty, **params)`` on the
        :class:`~sessionval.measures.session.SessionScores` of a run with the
        configuration changed by the measure's field parameters (``params``: its own,
        the ones without a ``field``), one float per session.  With ``of_measure``:
        ``compute(values, query_offsets)``, one float per session from one float per
        query.
    scope
        ``"query"`` (one value per ranked list) or ``"session"`` (one per session).
    cutoff
        ``"optional"``, ``"required"`` or ``"none"`` (no ``@k``).
    normalised
        Divides by an ideal/recall-base quantity: NaN (or 0) on an empty recall base.
    upper
        Upper bound under default parameters (None: unbounded).
    ideal_is_one
        The ideal ranking scores 1 (without a cut-off).
    aliases
        Other names the parser accepts.
    validate
        A rule across parameters: ``validate(given, value)`` with the explicitly
        given values and a resolver of effective values (``None`` when the value is
        unknown until evaluation); returns a problem text or ``None``.
    of_measure
        The measure takes a single-query measure as its argument: ``last(nDCG@10)``.
    example
        A worked example with its arithmetic (printed by ``sessionval measures``).
    spellings
        How trec_eval, ir_measures and ranx write the same measure (the parser
        accepts the trec_eval names; the table in ``docs/measures.md`` lists them).
    lower
        Lower bound (None: unbounded below, e.g. a log or a utility).
    aggregate
        How per-query values become the value over queries: ``"mean"``, ``"sum"``
        (counts: ``NumRet``) or ``"exp_mean"`` (the per-query value is a log; the
        geometric mean, trec_eval's ``gm_map``).
    at_param
        The parameter that ``@x`` sets instead of an integer cut-off
        (``IPrec@0.5`` is ``IPrec(recall=0.5)``, as ir_measures writes it); the
        canonical name writes it as ``@x`` too.
    translate
        Other tools' parameters: name -> function from the value's text to this
        measure's parameters (ir_measures' ``nDCG(dcg=exp-log2)`` is
        ``nDCG(gain=exp)``); it raises :class:`MeasureSpecError` naming the nearest
        variant when there is none.
    """

    name: str
    pretty: str
    description: str
    formula: str
    reference: str
    params: tuple[Param, ...]
    compute: Compute
    scope: Scope = "query"
    cutoff: Literal["optional", "required", "none"] = "optional"
    normalised: bool = True
    upper: float | None = 1.0
    ideal_is_one: bool = True
    aliases: tuple[str, ...] = ()
    validate: Callable[[Mapping[str, ParamValue], Resolve], str | None] | None = field(
        default=None, compare=False
    )
    of_measure: bool = False
    example: str = ""
    spellings: tuple[Spelling, ...] = ()
    lower: float | None = 0.0
    aggregate: Literal["mean", "sum", "exp_mean"] = "mean"
    at_param: str | None = None
    translate: Mapping[str, Callable[[str], Mapping[str, str]]] = field(
        default_factory=dict, compare=False
    )

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical name and the aliases."""
        return (self.name, *self.aliases)

    def param(self, name: str) -> Param:
        """Return the parameter called ``name``; the error lists the valid ones."""
        for p in self.params:
            if p.name == name:
                return p
        valid = ", ".join(p.name for p in self.params) or "none"
        raise MeasureSpecError(
            f"{self.name}: unknown parameter {name!r}; valid parameters: {valid}"
        )

    def signature(self) -> str:
        """How the measure is written: ``nDCG[@k]``, ``P@k``, ``last(M)``."""
        if self.of_measure:
            return f"{self.name}(M)"
        if self.at_param is not None:
            return f"{self.name}@{self.at_param}"
        return self.name + {"required": "@k", "optional": "[@k]", "none": ""}[self.cutoff]


@dataclass(frozen=True, eq=False)
class Measure:
    """A measure with its parameters and cut-off; ``repr`` is the canonical name.

    Equality and hashing use the canonical name, so ``nDCG@10`` equals
    ``nDCG(discount=log2p1)@10``.  A parameter equal to its declared default is left
    out of the name; a session measure's parameters have no declared default (they
    come from the evaluation's configuration), so the name lists exactly the ones
    given: ``sDCG(b=2)@10`` fixes ``b`` whatever the configuration says.
    """

    definition: MeasureDef
    params: tuple[tuple[str, ParamValue], ...]
    cutoff: int | None = None
    inner: Measure | None = None

    @property
    def name(self) -> str:
        """The measure's registry name."""
        return self.definition.name

    @property
    def scope(self) -> Scope:
        """``"query"`` or ``"session"``: one value per ranked list or per session."""
        return self.definition.scope

    def value(self, name: str) -> ParamValue:
        """Value of parameter ``name`` (its default when not given)."""
        for k, v in self.params:
            if k == name:
                return v
        return self.definition.param(name).default

    def given(self) -> dict[str, ParamValue]:
        """The parameters that differ from their defaults (all given ones for sessions)."""
        return {
            p.name: self.value(p.name)
            for p in self.definition.params
            if self.value(p.name) != p.default
        }

    def config_changes(self) -> dict[str, ParamValue]:
        """``SessionConfig`` fields a session measure sets: its field parameters and ``cutoff``."""
        out: dict[str, ParamValue] = {}
        for k, v in self.given().items():
            target = self.definition.param(k).field
            if target is not None:
                out[target] = v
        if self.cutoff is not None:
            out["cutoff"] = self.cutoff
        return out

    def own_params(self) -> dict[str, ParamValue]:
        """The parameters the measure's ``compute`` takes (all but the configuration's)."""
        return {p.name: self.value(p.name) for p in self.definition.params if p.field is None}

    def __repr__(self) -> str:
        if self.inner is not None:
            return f"{self.name}({self.inner!r})"
        given = self.given()
        at = self.definition.at_param
        at_value = given.pop(at, None) if at is not None else None
        s = self.name + (
            f"({','.join(f'{k}={fmt(v)}' for k, v in given.items())})" if given else ""
        )
        if at_value is not None:
            return s + f"@{fmt(at_value)}"
        return s + (f"@{self.cutoff}" if self.cutoff is not None else "")

    __str__ = __repr__

    def _definitions(self) -> dict[str, MeasureDef]:
        defs = {n: self.definition for n in self.definition.names}
        if self.inner is not None:
            defs.update(self.inner._definitions())
        return defs

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Measure):
            return repr(self) == repr(other)
        if isinstance(other, str):
            try:
                return repr(self) == repr(parse_with(other, self._definitions()))
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
        return make(self.definition, merged, self.cutoff, self.inner)

    def __matmul__(self, k: float) -> Measure:
        """Return a copy with cut-off ``k``: ``nDCG @ 10`` (``IPrec @ 0.5``: its ``at_param``)."""
        at = self.definition.at_param
        if at is not None:
            return self(**{at: k})
        return make(self.definition, dict(self.params), check_cutoff(k, self.name), self.inner)

    def compute(self, lists: RankedLists, *, empty: EmptyPolicy = "nan") -> FloatArray:
        """One value per list of ``lists`` (single-query measures).

        Raises
        ------
        MeasureSpecError
            A session measure: it needs sessions (``sessionval.evaluate``).
        """
        if self.scope != "query":
            raise MeasureSpecError(
                f"{self!r} is a session measure: compute it with "
                f"sessionval.evaluate(frame, judgments, measures=[{str(self)!r}])"
            )
        return self.definition.compute(lists, cutoff=self.cutoff, empty=empty, **self.own_params())


def check_cutoff(k: object, name: str) -> int:
    """A cut-off from Python: an integer >= 1."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or int(k) < 1:
        raise MeasureSpecError(f"{name}: cut-off must be an integer >= 1, got {k!r}")
    return int(k)


def make(
    defn: MeasureDef,
    params: Mapping[str, ParamValue],
    cutoff: int | None,
    inner: Measure | None = None,
) -> Measure:
    """Build a measure, applying the declaration's cut-off and cross-parameter rules."""
    if defn.cutoff == "required" and cutoff is None:
        raise MeasureSpecError(f"{defn.name} needs a cut-off, e.g. {defn.name}@10")
    if defn.cutoff == "none" and cutoff is not None:
        raise MeasureSpecError(
            f"{defn.name} takes no cut-off (give it to the measure inside: "
            f"{defn.name}(nDCG@{cutoff}))"
        )
    ordered = tuple((p.name, params[p.name]) for p in defn.params if p.name in params)
    m = Measure(defn, ordered, cutoff, inner)
    if defn.at_param is not None and m.value(defn.at_param) is None:
        raise MeasureSpecError(
            f"{defn.name} needs its {defn.at_param} after @, e.g. {defn.name}@0.5"
        )
    if defn.validate is not None:
        given = m.given()

        def value(name: str) -> ParamValue:
            return m.value(name)

        problem = defn.validate(given, value)
        if problem:
            raise MeasureSpecError(f"{m!r}: {problem}")
    return m


def _split_params(raw: str) -> list[str]:
    """Split on commas outside braces (a gain mapping ``{0:0,1:5}`` holds commas)."""
    items: list[str] = []
    level = 0
    cur: list[str] = []
    for ch in raw:
        if ch == "{":
            level += 1
        elif ch == "}":
            level -= 1
        if ch == "," and level == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur))
    return items


def split_spec(spec: str) -> tuple[str, str | None, str | None]:
    """``Name(inside)@cutoff`` -> (name, inside or None, cutoff text or None).

    Raises ``ValueError`` when ``spec`` is not of that form.  A name may hold ``-``
    (ranx's ``r-precision``).
    """
    s = spec.strip()
    i = 0
    while i < len(s) and (s[i].isalnum() or s[i] in "_+/" or (s[i] == "-" and i > 0)):
        i += 1
    name, rest = s[:i], s[i:].strip()
    inside = None
    if not name or not (name[0].isalpha() or name[0] == "_"):
        raise ValueError
    if rest.startswith("("):
        level = 0
        end = 0
        for end, ch in enumerate(rest):  # noqa: B007 - ``end`` is read after the loop
            level += (ch == "(") - (ch == ")")
            if level == 0:
                break
        if level != 0:
            raise ValueError
        inside, rest = rest[1:end], rest[end + 1 :].strip()
    cutoff = None
    if rest:
        if not rest.startswith("@") or not rest[1:].strip():
            raise ValueError
        cutoff = rest[1:].strip()
        if any(ch.isspace() or ch in "()@" for ch in cutoff):
            raise ValueError
    return name, inside, cutoff


def parse_with(
    spec: str,
    lookup: Mapping[str, MeasureDef],
    *,
    also: Mapping[str, MeasureDef] | None = None,
    hint: str = "",
) -> Measure:
    """Parse a measure string against a table of declarations (name or alias -> def).

    :func:`sessionval.measures.registry.parse_measure` calls this with the whole
    registry; :class:`Measure` equality with the measure's own declarations.
    ``also``: further names (other tools' spellings) accepted but not listed when a
    name is unknown; ``hint`` ends that message.

    Raises
    ------
    MeasureSpecError
        Unknown name or parameter (the message lists the valid ones), bad value,
        bad or missing cut-off, an aggregate of something other than a single-query
        measure.
    """
    try:
        name, inside, cut = split_spec(spec)
    except ValueError:
        raise MeasureSpecError(
            f"cannot parse measure {spec!r}; expected Name(param=value,...)@cutoff, e.g. "
            "nDCG@10, or agg(Measure), e.g. last(nDCG@10)"
        ) from None
    defn = lookup.get(name)
    if defn is None and also is not None:
        defn = also.get(name)
    if defn is None:
        names = {
            scope: ", ".join(
                sorted((n for n, d in lookup.items() if d.scope == scope), key=str.lower)
            )
            for scope in ("query", "session")
        }
        raise MeasureSpecError(
            f"unknown measure {name!r} in {spec!r}; valid measures: {names['query']}"
            + (f"; session measures: {names['session']}" if names["session"] else "")
            + hint
        )
    cutoff = None
    params: dict[str, ParamValue] = {}
    if cut is not None and defn.at_param is not None:
        params[defn.at_param] = defn.param(defn.at_param).convert(cut, measure=defn.name)
    elif cut is not None:
        if not cut.isdigit() or int(cut) < 1:
            raise MeasureSpecError(f"{defn.name}: cut-off must be an integer >= 1, got {cut!r}")
        cutoff = int(cut)
    if defn.of_measure:
        if inside is None or not inside.strip():
            raise MeasureSpecError(
                f"{defn.name} takes a single-query measure, e.g. {defn.name}(nDCG@10)"
            )
        inner = parse_with(inside, lookup, also=also, hint=hint)
        if inner.scope != "query":
            raise MeasureSpecError(
                f"{defn.name}(...) takes a single-query measure, got the session measure {inner!r}"
            )
        return make(defn, {}, cutoff, inner)
    if inside is not None and inside.strip():
        for item in _split_params(inside):
            if "=" not in item:
                raise MeasureSpecError(
                    f"{defn.name}: parameter {item.strip()!r} must be written name=value"
                )
            k, v = (x.strip() for x in item.split("=", 1))
            if k in defn.translate and k not in {p.name for p in defn.params}:
                # another tool's parameter: its meaning in this measure's parameters
                for k2, v2 in defn.translate[k](_unquote(v)).items():
                    if k2 in params:
                        raise MeasureSpecError(f"{defn.name}: parameter {k2!r} given twice")
                    params[k2] = defn.param(k2).convert(v2, measure=defn.name)
                continue
            p = defn.param(k)
            if k in params:
                raise MeasureSpecError(f"{defn.name}: parameter {k!r} given twice")
            params[k] = p.convert(v, measure=defn.name)
    return make(defn, params, cutoff)
