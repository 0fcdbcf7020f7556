"""The unjudged-document policy: gain 0, condensed lists, or an error (per-row, vectorised)."""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .._types import FloatArray, IntArray
from ..errors import JudgmentError, MeasureSpecError

__all__ = [
    "UnjudgedPolicy",
    "apply_unjudged",
]


UnjudgedPolicy: TypeAlias = Literal["zero", "condense", "error"]


_UNJUDGED: Final = ("zero", "condense", "error")


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
