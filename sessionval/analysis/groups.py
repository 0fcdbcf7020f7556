"""Sessions in groups: the integer group code of every session (system, system × topic, …).

The curves average over groups of sessions; every curve function codes its
groups here, so groups are ordered and labelled the same way in every table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import MeasureSpecError

__all__ = [
    "group_codes",
]


def group_codes(
    table: pd.DataFrame, by: Sequence[str], mask: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.int64], pd.DataFrame]:
    """Group code per row (−1 where masked out) and the group labels.

    Parameters
    ----------
    table
        One row per session.
    by
        Columns to group by (``()``: one group of every row).
    mask
        Rows to keep.

    Returns
    -------
    codes, labels
        ``codes[i]`` indexes ``labels`` (one row per group present among the kept
        rows, sorted by ``by``), −1 for rows masked out.

    Examples
    --------
    >>> t = pd.DataFrame({"system_id": ["B", "A", "B"]})
    >>> codes, labels = group_codes(t, ["system_id"], np.array([True, True, False]))
    >>> codes.tolist(), labels["system_id"].tolist()
    ([1, 0, -1], ['A', 'B'])
    """
    missing = [c for c in by if c not in table.columns]
    if missing:
        raise MeasureSpecError(
            f"cannot group by {missing}; available columns: {', '.join(map(str, table.columns))}"
        )
    if not by:
        codes = np.zeros(len(table), dtype=np.int64)
        labels = pd.DataFrame(index=range(1))
    else:
        sub = table.loc[mask, list(by)]
        labels = sub.drop_duplicates().sort_values(list(by)).reset_index(drop=True)
        key = pd.MultiIndex.from_frame(labels.astype(object))
        codes = np.asarray(
            key.get_indexer(pd.MultiIndex.from_frame(table[list(by)].astype(object))),
            dtype=np.int64,
        )
    return np.where(mask, codes, -1), labels
