"""Grades to gains: gain schemes, negative/unjudged policies, grade lookup, ideal vectors.

This module is the bridge between judgments and every measure (single-query and
session).  Everything is columnar: one float per result row, NaN meaning *unjudged*.
Spec: ``docs`` / ``spec/metrics.md`` section 1.

API for measure code (all vectorised, no Python loop per row, query or session)
------------------------------------------------------------------------------
1. **Grades per result row**

   ``result_grades(frame, judgments, *, source="reference") -> float64[n_results]``
       grade of every row of ``frame.results`` (NaN = unjudged).  With
       ``source="reference"`` the judgment key of a row is
       ``frame.queries["qrels_id"]`` at ``frame.results["query_idx"]``; with
       ``source="searcher"`` it is ``frame.results["user_grade"]`` (``judgments``
       may then be ``None``).

   ``lookup_grades(keys, docs, judgments) -> float64[n]``
       the same join for any (judgment key, doc id) pairs (categorical Series,
       ``pd.Categorical`` or plain arrays).  Ids are encoded once against the
       judgments' categories (per *category*, not per row), the two integer codes are
       combined into one int64 key and joined with a hash table (pandas ``Index``).
       Build a :class:`JudgmentIndex` once (``JudgmentIndex.build(judgments)``) and
       pass it instead of the frame to reuse the sorted keys across calls.

2. **Gains from grades**: a frozen :class:`GainScheme`, obtained with
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

3. **Unjudged documents**: ``apply_unjudged(gains, offsets, *, policy)`` with
   ``policy`` in ``"zero"`` (gain 0, default), ``"condense"`` (remove unjudged rows
   from each list, later rows move up; Sakai's condensed lists) and ``"error"``.
   It returns ``(gains, offsets, rows)``: the new per-row values (no NaN left), the new
   segment offsets and, per output row, its row number in the input, so any other
   column can follow with ``column[rows]``.

4. **Ideal gain vectors**: ``ideal_gains(judgments, scheme, *, negative="clip")``
   returns an :class:`IdealGains` in *segment layout*: ``keys`` (a ``pd.Index`` of
   judgment keys: every topic of the judgments, in category order), ``offsets``
   (int64, ``len(keys) + 1``) and ``values`` (float64 gains of the recall base,
   grade > 0, descending within each key).  ``n_relevant`` is the recall base size
   ``R`` per key.  ``ideal.positions(labels)`` maps labels to key positions (−1 when a
   key has no judgments); ``ideal.dense(positions, depth=X)`` gives an
   ``(n, X)`` matrix of the top-X ideal gains (zero-padded), which is what sDCG's
   ideal session needs; ``ideal.segments(positions, depth=k)`` gives the same as
   (offsets, values) without padding for long depths.

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
import pandas as pd

from ..errors import JudgmentError, MeasureSpecError
from ..frame import JudgmentFrame, SessionFrame

__all__ = [
    "GAIN_SCHEMES",
    "GainScheme",
    "GainSpec",
    "Gains",
    "IdealGains",
    "JudgmentIndex",
    "NegativePolicy",
    "UnjudgedPolicy",
    "apply_unjudged",
    "gain_scheme",
    "ideal_gains",
    "index_in",
    "lookup_grades",
    "result_grades",
    "string_ranks",
]

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
NegativePolicy: TypeAlias = Literal["clip", "keep", "error"]
UnjudgedPolicy: TypeAlias = Literal["zero", "condense", "error"]

_NEGATIVE: Final = ("clip", "keep", "error")
_UNJUDGED: Final = ("zero", "condense", "error")


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


def _is_string_index(idx: pd.Index) -> bool:
    return idx.dtype == object or pd.api.types.is_string_dtype(idx.dtype)


def index_in(values: pd.Index, lookup: pd.Index) -> IntArray:
    """Position of each of ``values`` in ``lookup`` (−1 when absent), as int64.

    String indexes go through Arrow's hash table (``pyarrow.compute.index_in``),
    several times faster than ``Index.get_indexer`` on millions of ids; other dtypes
    use pandas.  ``lookup`` must not contain duplicates.
    """
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    if _is_string_index(values) and _is_string_index(lookup):
        import pyarrow as pa
        import pyarrow.compute as pc

        res = pc.index_in(
            pa.array(
                np.asarray(values.astype(str), dtype=object)
                if values.dtype == object
                else values.array
            ),
            value_set=pa.array(
                np.asarray(lookup.astype(str), dtype=object)
                if lookup.dtype == object
                else lookup.array
            ),
        )
        return np.asarray(res.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    return np.asarray(lookup.get_indexer(values), dtype=np.int64)


def string_ranks(values: pd.Index) -> IntArray:
    """Rank (0-based) of each id in byte order (C ``strcmp``, as trec_eval sorts)."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(
        np.asarray(values.astype(str), dtype=object)
        if values.dtype == object
        else values.astype(str).array
    )
    order = np.asarray(pc.sort_indices(arr).to_numpy(), dtype=np.int64)
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(len(values), dtype=np.int64)
    return ranks


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


