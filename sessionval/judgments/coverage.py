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
import numpy.typing as npt
import pandas as pd

from ..frame import JudgmentFrame, SessionFrame
from ..kernels.segments import segment_blocks
from .lookup import JudgmentIndex, frame_lookup

__all__ = ["BASE", "coverage_counts", "sum_counts"]

#: suffix of the base count (the rows a coverage fraction is taken over) in coverage_counts
BASE: Final = "\tbase"

_BLOCK_ROWS: Final[int] = 1 << 20
"""Result rows counted at a time (whole queries): every temporary stays a block's size."""


def coverage_counts(frame: SessionFrame, judgments: JudgmentFrame | None) -> pd.DataFrame:
    """Per system (by name): result rows, and for each coverage column its hits and base.

    Counts add up over the partitions of a study (whole numbers), so the coverage of
    a partitioned study is its partitions' counts summed (:func:`sum_counts`).  The rows
    are counted a block of whole queries at a time, each block's grades joined alone:
    no array of every row's grade (350 MB at 44 M rows) or mask is made.
    """
    r = frame.results
    # per-system means by counting over the systems' integer codes: no per-row string or
    # float table (that copy made the summary the peak of ``validate``)
    systems = frame.sessions["system_id"].astype("category")
    system_of = systems.cat.codes.to_numpy()
    row_session = r["session_id"].array.codes  # the codes themselves (.cat.codes copies them)
    n_sys = len(systems.cat.categories)
    names = ["results"]
    if judgments is not None:
        names += ["reference judged (all ranks)", "reference judged (top 10)"]
    names += ["searcher judged", "clicked"]
    sums = {name: np.zeros(n_sys, dtype=np.int64) for name in [*names, "top 10"]}
    rank = r["rank"].to_numpy()
    user_grade = r["user_grade"].to_numpy()
    clicks = r["clicks"].to_numpy()
    lookup = frame_lookup(frame, JudgmentIndex.build(judgments)) if judgments is not None else None
    key_codes = frame.queries["qrels_id"].cat.codes.to_numpy()
    docs = r["doc_id"].array.codes
    q_off = frame.query_offsets()

    def add(name: str, code: npt.NDArray[np.integer], hit: npt.NDArray[np.bool_]) -> None:
        # counts of the rows picked (weights= would make a float64 copy of each mask)
        sums[name] += np.bincount(code[hit], minlength=n_sys)

    for q0, q1 in segment_blocks(q_off, _BLOCK_ROWS):
        r0, r1 = int(q_off[q0]), int(q_off[q1])
        code = system_of[row_session[r0:r1]]
        sums["results"] += np.bincount(code, minlength=n_sys)
        top10 = rank[r0:r1] <= 10
        add("top 10", code, top10)
        if lookup is not None:
            grades = lookup.lists(key_codes[q0:q1], np.diff(q_off[q0 : q1 + 1]), docs[r0:r1])
            judged = ~np.isnan(grades)
            add("reference judged (all ranks)", code, judged)
            add("reference judged (top 10)", code, judged & top10)
        add("searcher judged", code, ~np.isnan(user_grade[r0:r1]))
        add("clicked", code, clicks[r0:r1] > 0)
    data: dict[str, np.ndarray] = {}
    for name in names:
        data[name] = sums[name]
        if name != "results":
            data[name + BASE] = sums["top 10" if name.endswith("(top 10)") else "results"]
    return pd.DataFrame(data, index=pd.Index(systems.cat.categories.astype(str), name="system"))


def sum_counts(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The partitions' :func:`coverage_counts` added up per system."""
    if not parts:
        return pd.DataFrame({"results": np.zeros(0, dtype=np.int64)})
    return pd.concat(parts).groupby(level=0, sort=False).sum()
