r"""Session rank-biased precision (sRBP) of Lipani, Carterette & Yilmaz (ICTIR 2019).

The user model: after examining a document the searcher stops with probability
``1 - p``; otherwise goes down the list with probability ``b`` (the *balance*) or
reformulates with probability ``1 - b``.  The probability of reaching rank ``k`` of the
``m``-th query is then ``((p - bp)/(1 - bp))^{m-1} (bp)^{k-1}``, and the expected
number of documents examined is ``1/(1 - p)``, which gives the normalisation:

.. math::

    sRBP = (1 - p) \sum_{m=1}^{M} \left(\frac{p - bp}{1 - bp}\right)^{m-1}
           \sum_{k=1}^{K} (bp)^{k-1}\, r_{m,k}

With ``b = 1`` nobody reformulates and sRBP is RBP(p) of the first query.

References
----------
Lipani, A., Carterette, B., Yilmaz, E. (2019). From a user model for query sessions to
session rank biased precision (sRBP). ICTIR 2019 [lipani2019].
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._types import FloatArray
from .discounts import geometric_weights
from .segments import segment_sum

__all__ = ["session_rbp", "session_rbp_weights"]


def session_rbp_weights(
    query_pos: npt.ArrayLike, rank: npt.ArrayLike, *, p: float, b: float
) -> FloatArray:
    """The weight ``(1 - p) ρ^{m-1} (bp)^{k-1}`` of rank ``k`` of the ``m``-th query.

    ``ρ = (p - bp)/(1 - bp)`` is the probability of reaching the next query from the
    current one.

    Examples
    --------
    >>> session_rbp_weights([1, 1, 2], [1, 2, 1], p=0.8, b=0.5).round(4)
    array([0.2   , 0.08  , 0.1333])
    """
    m = np.asarray(query_pos, dtype=np.float64)
    k = np.asarray(rank, dtype=np.float64)
    down = b * p
    reform = (p - down) / (1 - down)
    out: FloatArray = (1 - p) * geometric_weights(m, p=reform) * geometric_weights(k, p=down)
    return out


def session_rbp(
    relevance: npt.ArrayLike,
    query_pos: npt.ArrayLike,
    rank: npt.ArrayLike,
    position_session: npt.ArrayLike,
    n_sessions: int,
    *,
    p: float,
    b: float,
) -> FloatArray:
    """Session RBP of every session from its positions (one float per session).

    Parameters
    ----------
    relevance
        ``r_{m,k}`` of every session position, in ``[0, 1]`` (gain over the largest gain).
    query_pos, rank
        Query position ``m`` (1-based, in the session) and rank ``k`` of each position.
    position_session
        Session index of each position.
    n_sessions
        Number of sessions.
    p, b
        Persistence and balance, ``0 <= p < 1`` and ``0 <= b <= 1``.

    Examples
    --------
    Two queries: (relevant, not) then (relevant); ``p = 0.8``, ``b = 0.5``:
    ``bp = 0.4``, ``ρ = 0.4/0.6 = 2/3``, sRBP = 0.2 · (1 + 2/3) = 1/3.

    >>> round(float(session_rbp([1.0, 0, 1], [1, 1, 2], [1, 2, 1], [0, 0, 0], 1,
    ...                         p=0.8, b=0.5)[0]), 6)
    0.333333
    """
    w = session_rbp_weights(query_pos, rank, p=p, b=b)
    r = np.asarray(relevance, dtype=np.float64)
    seg = np.asarray(position_session, dtype=np.int64)
    return segment_sum(w * r, seg, n_sessions)