# ---------------------------------------------------------------------------
# grade lookup
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JudgmentIndex:
    """Judgments prepared for joins: sorted int64 keys ``topic_code * n_docs + doc_code``.

    Build once with :meth:`build` and reuse for many :func:`lookup_grades` calls.
    """

    topics: pd.Index
    docs: pd.Index
    keys: IntArray
    grades: FloatArray
    source: str
    key_index: pd.Index

    @property
    def _grades_nan(self) -> FloatArray:
        return np.append(self.grades, np.nan)

    @classmethod
    def build(cls, judgments: JudgmentFrame) -> JudgmentIndex:
        """Sort the judgments' combined keys; raise on a (topic, doc) judged twice."""
        t = judgments.table
        tcat = t["topic_id"].cat
        dcat = t["doc_id"].cat
        tc = tcat.codes.to_numpy().astype(np.int64)
        dc = dcat.codes.to_numpy().astype(np.int64)
        nd = max(len(dcat.categories), 1)
        keys = tc * nd + dc
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        grades = t["grade"].to_numpy().astype(np.float64)[order]
        missing = (tc < 0) | (dc < 0)
        if missing.any():
            row = int(np.flatnonzero(missing)[0])
            raise JudgmentError(
                f"{judgments.source}: row {row}: judgment without topic_id or doc_id"
            )
        dup = np.flatnonzero(keys[1:] == keys[:-1])
        if dup.size:
            k = int(keys[dup[0]])
            raise JudgmentError(
                f"{judgments.source}: document {dcat.categories[k % nd]!r} "
                "is judged more than once "
                f"for topic {tcat.categories[k // nd]!r} ({dup.size} duplicate pair(s)); "
                "each (topic, document) must have one grade"
            )
        return cls(
            pd.Index(tcat.categories),
            pd.Index(dcat.categories),
            keys,
            grades,
            judgments.source,
            pd.Index(keys),
        )

    def lookup_codes(
        self,
        key_codes: npt.ArrayLike,
        key_categories: pd.Index,
        doc_codes: npt.ArrayLike,
        doc_categories: pd.Index,
    ) -> FloatArray:
        """Grades for rows given as integer codes into their own category indexes.

        Categories are translated once (``get_indexer`` over the categories, not the
        rows); rows then cost two ``take``, one multiply-add and one hash probe.
        """
        kc = np.asarray(key_codes)
        dc = np.asarray(doc_codes)
        nd = max(len(self.docs), 1)
        # ids absent from the judgments map to values that make the combined key
        # negative (never a judgment key); code -1 (missing) indexes the appended slot.
        # An unknown key is -1: key * nd + doc then lies in [-nd, -1] (a huge negative
        # sentinel times nd would overflow int64 beyond ~8M judged documents)
        kmap = index_in(pd.Index(key_categories), self.topics)
        kmap = np.append(np.where(kmap < 0, -1, kmap), -1)
        dmap = index_in(pd.Index(doc_categories), self.docs)
        dmap = np.append(np.where(dmap < 0, -(2**60), dmap), -(2**60))
        q = kmap[kc]
        q *= nd
        q += dmap[dc]
        n = q.size
        if n > 1 and np.count_nonzero(kc[1:] != kc[:-1]) * 8 < n:
            # rows grouped by key (every ranked list is): binary search on the sorted
            # judgment keys stays in cache and beats hashing ~2x
            pos = np.searchsorted(self.keys, q)
            pos[pos == self.keys.size] = 0
            hit = self.keys[pos] == q if self.keys.size else np.zeros(n, dtype=bool)
            pos[~hit] = -1
        else:
            # hash join (pandas' int64 hash table, built once per index and cached);
            # on random probes ~4x faster than searchsorted
            pos = self.key_index.get_indexer(pd.Index(q, copy=False))
        del q
        out: FloatArray = self._grades_nan[pos]  # -1 -> the NaN slot
        return out

    def lookup_lists(
        self,
        key_positions: npt.ArrayLike,
        counts: npt.ArrayLike,
        doc_codes: npt.ArrayLike,
        doc_categories: pd.Index,
    ) -> FloatArray:
        """Grades for rows grouped in lists (NaN when unjudged).

        List ``i`` owns the next ``counts[i]`` rows; its judgment key is
        ``topics[key_positions[i]]`` (−1: a key without judgments);
        ``doc_codes`` index ``doc_categories`` (−1: missing).  The key part of each
        row's combined key is built per list, and the probe is a binary search on the
        sorted judgment keys (rows grouped by key stay in cache).
        """
        dc = np.asarray(doc_codes)
        nd = max(len(self.docs), 1)
        kmap = np.asarray(key_positions, dtype=np.int64)
        # an unknown key or doc makes the combined key negative (never a judgment key)
        base = np.where(kmap < 0, -(2**61), kmap * nd).astype(np.int64)
        dmap = index_in(pd.Index(doc_categories), self.docs)
        dmap = np.append(np.where(dmap < 0, -(2**60), dmap), -(2**60))
        cnt = np.asarray(counts, dtype=np.int64)
        off = np.zeros(cnt.size + 1, dtype=np.int64)
        np.cumsum(cnt, out=off[1:])
        n = int(off[-1])
        out = np.full(n, np.nan)
        if self.keys.size == 0:
            return out
        last = self.keys.size - 1
        # fixed-size blocks of rows (not a loop per list): the temporaries stay small
        # and in cache, which bounds peak memory on tens of millions of rows
        for a in range(0, n, _LOOKUP_BLOCK):
            b = min(a + _LOOKUP_BLOCK, n)
            i0 = int(np.searchsorted(off, a, side="right")) - 1
            i1 = int(np.searchsorted(off, b, side="left"))
            part = np.minimum(off[i0 + 1 : i1 + 1], b) - np.maximum(off[i0:i1], a)
            q = dmap[dc[a:b]]
            q += np.repeat(base[i0:i1], part)
            pos = np.searchsorted(self.keys, q)
            np.minimum(pos, last, out=pos)
            hit = np.flatnonzero(self.keys[pos] == q)
            out[a + hit] = self.grades[pos[hit]]
        return out


