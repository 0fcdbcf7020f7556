"""Blocks of a least-squares model: indicator columns, and a block absorbed by demeaning.

A block factor of many levels (50,000 searchers) as dummy columns would need memory of
sessions × levels.  By the Frisch-Waugh-Lovell theorem, demeaning the outcome and the
other columns within that block gives the same coefficients, residuals and (with the
block's levels counted in the degrees of freedom) the same t tests as its dummies
(Frisch & Waugh 1933, Econometrica 1(4), 387-401; Lovell 1963, JASA 58(304), 993-1010).
Used by the blocks model of :mod:`sessionval.analysis.by_design` and the strategy model
of :mod:`sessionval.analysis.reformulation_strategies`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._types import FloatArray

__all__ = ["demean_within", "indicator_columns", "pinv_and_rank"]


def indicator_columns(codes: npt.NDArray[np.integer], n_levels: int) -> FloatArray:
    """Treatment-coded indicators of a factor's ``codes`` (0 .. n_levels-1; level 0 dropped).

    Examples
    --------
    >>> indicator_columns(np.array([0, 2, 1, 2]), 3).tolist()
    [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]
    """
    x = np.zeros((len(codes), max(n_levels - 1, 0)))
    hit = np.flatnonzero(codes > 0)
    x[hit, codes[hit] - 1] = 1.0
    return x


def demean_within(
    x: FloatArray,
    codes: npt.NDArray[np.integer],
    n_groups: int,
    weights: FloatArray | None = None,
) -> FloatArray:
    """Each column of ``x`` minus its mean within the groups ``codes`` (0 .. n_groups-1).

    With ``weights`` (rows that stand for several equal observations: the cells of
    :mod:`sessionval.analysis.cell_sums`), the weighted mean: the absorption of a block
    in weighted least squares.

    Examples
    --------
    >>> demean_within(np.array([[1.0], [3.0], [5.0]]), np.array([0, 0, 1]), 2).ravel().tolist()
    [-1.0, 1.0, 0.0]
    >>> demean_within(np.array([[1.0], [4.0]]), np.array([0, 0]), 1, np.array([2.0, 1.0]))
    array([[-1.],
           [ 2.]])
    """
    if weights is None:
        counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
        columns = list(x.T)
    else:
        counts = np.asarray(np.bincount(codes, weights=weights, minlength=n_groups), np.float64)
        columns = [col * weights for col in x.T]
    means = np.column_stack(
        [np.bincount(codes, weights=col, minlength=n_groups) / counts for col in columns]
    ).reshape(n_groups, x.shape[1])
    return np.asarray(x - means[codes], dtype=np.float64)


def pinv_and_rank(x: FloatArray) -> tuple[FloatArray, int]:
    """The pseudo-inverse of ``x`` and its rank, from one singular value decomposition.

    ``np.linalg.pinv(x)`` (singular values below ``1e-15`` of the largest dropped) and
    ``np.linalg.matrix_rank(x)`` (tolerance ``max(x.shape) * eps`` times the largest)
    each decompose ``x``; on a design of 200,000 sessions the second decomposition
    costs as much as the first.  The pseudo-inverse is computed as numpy computes it,
    so it is the same bit for bit.

    Examples
    --------
    >>> x = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 1.0]])
    >>> pinv, rank = pinv_and_rank(x)
    >>> rank, bool(np.array_equal(pinv, np.linalg.pinv(x)))
    (2, True)
    """
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    if s.size == 0:
        return np.zeros((x.shape[1], x.shape[0])), 0
    largest = s.max()
    rank = int(np.count_nonzero(s > largest * max(x.shape) * np.finfo(s.dtype).eps))
    large = s > 1e-15 * largest
    inverse = np.divide(1, s, where=large, out=s.copy())
    inverse[~large] = 0
    return np.matmul(vt.T, inverse[:, np.newaxis] * u.T), rank
