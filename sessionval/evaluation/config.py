"""The session-measure configuration: :class:`SessionConfig` and the named presets.

One typed, frozen Pydantic model holds every parameter of the session measures
(spec section 4) with one default and one name each; it is validated once and the
kernels trust it.  Presets reproduce published variants
(``SessionConfig.preset("jiang-allan-2016")``; table in ``docs/sessions.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Annotated, Any, ClassVar, Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt
from pydantic import ConfigDict, Field, PlainSerializer, PlainValidator, WithJsonSchema

from ..errors import JudgmentError, MeasureSpecError
from ..judgments.gains import GAIN_SCHEMES, GainScheme, NegativePolicy, gain_scheme
from ..judgments.unjudged import UnjudgedPolicy
from ..kernels.discounts import QUERY_DISCOUNTS, RANK_DISCOUNTS, QueryDiscount, RankDiscount
from ..kernels.session import IdealRule, SessionParams
from ..kernels.slots import DuplicatePolicy, ShortLists
from ..models._base import Model

__all__ = [
    "AUTO_GAINS",
    "DEFAULT_GAINS",
    "PRESETS",
    "RENAMED_PRESETS",
    "SCALE_GAINS",
    "Preset",
    "SessionConfig",
    "resolve_preset",
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
        "description": "sDCG/nsDCG as the CHIIR 2016 experiment script (exp_chiir16.py of "
        "jiepujiang/ir_metrics) computes them: SDCG(2, 4, True) and NSDCG(2, 4, True) with k = 9; "
        "query discount 1/log_bq(q+bq-1), rank discount 1/log_b(r+b-1), gain 2^g-1 (negative "
        "grades kept), every duplicate counted, the top 9 of each query, ideal = the session's "
        "judged pool sorted, repeated per query (load the judgments keyed per session)",
        "citation": "jiang2016",
        "params": {
            "cutoff": 9,
            "gains": "exp",
            "negative": "keep",
            "discount": "shifted-log",
            "query_discount": "shifted-log",
        },
        "sources": {
            "cutoff": "exp_chiir16.py: k = 9 ('the dataset only provides 9 results per SERP'), "
            "passed to every metric; with X = 10 the ideal gets a 10th document per query and "
            "nsDCG is off by up to 0.064 on the 80 sessions",
            "b": "exp_chiir16.py: SDCG(2, 4, True), NSDCG(2, 4, True): b = 2",
            "bq": "exp_chiir16.py: SDCG(2, 4, True), NSDCG(2, 4, True): bq = 4",
            "gains": "session_metrics.py SDCG.evaluate: gain = 2 ** rel - 1.0",
            "negative": "session_metrics.py: rel read as is from the qrels (grade -1 gives "
            "gain -0.5)",
            "discount": "session_metrics.py SDCG.evaluate: math.log(b, rank + b - 1), i.e. "
            "1/log_b(r + b - 1)",
            "query_discount": "session_metrics.py SDCG.evaluate: math.log(bq, qix + bq) with "
            "qix = q - 1, i.e. 1/log_bq(q + bq - 1)",
            "duplicates": "session_metrics.py SDCG.evaluate: every result of every query "
            "scored, repeats included",
            "short_lists": "session_metrics.py: a list stops at its last result (no padding); "
            "padding adds no gain and NSDCG's ideal keeps k positions per query, so pad "
            "gives the same finals",
            "ideal": "session_metrics.py NSDCG.evaluate: the judged pool sorted by grade, one "
            "copy per query of the session",
            "judgments": "dataset.py load_qrels: qrels per session (SessionID URL Relevance)",
        },
    },
    "trec-dd-jig": {
        "description": "sDCG and its normalisation as the TREC Dynamic Domain jig computes them "
        "(trec-dd/trec-dd-jig, scorer/sDCG.py): the first 10 iterations of 5 documents, "
        "rank discount 1+log_2(i), query discount 1+log_4(q), gain = the document's grade "
        "taken as is (load each document's grade as the sum of its passage ratings, a rating "
        "0 counted as 1, as truth.py does), repeated documents scored every time, and the "
        "ideal = the best session of 10 iterations of 5 documents with each document once",
        "citation": "yang2015dd",
        "params": {
            "cutoff": 5,
            "max_queries": 10,
            "gains": "grade",
            "duplicates": "every",
            "ideal": "no-repeat",
        },
        "sources": {
            "cutoff": "sDCG_bound_per_topic: 5 documents per iteration (range(5)); the run side "
            "scores every document of an iteration, and a DD iteration returns 5",
            "max_queries": "sDCG(..., cutoff=10): iterations from the cut-off on are skipped "
            "(query_pos >= cutoff) and the bound has cutoff x 5 positions",
            "b": "sDCG(..., b=2): doc discount 1 + math.log(doc_pos + 1, b)",
            "bq": "sDCG(bq=4, ...): query discount 1 + math.log(query_pos + 1, bq)",
            "discount": "sDCG_per_topic: 1 + log_b(i), the jk2008 rank discount",
            "query_discount": "sDCG_per_topic: 1 + log_bq(q), the jk2008 query discount",
            "gains": "truth.py truth4SDCG: a document's gain is the sum of its passage "
            "ratings over every subtopic (rating 0 read as 1); the grade given to sessionval "
            "must be that sum, and gains = grade uses it as is",
            "duplicates": "sDCG_per_topic: every document of every iteration adds its gain, "
            "repeats included",
            "ideal": "sDCG_bound_per_topic: documents sorted by gain, each once, zipped with the "
            "positions sorted by weight",
        },
    },
    "documents-once": {
        "description": "each document counts once on both sides: a repeat earns nothing (it "
        "keeps its rank) and the ideal session uses each relevant document once, greedily on "
        "the most valuable positions; other parameters as jarvelin-2008 (formerly called "
        "trec-dd-no-repeat, which the TREC DD jig does not compute: see trec-dd-jig)",
        "citation": "jarvelin2008",
        "params": {"ideal": "no-repeat", "duplicates": "first"},
        "sources": {
            "duplicates": "Järvelin et al. 2008, sec. 3.3: a document seen before may be "
            "worth nothing the second time",
            "ideal": "the ideal that matches duplicates = first: no document twice",
        },
    },
    "trec-session-2011": {
        "description": "the TREC 2011 Session Track's evaluation conventions (session_eval.pl, "
        "E. Kanoulas): the ranking of the session's last (current) query scored by nDCG@10 "
        "with gain 2^g - 1, discount log2(r + 1), negative grades as 0 and unjudged documents "
        "as 0; use the measure last(nDCG(gain=exp)@10), listed in this preset's measures. The "
        "session parameters (for sDCG alongside) take the same gain, discount and X",
        "citation": "kanoulas2011session",
        "params": {
            "cutoff": 10,
            "gains": "exp",
            "discount": "log2p1",
            "negative": "clip",
            "unjudged": "zero",
        },
        "measures": ("last(nDCG(gain=exp)@10)",),
        "sources": {
            "cutoff": "session_eval.pl: -k rank cut-off, default 10 (nDCG@k)",
            "gains": "session_eval.pl: (2**$rel - 1)",
            "discount": "session_eval.pl: log($rank + 1)/log(2)",
            "negative": "session_eval.pl: $rel = 0 if ($rel < 0)",
            "unjudged": "session_eval.pl: $rel = 0 when the document is not in the qrels",
            "measures": "session_eval.pl scores the run of the <current query> (RL1..RL4); "
            "each (topic, document) takes its maximum grade over the subtopics",
        },
    },
    "kanoulas-2011-no-qdiscount": {
        "description": "sDCG without query discount (bq -> infinity): the sum of the queries' "
        "DCG@X, as the no-discount baseline of Kanoulas et al. (2011)",
        "citation": "kanoulas2011",
        "params": {"query_discount": "none"},
        "sources": {
            "query_discount": "Kanoulas et al. 2011 compare sDCG with and without the query "
            "discount; Jiang & Allan 2016 (exp_chiir16.py: SDCG(2, 4, False)) likewise",
        },
    },
}
"""Named parameter sets reproducing published variants (``docs/sessions.md`` variant table).

