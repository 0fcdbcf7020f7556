"""Judgment coverage of a study's result rows, as counts that add up over its partitions.

What the study summary reports per system (Table 2 of Järvelin et al. 2008 gives
the design; the coverage shows how much of what was retrieved is judged, by the
assessors and by the searchers, and clicked).  Counted here, below the
evaluation layer, so that the workers holding a partitioned study's rows count
their partitions as they validate them.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from ..frame import JudgmentFrame, SessionFrame
from .lookup import result_grades

__all__ = ["BASE", "coverage_counts", "sum_counts"]

#: suffix of the base count (the rows a coverage fraction is taken over) in coverage_counts
BASE: Final = "\tbase"


def coverage_counts(frame: SessionFrame, judgments: JudgmentFrame | None) -> pd.DataFrame:
    """Per system (by name): result rows, and for each coverage column its hits and base.

    Counts add up over the partitions of a study (whole numbers), so the coverage of
    a partitioned study is its partitions' counts summed (:func:`sum_counts`).
    """
    r = frame.results
    # per-system means by counting over the systems' integer codes: no per-row string or
    # float table (that copy made the summary the peak of ``validate``)
    systems = frame.sessions["system_id"].astype("category")
    code = systems.cat.codes.to_numpy()[r["session_id"].cat.codes.to_numpy()]
    n_sys = len(systems.cat.categories)
    counts = np.bincount(code, minlength=n_sys)
    cols: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    if judgments is not None:
        judged = ~np.isnan(result_grades(frame, judgments, source="reference"))
        top10 = r["rank"].to_numpy() <= 10
        cols["reference judged (all ranks)"] = (judged, None)
        cols["reference judged (top 10)"] = (judged & top10, top10)
    cols["searcher judged"] = (~np.isnan(r["user_grade"].to_numpy()), None)
    cols["clicked"] = (r["clicks"].to_numpy() > 0, None)
    data: dict[str, np.ndarray] = {"results": counts}
    for name, (hit, among) in cols.items():
        # counts of the rows picked (weights= would make a float64 copy of each mask)
        data[name] = np.bincount(code[hit], minlength=n_sys)
        data[name + BASE] = counts if among is None else np.bincount(code[among], minlength=n_sys)
    return pd.DataFrame(data, index=pd.Index(systems.cat.categories.astype(str), name="system"))


def sum_counts(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The partitions' :func:`coverage_counts` added up per system."""
    if not parts:
        return pd.DataFrame({"results": np.zeros(0, dtype=np.int64)})
    return pd.concat(parts).groupby(level=0, sort=False).sum()
