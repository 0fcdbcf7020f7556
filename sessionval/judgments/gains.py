"""Grades to gains: the gain schemes and the negative-grade policy.

This module is the bridge between judgments and every measure (single-query and
session).  Everything is columnar: one float per result row, NaN meaning *unjudged*.
Spec: ``spec/metrics.md`` section 1.  The grade of each row comes from the one join
in :mod:`sessionval.judgments.lookup`, the unjudged policy is in
:mod:`sessionval.judgments.unjudged` and the ideal vectors in
:mod:`sessionval.judgments.ideal`.

API (all vectorised, no Python loop per row, query or session)
--------------------------------------------------------------
**Gains from grades**: a frozen :class:`GainScheme`, obtained with
   ``gain_scheme(spec)`` where ``spec`` is a name (``"0-1-2-3"``, ``"0-1-1-1"``,
   ``"0-0-0-1"``, ``"0-1-10-100"``, ``"0-1-4-10"``, ``"exp"`` = 2^g − 1,
   ``"grade"`` = the grade itself, trec_eval's ndcg gain), any dash list of gains
   for grades 0, 1, 2, … (``"0-2-5"``), a ``Mapping[int, float]`` or a scheme.

   ``scheme.gains(grades, *, negative="clip") -> float64[n]`` maps grades to gains;
   NaN (unjudged) stays NaN.  ``scheme.apply(grades, *, negative=..., unjudged="zero")``
   returns a :class:`Gains` with the gains *and* the counts of negative and unjudged
   rows, for reporting.  A grade outside a mapping raises :class:`JudgmentError`
   naming it.

   Negative grades (TREC's −2 spam, −1 off-topic), ``negative=``:
   ``"clip"`` (default) treats them as grade 0; ``"keep"`` sends them through the
   gain function (``exp``: 2^−1 − 1 = −0.5; a mapping must then contain them);
   ``"error"`` raises.


Examples
--------
>>> import numpy as np
>>> gain_scheme("0-1-10-100").gains(np.array([0.0, 1, 2, 3, np.nan]))
array([  0.,   1.,  10., 100.,  nan])
>>> gain_scheme("exp").gains(np.array([-1.0, 2.0]), negative="keep")
array([-0.5,  3. ])
>>> gain_scheme("exp").gains(np.array([-1.0, 2.0]))
array([0., 3.])
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .._types import FloatArray
from ..errors import JudgmentError, MeasureSpecError

__all__ = [
    "GAIN_SCHEMES",
    "GainScheme",
    "GainSpec",
    "Gains",
    "NegativePolicy",
    "gain_scheme",
]

NegativePolicy: TypeAlias = Literal["clip", "keep", "error"]

_NEGATIVE: Final = ("clip", "keep", "error")


@dataclass(frozen=True, slots=True)
class GainScheme:
    """A map from grades to gains.

    Parameters
    ----------
    name
        Canonical name (``"0-1-10-100"``, ``"exp"``, ``"grade"``, or a dash list /
        ``"{g:v,...}"`` form for custom mappings); ``str(scheme)`` returns it.
    kind
        ``"mapping"`` (a table of grade -> gain), ``"exp"`` (2^g − 1, any grade) or
        ``"grade"`` (the grade itself, any grade).
    mapping
        For ``kind="mapping"``: sorted ``(grade, gain)`` pairs.

    Notes
    -----
    The named weighting schemes are those of Järvelin & Kekäläinen (2002: 0-1-1-1,
    0-0-0-1, 0-1-10-100; RN-2002-2: 0-1-4-10) and Järvelin et al. (2008: 0-1-10-100);
    ``exp`` is Burges et al. (2005)'s :math:`2^g - 1`.
    """

    name: str
    kind: Literal["mapping", "exp", "grade"] = "mapping"
    mapping: tuple[tuple[int, float], ...] = ()

    def __str__(self) -> str:
        return self.name

    @property
    def grades(self) -> tuple[int, ...] | None:
        """Grades the scheme accepts (``None``: any integer grade)."""
        return tuple(g for g, _ in self.mapping) if self.kind == "mapping" else None

    def gain_of(self, grade: int) -> float:
        """Gain of one grade (no negative policy applied)."""
        return float(self.gains(np.array([grade], dtype=np.float64), negative="keep")[0])

    def gains(self, grades: npt.ArrayLike, *, negative: NegativePolicy = "clip") -> FloatArray:
        """Map a float grade array (NaN = unjudged) to a float64 gain array.

        Parameters
        ----------
        grades
            Grades, one per result row; NaN marks an unjudged document and stays NaN.
        negative
            ``"clip"``: a grade < 0 counts as grade 0; ``"keep"``: it goes through the
            gain function; ``"error"``: raise :class:`JudgmentError`.

        Returns
        -------
        numpy.ndarray
            float64 gains, same length, NaN where the grade was NaN.

        Raises
        ------
        JudgmentError
            A grade outside the mapping, a non-integer grade, or a negative grade
            under ``negative="error"``.

        Examples
        --------
        >>> gain_scheme("0-1-4-10").gains([3, 1, 0])
        array([10.,  1.,  0.])
        >>> gain_scheme({0: 0, 1: 5}).gains([2])
        Traceback (most recent call last):
        ...
        sessionval.errors.JudgmentError: grade 2 is not in gain scheme {0:0,1:5} ...
        """
        g = np.asarray(grades, dtype=np.float64)
        if negative not in _NEGATIVE:
            raise MeasureSpecError(
                f"negative-grade policy {negative!r} unknown; use one of {_NEGATIVE}"
            )
        neg = g < 0  # NaN compares False
        if neg.any():
            if negative == "error":
                bad = np.unique(g[neg])
                raise JudgmentError(
                    f"{int(neg.sum())} negative grade(s) found "
                    f"({', '.join(_fmt(x) for x in bad[:5])}); "
                    "negative-grade policy is 'error' (use 'clip' or 'keep')"
                )
            if negative == "clip":
                g = np.where(neg, 0.0, g)
        if self.kind == "exp":
            return np.exp2(g) - 1.0
        if self.kind == "grade":
            return g.copy()
        return self._map(g)

    def _map(self, g: FloatArray) -> FloatArray:
        known = ~np.isnan(g)
        vals = g[known]
        if vals.size and not np.all(vals == np.round(vals)):
            bad = vals[vals != np.round(vals)][0]
            raise JudgmentError(f"grade {_fmt(bad)} is not an integer (gain scheme {self.name})")
        lo = self.mapping[0][0]
        hi = self.mapping[-1][0]
        lut = np.full(hi - lo + 1, np.nan)
        for grade, gain in self.mapping:
            lut[grade - lo] = gain
        idx = vals.astype(np.int64) - lo
        inside = (idx >= 0) & (idx <= hi - lo)
        ok = inside.copy()
        ok[inside] = ~np.isnan(lut[idx[inside]])
        if not ok.all():
            bad = np.unique(vals[~ok])
            allowed = ", ".join(str(gr) for gr, _ in self.mapping)
            raise JudgmentError(
                f"grade {', '.join(_fmt(x) for x in bad[:5])} is not in gain scheme {self.name} "
                f"(grades allowed: {allowed})"
            )
        out = np.full(g.shape, np.nan)
        out[known] = lut[idx]
        return out

    def apply(
        self,
        grades: npt.ArrayLike,
        *,
        negative: NegativePolicy = "clip",
        unjudged: Literal["zero", "keep", "error"] = "keep",
    ) -> Gains:
        """Gains plus the counts of negative and unjudged grades, for reporting.

        Parameters
        ----------
        grades
            Float grades (NaN = unjudged).
        negative
            Negative-grade policy, as in :meth:`gains`.
        unjudged
            ``"keep"`` leaves NaN in the gains (for :func:`apply_unjudged` or bpref-like
            measures), ``"zero"`` replaces them by 0, ``"error"`` raises.

        Returns
        -------
        Gains

        Examples
        --------
        >>> r = gain_scheme("exp").apply([-2, 1, float("nan")], negative="keep", unjudged="zero")
        >>> r.gains, r.n_negative, r.n_unjudged
        (array([-0.75,  1.  ,  0.  ]), 1, 1)
        """
        g = np.asarray(grades, dtype=np.float64)
        n_neg = int(np.count_nonzero(g < 0))
        unj = np.isnan(g)
        n_unj = int(np.count_nonzero(unj))
        out = self.gains(g, negative=negative)
        if unjudged == "error" and n_unj:
            raise JudgmentError(
                f"{n_unj} unjudged result(s) (first at row {int(np.flatnonzero(unj)[0])}); "
                "unjudged policy is 'error' (use 'zero' or 'condense')"
            )
        if unjudged == "zero":
            out[unj] = 0.0
        elif unjudged not in ("keep", "error"):
            raise MeasureSpecError(
                f"unjudged option {unjudged!r} unknown; use 'keep', 'zero' or 'error'"
            )
        return Gains(out, n_neg, n_unj)


@dataclass(frozen=True, slots=True)
class Gains:
    """Gains per row with the counts a report needs."""

    gains: FloatArray
    n_negative: int
    n_unjudged: int


GainSpec: TypeAlias = "str | Mapping[int, float] | GainScheme"


def _named(name: str, values: Sequence[float]) -> GainScheme:
    return GainScheme(name, "mapping", tuple((i, float(v)) for i, v in enumerate(values)))


GAIN_SCHEMES: Final[dict[str, GainScheme]] = {
    "0-1-2-3": _named("0-1-2-3", (0, 1, 2, 3)),
    "0-1-1-1": _named("0-1-1-1", (0, 1, 1, 1)),
    "0-0-0-1": _named("0-0-0-1", (0, 0, 0, 1)),
    "0-1-10-100": _named("0-1-10-100", (0, 1, 10, 100)),
    "0-1-4-10": _named("0-1-4-10", (0, 1, 4, 10)),
    "exp": GainScheme("exp", "exp"),
    "grade": GainScheme("grade", "grade"),
}
"""The named gain schemes (spec section 1); ``grade`` is trec_eval's gain = grade."""