_LOOKUP_BLOCK: Final[int] = 1 << 20


def _as_categorical(values: object) -> tuple[IntArray, pd.Index]:
    if isinstance(values, pd.Series):
        if isinstance(values.dtype, pd.CategoricalDtype):
            return values.cat.codes.to_numpy().astype(np.int64), pd.Index(values.cat.categories)
        values = values.to_numpy()
    if isinstance(values, pd.Categorical):
        return np.asarray(values.codes, dtype=np.int64), pd.Index(values.categories)
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    return codes.astype(np.int64), pd.Index(uniques.astype(str))


def lookup_grades(
    keys: pd.Series | pd.Categorical | npt.ArrayLike,
    docs: pd.Series | pd.Categorical | npt.ArrayLike,
    judgments: JudgmentFrame | JudgmentIndex,
) -> FloatArray:
    """Grade of each (judgment key, document) pair; NaN when unjudged.

    Parameters
    ----------
    keys
        Judgment key (topic, or session/turn id) per row: categorical Series,
        ``pd.Categorical`` or array of strings.
    docs
        Document id per row, same kinds.
    judgments
        The judgments, or a prebuilt :class:`JudgmentIndex`.

    Returns
    -------
    numpy.ndarray
        float64 grades, NaN where the pair has no judgment.

    Notes
    -----
    Ids are encoded to integer codes once per category; pairs are combined into one
    int64 key and joined against the judgment keys with a hash table
    (O(n log m), no Python loop per row).

    Examples
    --------
    >>> import pandas as pd
    >>> from sessionval.frame import JudgmentFrame
    >>> from sessionval.models.judgments import GradeScale
    >>> t = pd.DataFrame({"topic_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"],
    ...                   "grade": [2, 0, 1], "assessor": [""] * 3}).astype(
    ...     {"topic_id": "category", "doc_id": "category", "grade": "int16",
    ...      "assessor": "category"})
    >>> j = JudgmentFrame(t, GradeScale.default())
    >>> lookup_grades(["1", "1", "2", "3"], ["a", "c", "a", "a"], j)
    array([ 2., nan,  1., nan])
    """
    index = judgments if isinstance(judgments, JudgmentIndex) else JudgmentIndex.build(judgments)
    kc, kcat = _as_categorical(keys)
    dc, dcat = _as_categorical(docs)
    if kc.shape != dc.shape:
        raise JudgmentError(f"keys and docs differ in length ({kc.size} vs {dc.size})")
    return index.lookup_codes(kc, kcat, dc, dcat)


