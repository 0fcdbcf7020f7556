"""The run's reformulation step: what each query change did to the session.

:func:`reformulation_step` writes ``tables/reformulations.csv``/``.parquet`` (one row per
consecutive query pair: :func:`sessionval.analysis.reformulations.reformulations`) and
returns the report's section.  A study kept on a cluster's workers has no result rows
on the client, so its reformulations are not computed (a note says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import pandas as pd

from ..analysis.reformulations import reformulations
from ..evaluation.result import SessionEvaluation
from ..frame import JudgmentFrame
from ..output.report import ReportSection
from .outputs import RunOutputs

__all__ = [
    "NO_RESULT_ROWS",
    "ReformulationResult",
    "reformulation_step",
]

#: The run's note when the result rows stay on the workers (a partitioned study on Dask).
NO_RESULT_ROWS: Final = (
    "reformulations not computed: the result rows stayed on the cluster's workers "
    "(partitioned input on Dask); run on one machine for tables/reformulations.csv"
)


@dataclass(frozen=True)
class ReformulationResult:
    """The reformulation table and the report's section (``None`` with no pair)."""

    table: pd.DataFrame
    section: ReportSection | None


def reformulation_step(
    outputs: RunOutputs,
    ev: SessionEvaluation,
    judgments: JudgmentFrame | None,
    *,
    formats: Sequence[str] = ("csv", "parquet"),
) -> ReformulationResult:
    """Write ``tables/reformulations`` in ``formats``; return it with the report's section."""
    table = reformulations(ev, judgments)
    for ext in formats:
        outputs.write_frame(f"tables/reformulations.{ext}", table)
    return ReformulationResult(table=table, section=None)