_DASH = re.compile(r"^-?\d+(\.\d+)?(--?\d+(\.\d+)?)*$")


def gain_scheme(spec: str | Mapping[int, float] | GainScheme) -> GainScheme:
    """Resolve a gain-scheme spec to a :class:`GainScheme`.

    Parameters
    ----------
    spec
        A name from :data:`GAIN_SCHEMES`; a dash list of gains for grades 0, 1, 2, …
        (``"0-2-5"``); a ``"{grade:gain,...}"`` string; a mapping grade -> gain; or a
        scheme (returned as is).

    Returns
    -------
    GainScheme

    Raises
    ------
    MeasureSpecError
        The spec is not a known name nor a valid mapping.

    Examples
    --------
    >>> gain_scheme("0-1-10-100").gain_of(3)
    100.0
    >>> gain_scheme({0: 0, 1: 1, 2: 5}).name
    '{0:0,1:1,2:5}'
    >>> gain_scheme("0-2-5").gain_of(2)
    5.0
    """
    if isinstance(spec, GainScheme):
        return spec
    if isinstance(spec, str):
        s = spec.strip()
        if s in GAIN_SCHEMES:
            return GAIN_SCHEMES[s]
        if _DASH.match(s) and not s.startswith("-"):
            vals = [float(x) for x in s.split("-")]
            return _named(s, vals)
        if s.startswith("{") and s.endswith("}"):
            try:
                pairs = [p.split(":") for p in s[1:-1].split(",") if p.strip()]
                return gain_scheme({int(k): float(v) for k, v in pairs})
            except ValueError:
                pass
        raise MeasureSpecError(
            f"unknown gain scheme {spec!r}; use one of {', '.join(GAIN_SCHEMES)}, a dash list of "
            "gains for grades 0,1,2,... ('0-2-5') or a mapping '{grade:gain,...}'"
        )
    if isinstance(spec, Mapping):
        if not spec:
            raise MeasureSpecError("gain scheme mapping is empty")
        items = []
        for k, v in spec.items():
            if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
                raise MeasureSpecError(f"gain scheme grade {k!r} is not an integer")
            fv = float(v)
            if not math.isfinite(fv):
                raise MeasureSpecError(f"gain of grade {k} is {v!r}; gains must be finite")
            items.append((int(k), fv))
        items.sort()
        name = "{" + ",".join(f"{k}:{_fmt(v)}" for k, v in items) + "}"
        return GainScheme(name, "mapping", tuple(items))
    raise MeasureSpecError(f"gain scheme must be a name, a mapping or a GainScheme, got {spec!r}")


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


# ---------------------------------------------------------------------------
# grade lookup
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# unjudged policy
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# ideal gain vectors
# ---------------------------------------------------------------------------
