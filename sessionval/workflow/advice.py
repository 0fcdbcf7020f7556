"""What would help each stage of ``sessionval run`` that runs out of memory.

Every stage of :data:`sessionval.workflow.job.STAGES` runs inside a
:func:`~sessionval.errors.phase` whose advice comes from :class:`MemoryAdvice`: only
the options that lighten that stage and that the run does not already use
(``--no-exports`` is not suggested to a run that gave it, ``--no-per-position`` not to
the exports, which never read that table).  Other commands give their own advice
(``evaluate``: fewer measures; ``validate``: none specific).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..errors import memory_advice
from ..evaluation.dask_engine import DaskEngine
from ..io.partitioned import PARTITIONED
from .plan import RunPlan

__all__ = [
    "FEWER_MEASURES",
    "MemoryAdvice",
]

#: The advice of every stage whose work grows with the number of measures.
FEWER_MEASURES: Final = "fewer measures ([measures] in the configuration)"


@dataclass(frozen=True)
class MemoryAdvice:
    """The advice of each stage of a run, from the options of its plan."""

    plan: RunPlan

    @property
    def _dask(self) -> bool:
        return isinstance(self.plan.request.engine, DaskEngine)

    @property
    def for_loading(self) -> str:
        """Loading: a partitioned input validated on a Dask cluster's workers."""
        if self._dask and self.plan.fmt == PARTITIONED:
            return memory_advice()
        if self._dask:
            return memory_advice("a partitioned input (sessionval convert; docs/scale-out.md)")
        return memory_advice("run --engine dask with a partitioned input (docs/scale-out.md)")

    @property
    def for_evaluating(self) -> str:
        """Scoring: spread the sessions, or score each partition as it is validated."""
        request = self.plan.request
        if not self._dask:
            return memory_advice("run --engine dask to spread the sessions", FEWER_MEASURES)
        flags = (("--no-figures", request.figures), ("--no-per-position", request.per_position))
        one_pass = " ".join(flag for flag, on in flags if on)
        hint = f"run {one_pass} (a partitioned input is then scored in one pass)"
        return memory_advice(*([hint] if one_pass else []), FEWER_MEASURES)

    @property
    def for_tables(self) -> str:
        """``tables/``: the per-position table is the large one; CSV the slow format."""
        hints = ["run --no-per-position"] if self.plan.request.per_position else []
        if "csv" in self.plan.table_formats:
            hints.append("run --tables parquet")
        return memory_advice(*hints, FEWER_MEASURES)

    @property
    def for_figures(self) -> str:
        """The figures (and the evaluation behind the CG curves)."""
        return memory_advice("run --no-figures")

    @property
    def for_reformulations(self) -> str:
        """One row per query pair: nothing skips it but fewer sessions at once."""
        return memory_advice()

    @property
    def for_statistics(self) -> str:
        """The comparison of the systems and the mixed model, per ``[statistics]`` measure."""
        stats = self.plan.settings.statistics
        # the paired means by searcher are the lightest comparison (one row per searcher)
        hints = [] if stats.block == "searcher" else ['[statistics] block = "searcher"']
        if stats.mixed_model:
            hints.append("[statistics] mixed_model = false")
        if len(stats.measures) > 1:
            hints.append("fewer [statistics] measures")
        return memory_advice(*hints)

    @property
    def for_correlations(self) -> str:
        """The rating figure's points (one per session, measure and rating)."""
        return memory_advice(*(["run --no-figures"] if self.plan.request.figures else []))

    @property
    def for_exports(self) -> str:
        """``exports/``: skip them, or write fewer formats of the large tables."""
        settings = self.plan.settings
        hints = ["run --no-exports"]
        if settings.file.run.all_formats:  # large tables were to be written in every format
            hints.append("[run] all_formats = false in the configuration")
        if len(settings.formats) > 1:
            hints.append("fewer [run] formats in the configuration")
        return memory_advice(*hints)
