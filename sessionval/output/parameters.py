"""What each parameter of the configuration means, printed from the configuration itself.

A parameter's meaning is :class:`~sessionval.evaluation.config.SessionConfig`'s field
description; the rank and query discounts print the formula and source of the
*configured* kind from :data:`~sessionval.kernels.discounts.RANK_DISCOUNT_TABLE` /
:data:`~sessionval.kernels.discounts.QUERY_DISCOUNT_TABLE`; gains print the gain
scheme's name and values.  So under ``SessionConfig.preset("jiang-allan-2016")``
the report and codebook show ``qd(q) = 1 / log_bq(q + bq - 1)``, under the
defaults ``qd(q) = 1 / (1 + log_bq(q))``.  The report's parameter table
(:func:`parameter_docs`), the codebook (:func:`render_parameters`) and the
figures' captions (:func:`params_text`) all print from here; the column half of
the data dictionary is :mod:`sessionval.output.columns`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from ..evaluation.config import SessionConfig
from ..judgments.gains import GainScheme
from ..kernels.discounts import QUERY_DISCOUNT_TABLE, RANK_DISCOUNT_TABLE, DiscountKind

__all__ = [
    "PARAMETER_SYMBOLS",
    "ParameterDoc",
    "Parameters",
    "configuration",
    "discount_kinds",
    "format_value",
    "parameter_docs",
    "parameter_meaning",
    "params_text",
    "render_parameters",
]

#: A configuration: the model itself, or a mapping of (some of) its fields (``model_dump()``).
Parameters: TypeAlias = SessionConfig | Mapping[str, object]

#: How a parameter is printed where the papers use a symbol (the cut-off is X).
PARAMETER_SYMBOLS: Final[dict[str, str]] = {"cutoff": "X"}


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
    'log base bq of the query discount qd(q), > 1 (inf: no query discount): qd(q) = 1 / (1 + ...'
    >>> parameter_meaning("gains", {"gains": "0-1-10-100"}).split(": ")[-1]
    '0-1-10-100 (grade 0 -> 0, 1 -> 1, 2 -> 10, 3 -> 100)'
    """
    field = SessionConfig.model_fields.get(name)
    if field is None:
        return ""
    base = field.description or ""
    cfg = configuration(parameters)
    kinds = discount_kinds(cfg)
    d, qd = _with_source(kinds["d"]), _with_source(kinds["qd"])
    detail = {
        "b": d,
        "discount": f"{cfg.discount}, {d}",
        "bq": qd,
        "query_discount": f"{cfg.query_discount}, {qd}",
        "gains": _scheme_text(cfg.gains),
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
    'b=2; bq=4; X=9; gains exp; discount shifted-log; query_discount shifted-log'
    """
    parts: list[str] = []
    for key in ("b", "bq", "cutoff"):
        if params.get(key) is not None:
            parts.append(f"{PARAMETER_SYMBOLS.get(key, key)}={format_value(params[key])}")
    if "gains" in params:
        parts.append(f"gains {configuration({'gains': params['gains']}).gains.name}")
    for key in ("discount", "query_discount", "duplicates"):
        value = params.get(key)
        if value is not None and value != SessionConfig.model_fields[key].default:
            parts.append(f"{key} {value}")
    return "; ".join(parts)
