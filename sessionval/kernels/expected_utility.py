r"""Expected Utility (EU) of Yang & Lad (2009) as the TREC DD jig computes it.

In each iteration the searcher reads down the list and stops at rank ``s`` with
probability ``(1 - p)^{s-1} p`` (the rest of the mass at the list's end), so rank
``k`` is read with probability ``(1 - p)^{k-1}``.  A nugget read ``E`` times in
expectation is worth ``w (1 - γ^E)/(1 - γ)`` (its rating ``w`` with diminishing
returns); reading costs ``a`` per unit of length:

.. math::

    EU = \sum_{\text{nuggets}} w\, \frac{1 - γ^{E}}{1 - γ}
         - a \sum_{\text{iterations}} \sum_k (1 - p)^{k-1} \ell_k

The jig (``scorer/expected_utility.py``) reads nuggets and document lengths from the DD
truth; sessionval's judgments carry one grade per document, so each relevant document is
its own nugget (rating = its gain) and every document has length 1.

References
----------
Yang, Y., Lad, A. (2009). Modeling expected utility of multi-session information
distillation. ICTIR 2009 [yang2009].

Yang, G. H., Tang, Z., Soboroff, I. (2015). TREC 2015 Dynamic Domain track overview
(jig: github.com/trec-dd/trec-dd-jig, ``scorer/expected_utility.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._types import FloatArray
from .discounts import geometric_weights
from .segments import segment_sum

__all__ = ["expected_utility"]


def expected_utility(
    gain: npt.ArrayLike,
    rank: npt.ArrayLike,
    doc: npt.ArrayLike,
    doc_session: npt.ArrayLike,
    n_sessions: int,
    *,
    gamma: float,
    p: float,
    a: float,
) -> FloatArray:
    """EU of every session (documents as nuggets, unit lengths).

    Parameters
    ----------
    gain
        Rating of each document shown (0: no nugget).
    rank
        Its rank in its iteration's list (from 1).
    doc
        Integer document code (the nugget).
    doc_session
        Session index of each document.
    n_sessions
        Number of sessions.
    gamma, p, a
        Discount of a nugget read again, stopping probability, cost per document.

    Examples
    --------
    One iteration showing ratings (3, 0), ``p = 0.5``: rank 2 is read with
    probability 0.5; ``γ = 0.5``: the nugget read once is worth 3 · 0.5/0.5 = 3;
    cost ``a = 0.1`` × (1 + 0.5).

    >>> expected_utility([3.0, 0], [1, 2], [0, 1], [0, 0], 1, gamma=0.5, p=0.5, a=0.1)
    array([2.85])
    """
    g = np.asarray(gain, dtype=np.float64)
    read = geometric_weights(rank, p=1 - p)  # reached with probability (1 - p)^(r - 1)
    d = np.asarray(doc, dtype=np.int64)
    s = np.asarray(doc_session, dtype=np.int64)
    cost = segment_sum(read, s, n_sessions)
    rel = g > 0
    ndoc = int(d.max(initial=0)) + 1
    keys, inv = np.unique(s[rel] * ndoc + d[rel], return_inverse=True)
    times = np.bincount(inv, weights=read[rel], minlength=keys.size)
    rating = np.zeros(keys.size)
    np.maximum.at(rating, inv, g[rel])
    worth = rating * (1 - gamma**times) / (1 - gamma)
    return segment_sum(worth, keys // ndoc, n_sessions) - a * cost
