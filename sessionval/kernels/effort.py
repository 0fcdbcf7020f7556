r"""Adaptive effort (Jiang & Allan, ECIR 2016): gain per unit of effort along a ranked list.

A measure's usual weighted gain ``Σ_i g_i w_i`` (``w_i``: its rank weight, e.g.
``1/log2(i + 1)`` for DCG or ``p^{i-1}`` for RBP) is divided by the effort spent reading
the same ranks, ``Σ_i e(r_i) w_i``, where the effort ``e`` depends on the result's
relevance grade (relevant results take longer to read):

.. math::

    M_{AE} = \frac{\sum_{i=1}^{n} g_i\, w_i}{\sum_{i=1}^{n} e(r_i)\, w_i}

``n`` is the number of results read (``min(k, list length)``); the value is 0 when the
gain is 0.  With a constant effort of 1 it is the weighted gain per weighted rank (the
"static effort" of the paper).

References
----------
Jiang, J., Allan, J. (2016). Adaptive effort for search evaluation metrics. ECIR 2016,
LNCS 9626 [jiang2016ae] (code:
github.com/jiepujiang/ir_metrics, ``query_metrics.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._types import FloatArray
from .segments import segment_ids, segment_sum

__all__ = ["effort_ratio"]


def effort_ratio(
    gain: npt.ArrayLike, effort: npt.ArrayLike, weight: npt.ArrayLike, offsets: npt.ArrayLike
) -> FloatArray:
    """``Σ g w / Σ e w`` per list (0 where ``Σ g w`` is 0), lists in segment layout.

    Examples
    --------
    Gains (3, 0, 1), effort 1 each, weights 1/log2(i + 1):
    (3 + 0.5) / (1 + 0.6309 + 0.5).

    >>> w = 1 / np.log2(np.arange(2, 5))
    >>> effort_ratio([3.0, 0, 1], [1.0, 1, 1], w, [0, 3]).round(4)
    array([1.6426])
    """
    off = np.asarray(offsets, dtype=np.int64)
    n = off.size - 1
    seg = segment_ids(off)
    w = np.asarray(weight, dtype=np.float64)
    num = segment_sum(np.asarray(gain, dtype=np.float64) * w, seg, n)
    den = segment_sum(np.asarray(effort, dtype=np.float64) * w, seg, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(num != 0, num / np.where(den != 0, den, 1.0), 0.0)
    return out
