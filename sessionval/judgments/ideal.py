"""Recall bases and ideal gain vectors per judgment key (reference judgments or searchers').

The ideal vector of a key lists the gains of its recall base (grade > 0) in
descending order (Järvelin & Kekäläinen 2002, section 2.1), in segment layout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import JudgmentError, MeasureSpecError
from ..frame import JudgmentFrame, SessionFrame
from ..kernels.segments import offsets_from_counts
from ..models.judgments import GradeScale
from .gains import GainScheme, NegativePolicy, gain_scheme
from .lookup import as_categorical, index_in

__all__ = [
    "IdealGains",
    "ideal_from_codes",
    "ideal_gains",
    "searcher_ideal_gains",
]


def searcher_ideal_gains(
    frame: SessionFrame, scheme: GainScheme, negative: NegativePolicy
) -> IdealGains:
    """Ideal gains from the searchers' own grades: max grade per (qrels_id, document).

    The recall base of each judgment key pools the grades its searchers gave
    (``results.user_grade``); keys are the study's ``qrels_id`` categories.
    """
    res = frame.results
    ug = res["user_grade"].to_numpy(dtype=np.float64, na_value=np.nan)
    ok = ~np.isnan(ug)
    qcat = frame.queries["qrels_id"]
    key = qcat.to_numpy()[res["query_idx"].to_numpy()[ok]]
    t = pd.DataFrame({"topic_id": key, "doc_id": res["doc_id"].to_numpy()[ok], "grade": ug[ok]})
    t = t.groupby(["topic_id", "doc_id"], observed=True, sort=False)["grade"].max().reset_index()
    table = pd.DataFrame(
        {
            "topic_id": pd.Categorical(
                t["topic_id"].astype(str), categories=qcat.cat.categories.astype(str)
            ),
            "doc_id": t["doc_id"].astype(str).astype("category"),
            "grade": t["grade"].astype(np.int16),
            "assessor": pd.Categorical(["searcher"] * len(t)),
        }
    )
    scale = frame.grade_scale or GradeScale.from_grades(sorted({int(x) for x in t["grade"]}) or [0])
    return ideal_gains(
        JudgmentFrame(table, scale, source="searchers' grades"), scheme, negative=negative
    )


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
        codes, cats = as_categorical(labels)
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
        out_off = offsets_from_counts(length)
        total = int(out_off[-1])
        seg = np.repeat(np.arange(pos.size), length)
        within = np.arange(total, dtype=np.int64) - out_off[seg]
        return out_off, self.values[start[seg] + within]

    def take(self, positions: npt.ArrayLike, keys: pd.Index) -> IdealGains:
        """The ideal vectors of the keys at ``positions``, named ``keys`` (one each).

        Keys that share their judgments share one vector (judgment sets copied over
        queries: :mod:`sessionval.measures.judgment_sets`): it is built once and
        copied here.

        Examples
        --------
        >>> from sessionval.judgments.gains import gain_scheme
        >>> ig = ideal_from_codes(pd.Index(["s0", "s1"]), np.array([0, 0, 1]),
        ...                       np.array([1.0, 2.0, 3.0]), gain_scheme("grade"))
        >>> got = ig.take([1, 0, 1], pd.Index(["q1", "q2", "q3"]))
        >>> got.offsets.tolist(), got.values.tolist()
        ([0, 1, 3, 4], [3.0, 2.0, 1.0, 3.0])
        """
        offsets, values = self.segments(positions)
        return IdealGains(keys, offsets, values, self.scheme)

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
    codes = t["topic_id"].cat.codes.to_numpy().astype(np.int64)
    return ideal_from_codes(pd.Index(t["topic_id"].cat.categories), codes, grades, sch)


def ideal_from_codes(
    topics: pd.Index, codes: IntArray, grades: FloatArray, scheme: GainScheme
) -> IdealGains:
    """The one recall-base builder: each topic's gains of grade > 0, descending.

    Both grade joins feed it their topic codes (:func:`ideal_gains` the judgments'
    categories, the string-id road of ``evaluate_run`` its own codes).  Grades are
    integers (the judgments boundary checks it) taking few values: counting them per
    (topic, grade) and repeating each grade's gain, levels in descending gain, gives
    the sorted segments without a sort over the judgments (Järvelin & Kekäläinen
    2002, section 2.1: the ideal vector is the recall base's gains in descending order).

    Examples
    --------
    >>> from sessionval.judgments.gains import gain_scheme
    >>> ig = ideal_from_codes(pd.Index(["1", "2"]), np.array([0, 0, 1, 0]),
    ...                       np.array([1.0, 3.0, 2.0, 0.0]), gain_scheme("0-1-10-100"))
    >>> ig.offsets.tolist(), ig.values.tolist()
    ([0, 2, 3], [100.0, 1.0, 10.0])
    """
    rel = grades > 0
    g = grades[rel].astype(np.int64)
    top = int(g.max()) if g.size else 1
    if top <= 1024:  # a grade scale: one level per grade 1..top, no sort of the rows
        levels, level_of = np.arange(1, top + 1, dtype=np.float64), g - 1
    else:
        levels, level_of = np.unique(grades[rel], return_inverse=True)
    present = np.bincount(level_of, minlength=levels.size) > 0
    gains = np.zeros(levels.size)  # a level no judgment has (not in a mapping) holds no rows
    gains[present] = scheme.gains(levels[present], negative="keep")
    by_gain = np.argsort(-gains, kind="stable")  # levels in descending gain
    rank_of = np.empty_like(by_gain)
    rank_of[by_gain] = np.arange(by_gain.size)
    n_levels = levels.size
    counts = np.bincount(
        codes[rel] * n_levels + rank_of[level_of], minlength=len(topics) * n_levels
    ).reshape(len(topics), n_levels)
    values = np.repeat(np.tile(gains[by_gain], len(topics)), counts.ravel())
    return IdealGains(topics, offsets_from_counts(counts.sum(axis=1)), values, scheme)
