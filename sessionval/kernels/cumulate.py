r"""The one cumulated-gain-by-rank engine: rows summed into (cell, rank) cells, cumulated.

Järvelin & Kekäläinen (2002), TOIS 20(4), section 2 [jk2002]: the cumulated gain
vector of a ranked list, :math:`CG[i] = \sum_{j \le i} G[j]`, and its discounted
form with :math:`G[j] / d(j)` in place of :math:`G[j]`.  One kernel computes both,
for one list per cell (:func:`~sessionval.measures.cg.gain_vectors`) or for the
lists of a group summed (the run's figures,
:mod:`sessionval.analysis.rank_curves`): a weighted ``bincount`` into the cells and
a ``cumsum`` along ranks (``benchmarks/bench_curves.py``: as fast as assigning into a
dense matrix for one list per cell, and it sums the lists of a group as well).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._types import FloatArray, IntArray
from .segments import cut_segments, segment_ids, segment_ranks, segment_sum

__all__ = ["add_at_index", "add_by_rank", "cumulate_by_rank", "cumulate_down", "cumulate_lists"]


def cumulate_by_rank(
    cells: IntArray,
    rank: IntArray,
    values: npt.ArrayLike,
    *,
    n_cells: int,
    ranks: int,
    sums: FloatArray | None = None,
) -> FloatArray:
    r"""Sum ``values`` per (cell, rank) and cumulate along ranks.

    Parameters
    ----------
    cells
        Cell of each row (a list, a group, or a group × topic), ``0..n_cells-1``.
    rank
        Rank of each row, ``1..ranks``.
    values
        What each row adds at its rank (a gain, a discounted gain, …).
    n_cells, ranks
        Shape of the result.
    sums
        The (cell, rank) sums of the rows of earlier chunks, ``(n_cells, ranks)``
        C-contiguous: these rows are added to it in place, and the result cumulates it.
        Rows passed chunk after chunk in row order give bit for bit the sums of one call
        (``np.add.at`` adds each row in order, as ``bincount`` does; a ``bincount`` per
        chunk added up would not), holding a chunk of rows in memory, not every row.

    Returns
    -------
    numpy.ndarray
        ``(n_cells, ranks)``: :math:`C[c, i] = \sum_{rows\ of\ c,\ rank \le i} v`,
        the cumulated gain vector of Järvelin & Kekäläinen (2002, section 2.1) summed
        over the cell's lists (divide by the number of lists for ``avg-vect``).

    Examples
    --------
    Two lists in cell 0 (gains 3, 2 at ranks 1, 2 and gain 1 at rank 1), none in cell 1:

    >>> cumulate_by_rank(np.array([0, 0, 0]), np.array([1, 2, 1]), [3.0, 2.0, 1.0],
    ...                  n_cells=2, ranks=3)
    array([[4., 6., 6.],
           [0., 0., 0.]])

    The same rows in two chunks:

    >>> sums = np.zeros((2, 3))
    >>> _ = cumulate_by_rank(np.array([0, 0]), np.array([1, 2]), [3.0, 2.0],
    ...                      n_cells=2, ranks=3, sums=sums)
    >>> cumulate_by_rank(np.array([0]), np.array([1]), [1.0], n_cells=2, ranks=3, sums=sums)
    array([[4., 6., 6.],
           [0., 0., 0.]])
    """
    if sums is None:
        flat = segment_sum(values, cells * ranks + rank - 1, n_cells * ranks)
    else:
        flat = add_by_rank(sums, cells, rank, values)
    out: FloatArray = np.cumsum(flat.reshape(n_cells, ranks), axis=1)
    return out


def add_by_rank(
    sums: FloatArray, cells: IntArray, rank: IntArray, values: npt.ArrayLike
) -> FloatArray:
    """Add each row's value into its (cell, rank) sum in place, in row order; not cumulated.

    The sums of :func:`cumulate_by_rank` (``sums=``) without its cumulation, for a caller
    that adds chunk after chunk and cumulates once at the end (the run's curves).
    ``sums`` is ``(n_cells, ranks)`` C-contiguous; returned.

    Examples
    --------
    >>> sums = np.zeros((1, 2))
    >>> add_by_rank(sums, np.array([0, 0, 0]), np.array([1, 2, 1]), [3.0, 2.0, 1.0])
    array([[4., 2.]])
    """
    return add_at_index(sums, cells * sums.shape[-1] + rank - 1, values)


def add_at_index(sums: FloatArray, index: IntArray, values: npt.ArrayLike) -> FloatArray:
    """:func:`add_by_rank` with each row's flat index ``cell * ranks + rank - 1`` given.

    For a caller that adds several values per row into cells of the same layout (the
    index is taken once for all of them).  ``sums`` is C-contiguous; returned.

    Examples
    --------
    >>> add_at_index(np.zeros((1, 2)), np.array([0, 1, 0]), [3.0, 2.0, 1.0])
    array([[4., 2.]])
    """
    np.add.at(sums.reshape(-1), index, np.asarray(values, dtype=np.float64))
    return sums


def cumulate_down(matrix: FloatArray) -> FloatArray:
    r"""Cumulate each column of a ``(ranks, n)`` matrix along ranks, in place.

    :math:`C[i, q] = C[i - 1, q] + G[i, q]`: the cumulated gain vector of Järvelin &
    Kekäläinen (2002, section 2.1) of each list laid out a list per column, the same
    additions in the same order as ``np.cumsum(matrix, axis=0)``, taken a rank (a
    contiguous row) at a time for every list at once: several times faster than
    ``cumsum`` along lists laid out by row, whose additions wait on each other.

    Examples
    --------
    >>> cumulate_down(np.array([[3.0, 1.0], [2.0, 0.0], [3.0, 2.0]]))
    array([[3., 1.],
           [5., 1.],
           [8., 3.]])
    """
    for i in range(1, matrix.shape[0]):
        np.add(matrix[i], matrix[i - 1], out=matrix[i])
    return matrix


def cumulate_lists(
    offsets: IntArray, values: FloatArray, *, ranks: int, discount: FloatArray | None = None
) -> FloatArray:
    r"""The cumulated (discounted) vector of each list to rank ``ranks``: one cell per list.

    Parameters
    ----------
    offsets
        Segment offsets of the lists (``n + 1``); row ``j`` of a list is its rank ``j + 1``.
    values
        Gain of each row.
    ranks
        Length of the vectors; a shorter list holds its final value.
    discount
        :math:`d(1..ranks)`, dividing each gain first (the DCG vector); ``None``: CG.

    Returns
    -------
    numpy.ndarray
        ``(n, ranks)``.

    Examples
    --------
    The worked example of Järvelin & Kekäläinen (2002), section 2.1, to rank 5:

    >>> cumulate_lists(np.array([0, 10]), np.array([3.0, 2, 3, 0, 0, 1, 2, 2, 3, 0]), ranks=5)
    array([[3., 5., 8., 8., 8.]])
    """
    rows, cut = cut_segments(offsets, ranks)
    seg = segment_ids(cut)
    rank = segment_ranks(cut, seg)
    v = values[rows] if discount is None else values[rows] / discount[rank - 1]
    return cumulate_by_rank(seg, rank, v, n_cells=offsets.size - 1, ranks=ranks)
