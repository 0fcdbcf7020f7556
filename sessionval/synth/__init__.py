"""Synthetic session-search studies of any size, seeded and vectorised.

``design`` lays out searchers, scenarios and systems; ``simulate`` draws sessions,
queries and results chunk by chunk; ``write`` streams them to JSON-lines or Parquet
through :mod:`sessionval.io.writers`.  ``runs`` makes a test collection (qrels and
TREC runs) of systems of graded, known quality for meta-evaluation.  ``scores`` draws
per-session score tables of known truth (design, system effect, searcher and topic
variance) for calibrating the comparison of systems.
"""

from .assignment import Assignment
from .design import TABLE2_COUNTS, study_header
from .runs import SyntheticRuns, generate_runs, write_runs
from .scores import simulate_scores
from .write import (
    OutputFormat,
    SyntheticStudy,
    SynthSummary,
    flat_schema,
    generate_study,
    iter_flat_batches,
    write_study,
)

__all__ = [
    "TABLE2_COUNTS",
    "Assignment",
    "OutputFormat",
    "SynthSummary",
    "SyntheticRuns",
    "SyntheticStudy",
    "flat_schema",
    "generate_runs",
    "generate_study",
    "iter_flat_batches",
    "simulate_scores",
    "study_header",
    "write_runs",
    "write_study",
]
