r"""Expected session nDCG and nCG (esNDCG, esNCG), computed exactly over every browsing path.

The browsing model of Kanoulas, Carterette, Clough & Sanderson (SIGIR 2011) as Jiang &
Allan's session-metrics code samples it (``ESNDCG`` in ``session_metrics.py``): in each
query's list the searcher examines rank 1, then goes down to the next rank with
probability ``pdown`` until the end of the list (``min(X, n)`` results; an empty list is
examined with no document); after each query the searcher reformulates (goes on to the
next query of the session) with probability ``pref``, or stops; the session's last query
ends the path.  A path is the concatenation of the documents examined; its value is

.. math::

    f(\text{path}) = \frac{\sum_{j=1}^{L} g_j\, \delta(j)}{\sum_{j=1}^{L} g^*_j\, \delta(j)}

with ``L`` the path length, ``g_j`` the gain at path position ``j`` (a repeated document
earns again), ``g^*`` the session's ideal gains in decreasing order and ``δ(j) =
1/log2(j + 1)`` (esNDCG) or ``1`` (esNCG).  The measure is the expectation of ``f``
over the paths.  The authors' code estimates it from 1000 sampled paths; the path space
is finite, so the kernel computes it exactly with a forward-backward recursion over the
path length:

* ``α_q(ℓ)``: probability of reaching query ``q`` with ``ℓ`` documents examined;
* ``B_q(m) = E[1/Z(L) | query q ends with m documents]``, with ``Z(L)`` the denominator:
  ``B_n(m) = 1/Z(m)``, ``B_q(m) = (1 - pref)/Z(m) + pref Σ_d P_{q+1}(d) B_{q+1}(m + d)``;
* ``E f = Σ_q Σ_i g_{q,i} Σ_ℓ α_q(ℓ) δ(ℓ + i) Σ_{d >= i} P_q(d) B_q(ℓ + d)``,

where ``P_q(d)`` is the probability that the searcher examines exactly ``d`` results of
query ``q``.  All sessions of a block run at once; the loops are over query positions
and ranks, never over sessions.

References
----------
Kanoulas, E., Carterette, B., Clough, P. D., Sanderson, M. (2011). Evaluating multi-query
sessions. SIGIR 2011, 1053-1062. https://doi.org/10.1145/2009916.2010056

Jiang, J., Allan, J. (2016). Correlation between system and user metrics in a session.
CHIIR 2016 (code: github.com/jiepujiang/ir_metrics, ``session_metrics.py``).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from .._types import FloatArray, IntArray
from .discounts import rank_discount
from .segments import offsets_from_counts, segment_ids, segment_ranks

__all__ = ["depth_probabilities", "expected_session_ndcg"]

#: Largest block of the recursion (sessions × queries × path lengths), in floats.
BLOCK_CELLS: Final = 1 << 22


def depth_probabilities(n_shown: npt.ArrayLike, width: int, *, pdown: float) -> FloatArray:
    """``P(d)``, ``d = 0..width``: probability of examining exactly ``d`` of ``n`` results.

    Rank 1 is always examined (when there is one); each further rank with probability
    ``pdown``; the list ends after ``n`` results.

    Examples
    --------
    >>> depth_probabilities([0, 3], 3, pdown=0.5)
    array([[1.  , 0.  , 0.  , 0.  ],
           [0.  , 0.5 , 0.25, 0.25]])
    """
    n = np.asarray(n_shown, dtype=np.int64)
    d = np.arange(width + 1)
    geometric = pdown ** np.maximum(d - 1, 0) * (1 - pdown)
    out = np.where(d[None, :] < n[:, None], geometric[None, :], 0.0)
    out[:, 0] = 0.0
    at_end = pdown ** np.maximum(n - 1, 0)
    out[np.arange(n.size), np.minimum(n, width)] = np.where(n > 0, at_end, 1.0)
    result: FloatArray = out
    return result


def _shift(a: FloatArray, d: int) -> FloatArray:
    """``a`` moved ``d`` cells: ``out[..., m] = a[..., m + d]``, 0 past the end."""
    if d == 0:
        return a
    out = np.zeros_like(a)
    out[..., : a.shape[-1] - d] = a[..., d:]
    return out


def _blocks(total: IntArray, n_queries: IntArray) -> list[IntArray]:
    """Sessions grouped into blocks of similar size whose dense arrays stay small."""
    order = np.argsort(total, kind="stable")
    blocks: list[IntArray] = []
    start = 0
    while start < order.size:
        stop = start + 1
        q_max, l_max = int(n_queries[order[start]]), int(total[order[start]])
        while stop < order.size:
            q = max(q_max, int(n_queries[order[stop]]))
            ell = max(l_max, int(total[order[stop]]))
            if (stop - start + 1) * max(q, 1) * (ell + 1) > BLOCK_CELLS:
                break
            q_max, l_max = q, ell
            stop += 1
        blocks.append(order[start:stop])
        start = stop
    return blocks


def expected_session_ndcg(
    gains: npt.ArrayLike,
    query_offsets: npt.ArrayLike,
    session_query_offsets: npt.ArrayLike,
    ideal_offsets: npt.ArrayLike,
    ideal_values: npt.ArrayLike,
    *,
    pref: float,
    pdown: float,
    discounted: bool = True,
) -> FloatArray:
    """Exact esNDCG (``discounted``) or esNCG of every session.

    Parameters
    ----------
    gains
        Gains of the results each query can show (its top ``min(X, n)``), queries in
        session order, ranks in order.
    query_offsets
        ``Q + 1`` offsets of each query's results in ``gains``.
    session_query_offsets
        ``S + 1`` offsets of each session's queries.
    ideal_offsets, ideal_values
        Each session's ideal gains in decreasing order (segment layout, ``S + 1``).
    pref, pdown
        Probability of reformulating after a query, of going down one rank.
    discounted
        ``δ(j) = 1/log2(j + 1)`` along the path (esNDCG) or ``1`` (esNCG).

    Returns
    -------
    FloatArray
        One value per session; NaN when the session's ideal gains are all 0.

    Examples
    --------
    One query showing (gain 1, gain 0), ideal (1), ``pdown = 0.5``: the path (d1) has
    value 1/1, the path (d1, d2) value 1/1, so esNCG is 1.  A second query showing d1
    again (a repeat earns again) is reached with ``pref = 0.5``: the four paths (d1),
    (d1, d1), (d1, d2), (d1, d2, d1) have probability 1/4 each and values 1, 2, 1, 2.

    >>> expected_session_ndcg([1.0, 0.0], [0, 2], [0, 1], [0, 1], [1.0],
    ...                       pref=0.5, pdown=0.5, discounted=False)
    array([1.])
    >>> float(expected_session_ndcg([1.0, 0.0, 1.0], [0, 2, 3], [0, 2], [0, 1], [1.0],
    ...                             pref=0.5, pdown=0.5, discounted=False)[0])
    1.5
    """
    g = np.asarray(gains, dtype=np.float64)
    q_off = np.asarray(query_offsets, dtype=np.int64)
    s_off = np.asarray(session_query_offsets, dtype=np.int64)
    i_off = np.asarray(ideal_offsets, dtype=np.int64)
    i_val = np.asarray(ideal_values, dtype=np.float64)
    n_s = s_off.size - 1
    shown = np.diff(q_off)
    n_queries = np.diff(s_off)
    per_query = np.r_[0, np.cumsum(shown)].astype(np.int64)
    total: IntArray = per_query[s_off[1:]] - per_query[s_off[:-1]]
    out = np.full(n_s, np.nan)
    for block in _blocks(total, n_queries):
        out[block] = _block_value(
            block, g, q_off, s_off, i_off, i_val, pref=pref, pdown=pdown, discounted=discounted
        )
    return out


def _block_value(
    block: IntArray,
    g: FloatArray,
    q_off: IntArray,
    s_off: IntArray,
    i_off: IntArray,
    i_val: FloatArray,
    *,
    pref: float,
    pdown: float,
    discounted: bool,
) -> FloatArray:
    """The recursion for the sessions of one block (dense arrays over queries and lengths)."""
    n_b = block.size
    n_q = np.diff(s_off)[block]
    q_max = max(int(n_q.max(initial=0)), 1)
    shown = np.diff(q_off)
    # the block's queries: (session row, query index in session, first result, count)
    qb_off = offsets_from_counts(n_q)
    q_row = segment_ids(qb_off)
    q_idx = segment_ranks(qb_off, q_row) - 1
    q_global = s_off[block][q_row] + q_idx
    n_sh = np.zeros((n_b, q_max), dtype=np.int64)
    n_sh[q_row, q_idx] = shown[q_global]
    width = max(int(n_sh.max(initial=0)), 1)
    l_max = int(n_sh.sum(axis=1).max(initial=0))
    gain = np.zeros((n_b, q_max, width))
    r_off = offsets_from_counts(n_sh[q_row, q_idx])
    r_q = segment_ids(r_off)
    r_rank = segment_ranks(r_off, r_q) - 1
    gain[q_row[r_q], q_idx[r_q], r_rank] = g[q_off[q_global[r_q]] + r_rank]
    prob = depth_probabilities(n_sh.ravel(), width, pdown=pdown).reshape(n_b, q_max, width + 1)

    # path discount δ(j) for j = 0..l_max + width (δ(0) unused) and 1/Z(m), m = 0..l_max
    delta = np.zeros(l_max + width + 1)
    j = np.arange(1, l_max + width + 1, dtype=np.float64)
    delta[1:] = 1.0 / rank_discount(j, b=2.0, kind="log2p1") if discounted else 1.0
    ideal = np.zeros((n_b, l_max + 1))
    i_len = np.minimum(np.diff(i_off)[block], l_max)
    t_off = offsets_from_counts(i_len)
    t_row = segment_ids(t_off)
    t_col = segment_ranks(t_off, t_row)
    ideal[t_row, t_col] = i_val[i_off[block][t_row] + t_col - 1]
    z = np.cumsum(ideal * delta[None, : l_max + 1], axis=1)
    with np.errstate(divide="ignore"):
        inv_z = np.where(z > 0, 1.0 / np.where(z > 0, z, 1.0), 0.0)

    # forward: α_q(ℓ)
    alpha = np.zeros((n_b, q_max, l_max + 1))
    alpha[:, 0, 0] = 1.0
    for q in range(q_max - 1):
        nxt = np.zeros((n_b, l_max + 1))
        for d in range(width + 1):
            moved = np.zeros((n_b, l_max + 1))
            moved[:, d:] = alpha[:, q, : l_max + 1 - d]
            nxt += prob[:, q, d, None] * moved
        alpha[:, q + 1] = pref * nxt

    # backward: B_q(m), and each query's documents
    value = np.zeros(n_b)
    b_next = inv_z
    for q in range(q_max - 1, -1, -1):
        if q == q_max - 1:
            b_q = inv_z
        else:
            go_on = np.where(q < n_q - 1, pref, 0.0)[:, None]
            ahead = sum(prob[:, q + 1, d, None] * _shift(b_next, d) for d in range(width + 1))
            b_q = (1 - go_on) * inv_z + go_on * ahead
        acc = np.zeros((n_b, l_max + 1))
        for d in range(width, 0, -1):
            acc += prob[:, q, d, None] * _shift(b_q, d)
            # summed left to right (last column of a running sum), not pairwise: the
            # block's zero padding beyond a session's longest path then changes nothing
            reach = np.cumsum(alpha[:, q] * delta[None, d : d + l_max + 1] * acc, axis=1)[:, -1]
            value += gain[:, q, d - 1] * reach
        b_next = b_q
    # an empty recall base (no positive ideal gain) leaves the measure undefined
    has = np.diff(i_off)[block] > 0
    first = np.zeros(n_b)
    first[has] = i_val[i_off[block][has]]
    value[first <= 0] = np.nan
    return value
