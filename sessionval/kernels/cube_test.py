r"""Cube Test (CT, ACT) of Luo, Wing, Yang & Hearst (SIGIR 2013) as the TREC DD jig computes it.

The session's documents fill a "cube" of height ``H`` (``max_height``): a document of
rating ``r`` found as the ``c``-th relevant document so far adds ``γ^c r`` (novelty
decays with every relevant document found), and the cube never fills past ``H``, so the
height after document ``j`` is ``min(H, Σ_{j' <= j} γ^{c_{j'}} r_{j'})``.  The jig
(``scorer/cubetest.py``, one subtopic) reports

.. math::

    CT = \frac{\text{height}}{H \cdot T}, \qquad
    ACT = \frac{1}{D} \sum_{j=1}^{D} \frac{\text{height}_j}{H \cdot t_j}

with ``T`` the number of iterations (queries) of the session, ``t_j`` the iteration of
document ``j`` and ``D`` the number of documents.  Its bound (``ct_bound_per_topic``) sorts
the ratings, gives the ``i``-th (from 0) ``γ^i r_i`` for ``i = 0..N·X`` (``N`` iterations of
``X`` documents; the jig's loop also takes the document at ``i = N·X``) and divides the
capped sum by ``H · N``.  The jig's subtopic weights (``1/#subtopics``) are 1 here: the
judgments carry one grade per document, which is one subtopic.

References
----------
Luo, J., Wing, C., Yang, H., Hearst, M. (2013). The water filling model and the cube test:
multi-dimensional evaluation for professional search. CIKM 2013 [luo2013].

Yang, G. H., Tang, Z., Soboroff, I. (2015). TREC 2015 Dynamic Domain track overview
(jig: github.com/trec-dd/trec-dd-jig, ``scorer/cubetest.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._types import FloatArray
from .segments import offsets_from_counts, segment_cumsum, segment_ids, segment_ranks, segment_sum

__all__ = ["cube_test", "cube_test_bound"]


def cube_test(
    gain: npt.ArrayLike,
    iteration: npt.ArrayLike,
    doc_offsets: npt.ArrayLike,
    n_iterations: npt.ArrayLike,
    *,
    gamma: float,
    max_height: float,
) -> tuple[FloatArray, FloatArray]:
    """CT and ACT of every session from its documents in session order.

    Parameters
    ----------
    gain
        Rating of each document the session shows (0: not relevant), in order.
    iteration
        Iteration (query position, from 1) of each document.
    doc_offsets
        ``S + 1`` offsets of each session's documents.
    n_iterations
        ``T``: iterations of each session (0 gives CT = 0).
    gamma, max_height
        Novelty decay ``γ`` and cube height ``H``.

    Examples
    --------
    Iteration 1 shows ratings (2, 0), iteration 2 shows (4); ``γ = 0.5``, ``H = 5``:
    heights 1, 1, min(5, 1 + 0.25·4) = 2, so CT = 2/(5·2) = 0.2 and
    ACT = (1/5 + 1/5 + 2/10) / 3.

    >>> ct, act = cube_test([2.0, 0, 4], [1, 1, 2], [0, 3], [2], gamma=0.5, max_height=5)
    >>> float(ct[0]), round(float(act[0]), 6)
    (0.2, 0.2)
    """
    g = np.asarray(gain, dtype=np.float64)
    it = np.asarray(iteration, dtype=np.float64)
    off = np.asarray(doc_offsets, dtype=np.int64)
    time = np.asarray(n_iterations, dtype=np.float64)
    n_s = off.size - 1
    seg = segment_ids(off)
    rel = g > 0
    found = segment_cumsum(rel.astype(np.float64), off, seg)
    raw = np.where(rel, gamma**found * g, 0.0)
    height = np.minimum(max_height, segment_cumsum(raw, off, seg))
    total = np.zeros(n_s)
    has = np.diff(off) > 0
    total[has] = height[off[1:][has] - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ct = np.where(time > 0, total / (max_height * time), 0.0)
        accu = segment_sum(height / (max_height * it), seg, n_s)
        act = np.where(has, accu / np.diff(off), 0.0)
    return ct, act


def cube_test_bound(
    ideal_offsets: npt.ArrayLike,
    ideal_values: npt.ArrayLike,
    *,
    iterations: npt.ArrayLike,
    width: int,
    gamma: float,
    max_height: float,
) -> FloatArray:
    """The jig's best CT of ``N`` iterations of ``width`` documents, per session.

    ``ideal_values`` are each session's ratings in decreasing order; ``iterations`` is
    ``N`` per session.

    Examples
    --------
    >>> cube_test_bound([0, 2], [4.0, 2.0], iterations=[2], width=5, gamma=0.5, max_height=5)
    array([0.5])
    """
    i_off = np.asarray(ideal_offsets, dtype=np.int64)
    vals = np.asarray(ideal_values, dtype=np.float64)
    n_it = np.asarray(iterations, dtype=np.int64)
    n_s = i_off.size - 1
    take = np.minimum(np.diff(i_off), n_it * width + 1)
    t_off = offsets_from_counts(take)
    seg = segment_ids(t_off)
    i = segment_ranks(t_off, seg) - 1
    raw = vals[i_off[:-1][seg] + i] * gamma**i
    gain = np.minimum(max_height, segment_sum(raw, seg, n_s))
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = gain / (max_height * n_it)
    return out