def result_grades(
    frame: SessionFrame,
    judgments: JudgmentFrame | JudgmentIndex | None,
    *,
    source: Literal["reference", "searcher"] = "reference",
) -> FloatArray:
    """Grade of every row of ``frame.results`` (NaN = unjudged).

    Parameters
    ----------
    frame
        The study.
    judgments
        Reference judgments (required for ``source="reference"``).
    source
        ``"reference"``: look up (``queries.qrels_id`` of the row's query, ``doc_id``)
        in the judgments; ``"searcher"``: the searcher's own ``user_grade``.

    Returns
    -------
    numpy.ndarray
        float64 grades, one per result row.
    """
    if source == "searcher":
        return frame.results["user_grade"].to_numpy(dtype=np.float64, na_value=np.nan)
    if source != "reference":
        raise MeasureSpecError(f"judgment source {source!r} unknown; use 'reference' or 'searcher'")
    if judgments is None:
        raise JudgmentError("judgment source 'reference' needs judgments (qrels); none were given")
    index = judgments if isinstance(judgments, JudgmentIndex) else JudgmentIndex.build(judgments)
    qcat = frame.queries["qrels_id"].cat
    qidx = frame.results["query_idx"].to_numpy().astype(np.int64)
    kc = qcat.codes.to_numpy().astype(np.int64)[qidx]
    dcat = frame.results["doc_id"].cat
    return index.lookup_codes(
        kc, pd.Index(qcat.categories), dcat.codes.to_numpy(), pd.Index(dcat.categories)
    )


# ---------------------------------------------------------------------------
# unjudged policy
# ---------------------------------------------------------------------------


def apply_unjudged(
    gains: npt.ArrayLike,
    offsets: npt.ArrayLike,
    *,
    policy: UnjudgedPolicy = "zero",
) -> tuple[FloatArray, IntArray, IntArray]:
    """Apply the unjudged policy to per-row gains in segment layout.

    Parameters
    ----------
    gains
        Gains per row, NaN for unjudged documents.
    offsets
        Segment offsets (length ``n_segments + 1``) of the rows.
    policy
        ``"zero"``: unjudged gain 0 (the papers); ``"condense"``: drop unjudged rows,
        later rows move up (Sakai 2007's condensed lists); ``"error"``: raise.

    Returns
    -------
    gains, offsets, rows
        New gains (no NaN), new offsets, and for each output row its input row number.

    Examples
    --------
    >>> g, off, rows = apply_unjudged([1.0, float("nan"), 3.0], [0, 3], policy="condense")
    >>> g, off, rows
    (array([1., 3.]), array([0, 2]), array([0, 2]))
    """
    g = np.asarray(gains, dtype=np.float64)
    off = np.asarray(offsets, dtype=np.int64)
    unj = np.isnan(g)
    if policy == "zero":
        return np.where(unj, 0.0, g), off.copy(), np.arange(g.size, dtype=np.int64)
    if policy == "error":
        if unj.any():
            raise JudgmentError(
                f"{int(unj.sum())} unjudged result(s) "
                f"(first at row {int(np.flatnonzero(unj)[0])}); "
                "unjudged policy is 'error' (use 'zero' or 'condense')"
            )
        return g.copy(), off.copy(), np.arange(g.size, dtype=np.int64)
    if policy == "condense":
        keep = ~unj
        rows = np.flatnonzero(keep).astype(np.int64)
        csum = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
        return g[rows], csum[off], rows
    raise MeasureSpecError(f"unjudged policy {policy!r} unknown; use one of {_UNJUDGED}")


