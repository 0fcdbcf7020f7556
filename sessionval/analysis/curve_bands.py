"""The confidence bands of the curves: sums of squared cumulated vectors, Student t intervals.

:func:`cumulated_squares` gives, per cell, the sum over its lists of the squared
cumulated vector (the spread behind a band, on the one engine
:func:`~sessionval.kernels.cumulate.cumulate_by_rank`); :func:`add_bands` turns a
curve's means, sums of squares and counts into ``se``, ``ci_low`` and ``ci_high``.
Both work on sums, so the bands of curves summed over partitions are the same
computation (:mod:`sessionval.analysis.curve_partials`).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import MeasureSpecError
from ..kernels.cumulate import cumulate_by_rank

__all__ = [
    "QUERY_BLOCK",
    "CellRuns",
    "add_bands",
    "add_column_squares",
    "add_squares",
    "cell_runs",
    "cumulated_squares",
]

#: Queries per chunk of the curves (and per dense block of :func:`cumulated_squares`):
#: the curves hold a chunk's rows at a time, not every result row of the study.
QUERY_BLOCK: Final[int] = 1 << 14

#: Unit roundoff of float64, for the rounding error of the sums of squares.
EPS: Final[float] = float(np.finfo(np.float64).eps) / 2


def cumulated_squares(
    query: IntArray,
    rank: IntArray,
    values: npt.ArrayLike,
    query_cell: IntArray,
    *,
    n_cells: int,
    ranks: int,
    divisor: tuple[FloatArray, IntArray] | None = None,
    block: int = QUERY_BLOCK,
    out: FloatArray | None = None,
) -> FloatArray:
    r"""Sum over each cell's lists of the squared cumulated vector, :math:`\sum_q C_q[i]^2`.

    The spread of the curves behind their confidence bands: with the sums of
    :func:`cumulate_by_rank` it gives the standard deviation of :math:`C_q[i]` over the
    lists of a cell.  Lists are expanded to dense vectors in fixed-size blocks (bounded
    memory, no loop per list).

    Parameters
    ----------
    query
        List (query) index of each row, non-decreasing.
    rank
        Rank of each row, ``1..ranks``.
    values
        What each row adds at its rank.
    query_cell
        Cell of each list (``-1``: left out).
    n_cells, ranks
        Shape of the result.
    divisor
        ``(matrix, row)``: divide list ``q``'s vector by ``matrix[row[q]]`` first (the
        ideal vector of its topic, for nCG and nDCG).
    block
        Lists per dense block.
    out
        ``(n_cells, ranks)`` sums to add to in place (and return): the squares of a
        study taken chunk by chunk of ``block`` lists (list indices from 0 in each).

    Returns
    -------
    numpy.ndarray
        ``(n_cells, ranks)``.

    Examples
    --------
    Two lists in cell 0, gains (3, 2) and (1, 0): cumulated (3, 5) and (1, 1):

    >>> cumulated_squares(np.array([0, 0, 1]), np.array([1, 2, 1]), [3.0, 2.0, 1.0],
    ...                   np.array([0, 0]), n_cells=1, ranks=2)
    array([[10., 26.]])
    """
    v = np.asarray(values, dtype=np.float64)
    n_q = query_cell.size
    if out is None:
        out = np.zeros((n_cells, ranks))
    starts = np.searchsorted(query, np.arange(0, n_q + block, block))
    for b, q0 in enumerate(range(0, n_q, block)):
        q1 = min(n_q, q0 + block)
        r0, r1 = int(starts[b]), int(starts[b + 1])
        # each list its own cell of the one engine
        cum = cumulate_by_rank(
            query[r0:r1] - q0, rank[r0:r1], v[r0:r1], n_cells=q1 - q0, ranks=ranks
        )
        if divisor is not None:
            matrix, row = divisor
            with np.errstate(divide="ignore", invalid="ignore"):
                cum = cum / matrix[row[q0:q1]]
        add_squares(out, cum, cell_runs(query_cell[q0:q1]))
    return out


#: ``(order, cell, first)`` of :func:`cell_runs`: the lists of a block grouped by cell.
CellRuns = tuple[IntArray, IntArray, IntArray]


def cell_runs(cells: IntArray) -> CellRuns:
    """The lists of a block grouped by cell: their order, and where each cell's run starts.

    ``cells`` gives each list's cell (``-1``: left out).  Taken once for a block whose
    lists are summed into the same cells several times (:func:`add_squares`).
    """
    keep = np.flatnonzero(cells >= 0)
    order = keep[np.argsort(cells[keep], kind="stable")]
    cell = cells[order]
    first = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]]) if cell.size else cell
    return order, cell, first


def add_squares(out: FloatArray, cum: FloatArray, runs: CellRuns) -> FloatArray:
    """Add each cell's sum of the squared cumulated vectors ``cum`` (a row per list) to ``out``.

    ``runs``: :func:`cell_runs` of the lists' cells.  The lists of each cell are summed as
    one segment (``np.add.at`` on rows: 10x slower).  The last step of
    :func:`cumulated_squares`, for a block whose cumulated vectors serve several sums.
    """
    order, cell, first = runs
    out[cell[first]] += np.add.reduceat(cum[order] ** 2, first, axis=0)
    return out


def add_column_squares(
    out: FloatArray,
    squares: FloatArray,
    runs: CellRuns,
    column: IntArray | None,
    scratch: FloatArray,
) -> FloatArray:
    """:func:`add_squares` of squared vectors laid out a list per column: ``(ranks, n)``.

    ``column[i]``: the column of list ``i`` (``None``: column ``i``); ``scratch`` a
    C-contiguous ``(ranks, n)`` matrix.  When each cell's lists are adjacent columns in
    list order, each cell is summed where it lies; else its lists are gathered into
    ``scratch`` first.  The sums along a row are the sums :func:`add_squares` takes down
    a column (``np.add.reduceat`` adds a segment the same way whatever its stride): the
    same bits, without a gather of the whole matrix per sum.
    """
    order, cell, first = runs
    if not order.size:
        return out
    cols = order if column is None else column[order]
    if cols.size == squares.shape[1] and np.array_equal(cols, np.arange(cols.size)):
        block = squares
    else:
        block = np.take(squares, cols, axis=1, out=scratch[:, : cols.size], mode="clip")
    out[cell[first]] += np.add.reduceat(block, first, axis=1).T
    return out


def add_bands(
    table: pd.DataFrame,
    *,
    mean: str,
    sumsq: FloatArray,
    n: npt.ArrayLike,
    confidence: float,
) -> pd.DataFrame:
    r"""Add ``se``, ``ci_low`` and ``ci_high`` to a curve table, row by row.

    :math:`se = \sqrt{(\sum x^2 - n\bar x^2)/(n - 1)} / \sqrt n` and the Student t
    interval :math:`\bar x \pm t_{(1+c)/2,\,n-1}\, se` of each point's mean (NaN below
    two lists or sessions).  A residue :math:`\sum x^2 - n\bar x^2` within the rounding
    error of the sums, :math:`2 n u \sum x^2` (Higham 2002, *Accuracy and Stability of
    Numerical Algorithms*, section 4.2), is taken as 0: points whose values are all
    equal have ``se`` 0, however their sums were taken (in one pass or by partitions).

    Parameters
    ----------
    table
        The curve rows (``mean`` column holds each point's mean).
    mean
        Column of the means.
    sumsq
        Sum of squares behind each row's mean, in row order.
    n
        Number of values behind each row's mean.
    confidence
        Level of the interval, in (0, 1).
    """
    # the t quantile as scipy.stats.t.ppf computes it (its _ppf is this call), without
    # importing scipy.stats: about 0.8 s of a run's figures stage, a quarter of that here
    from scipy.special import stdtrit

    if not 0.0 < confidence < 1.0:
        raise MeasureSpecError(f"confidence must be in (0, 1), got {confidence}")
    m = table[mean].to_numpy(dtype=np.float64)
    nn = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        sq = np.asarray(sumsq, dtype=np.float64)
        resid = sq - nn * m**2
        # within the rounding error of the sums ((n - 1) u sum(x^2), Higham 2002, 4.2) the
        # residue is noise: equal values get se 0 whatever order their sums were taken in
        var = np.where(resid > 2.0 * nn * EPS * sq, resid, 0.0) / (nn - 1.0)
        se = np.where(nn >= 2, np.sqrt(var / nn), np.nan)
        half = stdtrit(nn - 1.0, (1.0 + confidence) / 2.0) * se
    out = table.copy()
    out["se"] = se
    out["ci_low"] = m - half
    out["ci_high"] = m + half
    return out
