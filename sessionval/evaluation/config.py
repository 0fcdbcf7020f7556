"""The session-measure configuration: :class:`SessionConfig` and the named presets.

One typed, frozen Pydantic model holds every parameter of the session measures
(spec section 4) with one default and one name each; it is validated once and the
kernels trust it.  Presets reproduce published variants
(``SessionConfig.preset("jiang-allan-2016")``; table in ``docs/sessions.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal

from pydantic import ConfigDict, Field, field_validator

from ..errors import MeasureSpecError
from ..judgments.gains import GainScheme, NegativePolicy, gain_scheme
from ..judgments.unjudged import UnjudgedPolicy
from ..kernels.discounts import QueryDiscount, RankDiscount
from ..kernels.session import DuplicatePolicy, IdealRule, parse_short_lists
from ..models._base import Model

__all__ = [
    "PRESETS",
    "SessionConfig",
    "config_from_mapping",
]


PRESETS: Final[dict[str, dict[str, Any]]] = {
    "jarvelin-2008": {
        "description": "sDCG as in Järvelin et al. (2008): b=2, bq=4, X=10, gains 0-1-10-100, "
        "rank discount 1+log_b(i), query discount 1+log_bq(q), every duplicate counted, "
        "short lists padded, ideal = topic's ideal top-X repeated per query (the defaults)",
        "citation": "jarvelin2008",
        "params": {},
    },
    "jiang-allan-2016": {
        "description": "sDCG/nsDCG of the CHIIR 2016 session-metrics code: query discount "
        "1/log_bq(q+bq-1), rank discount 1/log_b(r+b-1), gain 2^g-1 (negative grades kept), "
        "top-k of each query (padding adds no gain, and the ideal copy of every query keeps k "
        "positions as in that code), every duplicate counted, ideal = the session's judged pool "
        "sorted, repeated per query (load judgments keyed per session)",
        "citation": "jiang2016",
        "params": {
            "gains": "exp",
            "negative": "keep",
            "discount": "shifted-log",
            "query_discount": "shifted-log",
        },
    },
    "trec-dd-no-repeat": {
        "description": "ideal session without repeated documents (greedy: the largest gains "
        "on the most valuable discounted positions, each relevant document once) as in the "
        "TREC Dynamic Domain jig, with repeats earning nothing; other parameters as "
        "jarvelin-2008",
        "citation": "yang2015dd",
        "params": {"ideal": "no-repeat", "duplicates": "first"},
    },
    "kanoulas-2011-no-qdiscount": {
        "description": "sDCG without query discount (bq -> infinity): the sum of the queries' "
        "DCG@X, as the no-discount baseline of Kanoulas et al. (2011)",
        "citation": "kanoulas2011",
        "params": {"query_discount": "none"},
    },
}
"""Named parameter sets reproducing published variants (``docs/sessions.md`` variant table)."""


class SessionConfig(Model):
    """Every parameter of the session measures (spec section 4); defaults = the paper.

    Defaults are the illustration of Järvelin et al. (2008): ``b = 2``, ``bq = 4``,
    ``X = 10`` (``cutoff``), gains 0-1-10-100, rank discount ``jk2008``, duplicates
    counted every time, short lists padded, reference judgments, the topic's ideal
    repeated per query, per-session normalisation, sessions held after stopping.

    Examples
    --------
    >>> cfg = SessionConfig()
    >>> cfg.b, cfg.bq, cfg.cutoff, cfg.gains, cfg.duplicates, cfg.short_lists
    (2.0, 4.0, 10, '0-1-10-100', 'every', 'pad')
    >>> SessionConfig.model_validate_json(cfg.model_dump_json()) == cfg
    True
    >>> SessionConfig.preset("jiang-allan-2016").query_discount
    'shifted-log'
    """

    b: float = Field(2.0, gt=1, description="log base of the rank discount")
    bq: float = Field(4.0, gt=1, description="log base of the query discount (inf: none)")
    cutoff: int = Field(10, ge=1, description="X: top ranks of each query concatenated")
    scan_depth: Literal["ignore", "replace", "cap"] = Field(
        "ignore",
        description="per-query scan depth from the log: ignore it (X for every query), "
        "replace X by it where known, or cap X by it (min)",
    )
    gains: str | dict[int, float] = Field("0-1-10-100", description="gain scheme")
    negative: NegativePolicy = "clip"
    unjudged: UnjudgedPolicy = "zero"
    judgments: Literal["reference", "searcher"] = Field(
        "reference", description="whose grades drive the gains"
    )
    discount: RankDiscount = "jk2008"
    query_discount: QueryDiscount = "jk2008"
    duplicates: DuplicatePolicy = "every"
    short_lists: str = Field("pad", description="pad, none or min:m")
    ideal: IdealRule = "repeat"
    normalise: Literal["per-session", "of-averages"] = "per-session"
    stopped: Literal["hold", "active"] = "hold"
    empty_ideal: Literal["nan", "zero"] = Field(
        "nan", description="value of nsDCG / nDCG where the ideal is 0"
    )
    best_by: Literal["dcg", "sdcg"] = Field(
        "dcg", description="the best query of a session: highest DCG_q or highest sDCG_q"
    )
    high_grade: int | None = Field(
        None, description="lowest 'highly relevant' grade (None: the top grade of the scale)"
    )
    preset_name: str | None = Field(None, description="preset the configuration started from")

    model_config = ConfigDict(**Model.model_config, ser_json_inf_nan="constants")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = PRESETS

    @field_validator("short_lists")
    @classmethod
    def _short(cls, v: str) -> str:
        parse_short_lists(v)
        return v

    @field_validator("gains")
    @classmethod
    def _gains(cls, v: str | dict[int, float]) -> str | dict[int, float]:
        gain_scheme(v)
        return v

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> SessionConfig:
        """Return the configuration of a named published variant, with optional overrides.

        Raises
        ------
        MeasureSpecError
            Unknown preset name (the message lists the known ones).
        """
        if name not in PRESETS:
            raise MeasureSpecError(f"unknown session preset {name!r}; known: {', '.join(PRESETS)}")
        params = {**PRESETS[name]["params"], "preset_name": name, **overrides}
        return cls(**params)

    def scheme(self) -> GainScheme:
        """Return the gain scheme object."""
        return gain_scheme(self.gains)

    def replace(self, **changes: Any) -> SessionConfig:
        """A copy with some parameters changed, validated like a new configuration.

        Raises
        ------
        pydantic.ValidationError
            A changed value is not allowed (e.g. ``gains="bogus"`` or ``b=-3``).

        Examples
        --------
        >>> SessionConfig().replace(b=4).b
        4.0
        """
        return type(self).model_validate({**self.model_dump(), **changes})

    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> SessionConfig:
        """Copy; an ``update`` goes through validation (see :meth:`replace`)."""
        return self.replace(**update) if update else super().model_copy(deep=deep)


def config_from_mapping(values: Mapping[str, Any]) -> SessionConfig:
    """Build a :class:`SessionConfig` from a mapping, honouring a ``preset`` key first."""
    vals = dict(values)
    name = vals.pop("preset", None)
    if name:
        return SessionConfig.preset(str(name), **vals)
    return SessionConfig(**vals)