Each entry has a ``description``, a ``citation``, its ``params`` (SessionConfig
fields), the ``sources`` of its parameters (where in the paper or code each value
comes from) and, for presets whose conventions name a measure, ``measures``.
"""

RENAMED_PRESETS: Final[dict[str, str]] = {
    "trec-dd-no-repeat": "it did not reproduce the TREC DD jig (the jig scores repeated "
    "documents every time and takes gains from passage ratings): use 'trec-dd-jig' for the "
    "jig, or 'documents-once' for the former parameters (ideal no-repeat, duplicates first)",
}
"""Former preset names and why they went (the error message of :meth:`SessionConfig.preset`)."""


#: The scheme ``gains = "auto"`` uses when it covers the data's grades (Järvelin et al. 2008).
DEFAULT_GAINS: Final = "0-1-10-100"
#: The scheme ``gains = "auto"`` uses when the default does not cover a grade of the data.
SCALE_GAINS: Final = "exp"

AUTO_GAINS: Final = GainScheme("auto", "mapping", GAIN_SCHEMES[DEFAULT_GAINS].mapping)
"""``gains = "auto"``, the default: fitted to the data's grade scale before any scoring.

:meth:`SessionConfig.fit_gains` turns it into :data:`DEFAULT_GAINS` (0-1-10-100, the
paper's) when that covers every grade of the data, else :data:`SCALE_GAINS` (``exp``,
2^grade - 1) with a note; :func:`~sessionval.evaluation.session.evaluate` does so
before it scores.  Until then it maps grades as the default does.
"""


def _gains_in(value: Any) -> GainScheme:
    """Parse the ``gains`` field once into a :class:`GainScheme` (TOML/JSON keys are text)."""
    if value == "auto" or value is AUTO_GAINS:
        return AUTO_GAINS
    if isinstance(value, Mapping):
        try:
            value = {int(k) if isinstance(k, str) else k: v for k, v in value.items()}
        except ValueError:
            raise MeasureSpecError(
                f"gain scheme mapping {dict(value)!r}: keys must be integer grades"
            ) from None
    return gain_scheme(value)


def _gains_out(scheme: GainScheme) -> str | dict[int, float]:
    """Write a scheme as it was given: a mapping for custom tables, else its name."""
    return dict(scheme.mapping) if scheme.name.startswith("{") else scheme.name


GainsField: TypeAlias = Annotated[
    GainScheme,
    PlainValidator(_gains_in),
    PlainSerializer(_gains_out),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string"},
                {"type": "object", "additionalProperties": {"type": "number"}},
            ]
        }
    ),
]
"""A gain scheme field: parsed once into a :class:`GainScheme`, written back as given."""

ShortListsField: TypeAlias = Annotated[
    ShortLists,
    PlainValidator(ShortLists.parse),
    PlainSerializer(str),
    WithJsonSchema({"type": "string", "pattern": "^(pad|none|min:[0-9]+)$"}),
]
"""A short-list policy field: parsed once into a :class:`ShortLists`, written as text."""


@dataclass(frozen=True)
class Preset:
    """A named published variant, as :func:`resolve_preset` returns it.

    Attributes
    ----------
    name
        The preset's name (``"jiang-allan-2016"``).
    params
        The :class:`SessionConfig` fields it sets (other fields keep their defaults).
    measures
        The measures its conventions name (canonical or as written), if any.
    description, citation
        What it reproduces and the bibliography key of its source.
    sources
        Where each parameter's value comes from in the paper or code.
    """

    name: str
    params: Mapping[str, Any]
    measures: tuple[str, ...] = ()
    description: str = ""
    citation: str = ""
    sources: Mapping[str, str] = field(default_factory=dict)


def resolve_preset(name: object) -> Preset:
    """The one reader of :data:`PRESETS`: a preset's name to its :class:`Preset`.

    Every road that names a preset goes through here (``SessionConfig.preset``,
    ``preset = ...`` in a run's TOML file, ``--preset`` on the command line, a
    preset's own measures), so an unknown or renamed name gets the same message
    everywhere.

    Raises
    ------
    MeasureSpecError
        A former name (the message says why it went and what replaces it), or an
        unknown one (the message lists the known ones).

    Examples
    --------
    >>> resolve_preset("jiang-allan-2016").params["cutoff"]
    9
    >>> resolve_preset("trec-dd-no-repeat")
    Traceback (most recent call last):
    ...
    sessionval.errors.MeasureSpecError: session preset 'trec-dd-no-repeat' was renamed: ...
    """
    if isinstance(name, str) and name in RENAMED_PRESETS:
        raise MeasureSpecError(f"session preset {name!r} was renamed: {RENAMED_PRESETS[name]}")
    if not isinstance(name, str) or name not in PRESETS:
        raise MeasureSpecError(f"unknown session preset {name!r}; known: {', '.join(PRESETS)}")
    entry = PRESETS[name]
    return Preset(
        name=name,
        params=MappingProxyType(dict(entry["params"])),
        measures=tuple(entry.get("measures", ())),
        description=str(entry.get("description", "")),
        citation=str(entry.get("citation", "")),
        sources=MappingProxyType(dict(entry.get("sources", {}))),
    )


def _uncovered(scheme: GainScheme, grades: npt.NDArray[np.float64]) -> list[int]:
    """Grades the scheme has no gain for (none for ``exp`` and ``grade``: any grade)."""
    if scheme.grades is None:
        return []
    return sorted(int(g) for g in grades if int(g) not in scheme.grades)


class SessionConfig(Model):
    """Every parameter of the session measures (spec section 4); defaults = the paper.

    The one place of the session context's defaults: the illustration of Järvelin et
    al. (2008): ``b = 2``, ``bq = 4``, ``X = 10`` (``cutoff``), gains ``auto`` (the
    paper's 0-1-10-100 when it covers the data's grades, :meth:`fit_gains`),
    rank and query discounts ``jk2008``, duplicates counted every time, short lists
    padded, reference judgments, the topic's ideal repeated per query, per-session
    normalisation, sessions held after stopping.  Values are parsed once, here, into
    typed values (``gains`` a :class:`~sessionval.judgments.gains.GainScheme`,
    ``short_lists`` a :class:`~sessionval.kernels.slots.ShortLists`); the kernels
    trust them.  A dump writes them back as text, so JSON and TOML round trips
    keep their form.  Each field's ``description`` is its meaning (the data
    dictionary of the outputs prints it).

    Examples
    --------
    >>> cfg = SessionConfig()
    >>> cfg.b, cfg.bq, cfg.cutoff, str(cfg.gains), cfg.duplicates, str(cfg.short_lists)
    (2.0, 4.0, 10, 'auto', 'every', 'pad')
    >>> cfg.model_dump(mode="json")["gains"], cfg.model_dump()["short_lists"]
    ('auto', 'pad')
    >>> SessionConfig.model_validate_json(cfg.model_dump_json()) == cfg
    True
    >>> SessionConfig.preset("jiang-allan-2016").query_discount
    'shifted-log'
    """

    b: float = Field(
        2.0,
        gt=1,
        description="log base b of the rank discount d(i), > 1 (used by the discounts with "
        "a base; larger b discounts later ranks less: 2 an impatient searcher, 10 a patient one)",
    )
    bq: float = Field(
        4.0,
        gt=1,
        description="log base bq of the query discount qd(q), > 1 (inf: no query discount)",
    )
    cutoff: int = Field(
        10, ge=1, description="X: the top X ranks of each query enter the session vector"
    )
    scan_depth: Literal["ignore", "replace", "cap"] = Field(
        "ignore",
        description="per-query scan depth from the log: ignore it (X for every query), "
        "replace X by it where known, or cap X by it (min)",
    )
    gains: GainsField = Field(
        AUTO_GAINS,
        json_schema_extra={"default": "auto"},
        description="gain scheme: the gain G of a document of each relevance grade "
        "(a named scheme, a dash list of gains for grades 0, 1, 2, ... or a mapping); "
        f"auto: {DEFAULT_GAINS} (the paper's) when it covers every grade of the data's "
        f"scale, else {SCALE_GAINS} (2^grade - 1), said in a note",
    )
    negative: NegativePolicy = Field(
        "clip",
        description="negative grades: clip to grade 0, keep them through the gain "
        "function, or raise an error",
    )
    unjudged: UnjudgedPolicy = Field(
        "zero",
        description="unjudged documents: gain 0, condense (removed; later results move "
        "up), or raise an error",
    )
    judgments: Literal["reference", "searcher"] = Field(
        "reference",
        description="whose grades drive the gains: the reference judgments (qrels) or the "
        "searchers' own grades",
    )
    discount: RankDiscount = Field(
        "jk2008",
        description="rank discount kind: the denominator d(i) of a gain at rank i of a "
        "query's slot (formulas in the discount table: " + ", ".join(RANK_DISCOUNTS) + ")",
    )
    query_discount: QueryDiscount = Field(
        "jk2008",
        description="query discount kind: the multiplier qd(q) of the q-th query of a "
        "session (formulas in the discount table: " + ", ".join(QUERY_DISCOUNTS) + ")",
    )
    duplicates: DuplicatePolicy = Field(
        "every",
        description="a document shown by an earlier query of the session: every (earns its "
        "gain again), first (earns 0, keeps its rank) or drop (removed, the list moves up)",
    )
    short_lists: ShortListsField = Field(
        ShortLists("pad"),
        json_schema_extra={"default": "pad"},
        description="a query with fewer than X results: pad (occupies X positions, gain 0 "
        "on the missing ones), none (occupies its n results) or min:m (at least m positions)",
    )
    ideal: IdealRule = Field(
        "repeat",
        description="ideal session: repeat (each query's slot holds the top ideal gains of "
        "its judgment key) or no-repeat (each relevant document used once, greedily)",
    )
    max_queries: int | None = Field(
        None,
        ge=1,
        description="evaluate only the first N queries of each session (None: all); with "
        "ideal no-repeat the ideal session is then the best session of N queries of X "
        "positions each (the TREC Dynamic Domain jig's iteration cut-off)",
    )
    normalise: Literal["per-session", "of-averages"] = Field(
        "per-session",
        description="averaged curves: normalise each session then average, or divide the "
        "average vector by the average ideal",
    )
    stopped: Literal["hold", "active"] = Field(
        "hold",
        description="averaged curves: a session that stopped holds its last value up to the "
        "longest session, or leaves the average",
    )
    empty_ideal: Literal["nan", "zero"] = Field(
        "nan", description="value of a normalised score (nsDCG, nDCG) where the ideal is 0"
    )
    best_by: Literal["dcg", "sdcg"] = Field(
        "dcg",
        description="the best query of a session: the highest DCG_q or the highest sDCG_q "
        "(the earliest on ties)",
    )
    high_grade: int | None = Field(
        None,
        description="lowest grade counted as highly relevant (None: the top grade of the scale)",
    )
    preset_name: str | None = Field(None, description="preset the configuration started from")

    model_config = ConfigDict(**Model.model_config, ser_json_inf_nan="constants")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = PRESETS

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> SessionConfig:
        """Return the configuration of a named published variant, with optional overrides.

        Raises
        ------
        MeasureSpecError
            Unknown preset name (the message lists the known ones).
        """
        return cls(**{**resolve_preset(name).params, "preset_name": name, **overrides})

    @property
    def gains_fitted(self) -> bool:
        """Whether the gain scheme is decided (not ``auto``, which :meth:`fit_gains` settles)."""
        return self.gains != AUTO_GAINS

    def fit_gains(
        self, grades: npt.ArrayLike, *, where: str = "judgments"
    ) -> tuple[SessionConfig, tuple[str, ...]]:
        """Settle the gain scheme for the data's grades: the one place it is decided.

        ``gains = "auto"`` becomes :data:`DEFAULT_GAINS` (0-1-10-100, Järvelin et al.
        2008) when that has a gain for every grade, else :data:`SCALE_GAINS` (``exp``,
        2^grade - 1, Burges et al. 2005, the gain of nDCG in the TREC Web and Session
        tracks: TREC Session 2013 and CAsT grades run to 4), with a note saying so.
        A scheme the user chose is checked, not changed.  Negative grades count only
        when ``negative = "keep"`` sends them through the gains.

        Parameters
        ----------
        grades
            The grades of the data's scale (declared and observed; NaN ignored).
        where
            Whose grades they are, for the messages (``"judgments"``,
            ``"searchers' grades"``).

        Returns
        -------
        tuple
            The configuration with a decided scheme, and the notes on what was chosen.

        Raises
        ------
        JudgmentError
            A scheme the user chose has no gain for a grade of the data.

        Examples
        --------
        >>> cfg, notes = SessionConfig().fit_gains([0, 1, 2, 3])
        >>> cfg.gains.name, notes
        ('0-1-10-100', ())
        >>> cfg, notes = SessionConfig().fit_gains([0, 4])
        >>> cfg.gains.name, notes[0].split(":")[0]
        ('exp', 'gains = exp (gain = 2^grade - 1) chosen for the data')
        """
        g = np.asarray(grades, dtype=np.float64)
        g = np.unique(g[~np.isnan(g)])
        looked_up = g if self.negative == "keep" else g[g >= 0]
        if self.gains_fitted:
            missing = _uncovered(self.gains, looked_up)
            if missing:
                allowed = ", ".join(str(x) for x in self.gains.grades or ())
                raise JudgmentError(
                    f"gains = {self.gains.name} has no gain for grade(s) {missing} of the "
                    f"{where} (it covers grades {allowed}); choose a scheme for the data's "
                    "scale: exp (2^grade - 1), grade (the grade itself) or a dash list with "
                    f"one gain per grade from 0 to {max(missing)} (docs/configuration.md)"
                )
            return self, ()
        default = GAIN_SCHEMES[DEFAULT_GAINS]
        missing = _uncovered(default, looked_up)
        if not missing:
            return self.replace(gains=default), ()
        note = (
            f"gains = {SCALE_GAINS} (gain = 2^grade - 1) chosen for the data: the grade scale "
            f"of the {where} has grade(s) {missing}, which the default {DEFAULT_GAINS} does not "
            "cover; set gains in the configuration (or --gains) to choose another scheme"
        )
        return self.replace(gains=gain_scheme(SCALE_GAINS)), (note,)

    def session_params(self) -> SessionParams:
        """The typed parameters of :func:`~sessionval.kernels.session.session_vectors`."""
        return SessionParams(
            b=self.b,
            bq=self.bq,
            discount=self.discount,
            query_discount=self.query_discount,
            duplicates=self.duplicates,
            short_lists=self.short_lists,
            ideal=self.ideal,
            ideal_grid=(
                (self.max_queries, self.cutoff)
                if self.ideal == "no-repeat" and self.max_queries is not None
                else None
            ),
        )

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