# ---------------------------------------------------------------------------
# ideal gain vectors
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IdealGains:
    """Ideal gain vectors of every judgment key in segment layout.

    Parameters
    ----------
    keys
        Judgment keys (the judgments' ``topic_id`` categories, in category order).
    offsets
        int64, ``len(keys) + 1``: key ``i`` owns ``values[offsets[i]:offsets[i + 1]]``.
    values
        Gains of the recall base (grade > 0), descending within each key.
    scheme
        The gain scheme used.
    """

    keys: pd.Index
    offsets: IntArray
    values: FloatArray
    scheme: GainScheme

    @property
    def n_relevant(self) -> IntArray:
        """Recall-base size ``R`` per key (documents with grade > 0)."""
        return np.diff(self.offsets)

    def positions(self, labels: pd.Series | pd.Categorical | npt.ArrayLike) -> IntArray:
        """Key position of each label (−1 for a label without judgments).

        Categorical input is translated per category, not per row.
        """
        codes, cats = _as_categorical(labels)
        m = np.append(index_in(cats, self.keys), -1)
        return m[codes]

    def segments(
        self, positions: npt.ArrayLike, *, depth: int | None = None
    ) -> tuple[IntArray, FloatArray]:
        """Top-``depth`` ideal gains for each requested key, as (offsets, values).

        A position of −1 gives an empty segment.  Vectorised gather, no loop per key.
        """
        pos = np.asarray(positions, dtype=np.int64)
        valid = pos >= 0
        start = np.where(valid, self.offsets[np.maximum(pos, 0)], 0)
        length = np.where(valid, self.offsets[np.maximum(pos, 0) + 1] - start, 0)
        if depth is not None:
            length = np.minimum(length, depth)
        out_off = np.zeros(pos.size + 1, dtype=np.int64)
        np.cumsum(length, out=out_off[1:])
        total = int(out_off[-1])
        seg = np.repeat(np.arange(pos.size), length)
        within = np.arange(total, dtype=np.int64) - out_off[seg]
        return out_off, self.values[start[seg] + within]

    def dense(self, positions: npt.ArrayLike, *, depth: int) -> FloatArray:
        """Return an ``(n, depth)`` matrix of the top-``depth`` ideal gains, zero-padded.

        Examples
        --------
        >>> import pandas as pd
        >>> from sessionval.frame import JudgmentFrame
        >>> from sessionval.models.judgments import GradeScale
        >>> t = pd.DataFrame({"topic_id": ["1", "1", "1", "2"], "doc_id": list("abca"),
        ...                   "grade": [1, 3, 0, 2], "assessor": [""] * 4}).astype(
        ...     {"topic_id": "category", "doc_id": "category", "grade": "int16",
        ...      "assessor": "category"})
        >>> ideal = ideal_gains(JudgmentFrame(t, GradeScale.default()), "0-1-10-100")
        >>> ideal.dense(ideal.positions(["2", "1", "9"]), depth=3)
        array([[ 10.,   0.,   0.],
               [100.,   1.,   0.],
               [  0.,   0.,   0.]])
        """
        if depth < 0:
            raise MeasureSpecError(f"depth must be >= 0, got {depth}")
        off, vals = self.segments(positions, depth=depth)
        n = off.size - 1
        out = np.zeros((n, depth))
        seg = np.repeat(np.arange(n), np.diff(off))
        out[seg, np.arange(vals.size) - off[seg]] = vals
        return out


def ideal_gains(
    judgments: JudgmentFrame,
    scheme: str | Mapping[int, float] | GainScheme,
    *,
    negative: NegativePolicy = "clip",
) -> IdealGains:
    """Ideal gain vector per judgment key: the recall base's gains, descending.

    Parameters
    ----------
    judgments
        Reference judgments.
    scheme
        Gain scheme (anything :func:`gain_scheme` accepts).
    negative
        Negative-grade policy; negative grades are never in the recall base, the
        policy only decides whether they are an error.

    Returns
    -------
    IdealGains

    Notes
    -----
    Järvelin & Kekäläinen (2002), section 2.1: the ideal vector lists the recall
    base's gains in descending order, then zeros.  The recall base is every document
    with grade > 0 (spec section 1), so ``n_relevant`` is ``R`` for AP, Q, bpref.
    """
    sch = gain_scheme(scheme)
    t = judgments.table
    grades = t["grade"].to_numpy().astype(np.float64)
    if negative == "error" and (grades < 0).any():
        raise JudgmentError(
            f"{judgments.source}: {int((grades < 0).sum())} negative grade(s); "
            "negative-grade policy is 'error'"
        )
    rel = grades > 0
    codes = t["topic_id"].cat.codes.to_numpy().astype(np.int64)[rel]
    gains = sch.gains(grades[rel], negative="keep")
    order = np.lexsort((-gains, codes))
    keys = pd.Index(t["topic_id"].cat.categories)
    counts = np.bincount(codes, minlength=len(keys)).astype(np.int64)
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return IdealGains(keys, offsets, gains[order], sch)
