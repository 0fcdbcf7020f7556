"""sessionval: evaluate interactive search in sessions of several queries.

The public API, in the order data flows: models and loaders (validation at the
edges) → the columnar frame → gains → single-query and session measures → tidy
tables and curves.  Figures, exports and the HTML report live in the submodules
:mod:`sessionval.output.plots`, :mod:`sessionval.output.export` and :mod:`sessionval.output.report`
(optional extras, imported only when used); ``sessionval.plots``, ``sessionval.export``,
``sessionval.report`` and ``sessionval.aggregate`` (:mod:`sessionval.analysis.curves`) still
name them, as in the previous release, and are imported on first use.
"""

import importlib
from types import ModuleType

from ._version import __version__
from .analysis.compare import compare_systems
from .analysis.correlations import rating_correlations
from .analysis.curves import individual_curves, query_curves, session_curves
from .analysis.reformulations import reformulations
from .analysis.summary import StudySummary, summarize
from .errors import (
    InputFormatError,
    JudgmentError,
    MeasureSpecError,
    ParseError,
    SessionvalError,
    ValidationFailed,
)
from .evaluation.config import PRESETS, SessionConfig
from .evaluation.dask_engine import DaskEngine, dask_engine
from .evaluation.engine import Engine, LocalEngine
from .evaluation.lists import SingleEvaluation, evaluate_lists, evaluate_run
from .evaluation.protocol import EvaluationResult
from .evaluation.result import SessionEvaluation
from .evaluation.session import evaluate
from .frame import JudgmentFrame, LoadedStudy, SessionFrame
from .io.cast import load_cast, load_runs_as_sessions
from .io.jsonl import load_jsonl
from .io.lab_tables import load_lab_tables
from .io.mapping import load_mapped_table
from .io.study import load_study
from .io.toolkit import load_judgments, load_sessions
from .io.trec import read_qrels, read_run
from .io.trec_session import load_trec_session
from .io.writers import write_flat, write_jsonl
from .judgments.gains import GainScheme, gain_scheme
from .judgments.ideal import IdealGains, ideal_gains
from .judgments.lookup import result_grades
from .kernels.slots import ShortLists
from .measures.cg import (
    avg_pos,
    avg_vect,
    cumulated_gain,
    discounted_cumulated_gain,
    gain_vectors,
    norm_vect,
)
from .measures.lists import RankedLists
from .measures.registry import Measure, parse_measure
from .models import GradeScale, Judgment, Query, Result, Session, Study, System, Topic, User
from .problems import LoadReport, Problem
from .progress import Progress
from .synth import generate_study, write_study
from .validate.flat import frame_from_flat, frame_to_flat
from .validate.judgments import judgments_from_records, judgments_from_table

#: Modules of the previous release that moved into the stage folders: name -> new module.
_MOVED_MODULES = {
    "plots": "sessionval.output.plots",
    "export": "sessionval.output.export",
    "report": "sessionval.output.report",
    "aggregate": "sessionval.analysis.curves",
}


def __getattr__(name: str) -> ModuleType:
    """Import a moved module on first use (``from sessionval import plots``)."""
    target = _MOVED_MODULES.get(name)
    if target is None:
        raise AttributeError(f"module 'sessionval' has no attribute {name!r}")
    module = importlib.import_module(target)
    globals()[name] = module
    return module


__all__ = [
    "PRESETS",
    "DaskEngine",
    "Engine",
    "EvaluationResult",
    "GainScheme",
    "GradeScale",
    "IdealGains",
    "InputFormatError",
    "Judgment",
    "JudgmentError",
    "JudgmentFrame",
    "LoadReport",
    "LoadedStudy",
    "LocalEngine",
    "Measure",
    "MeasureSpecError",
    "ParseError",
    "Problem",
    "Progress",
    "Query",
    "RankedLists",
    "Result",
    "Session",
    "SessionConfig",
    "SessionEvaluation",
    "SessionFrame",
    "SessionvalError",
    "ShortLists",
    "SingleEvaluation",
    "Study",
    "StudySummary",
    "System",
    "Topic",
    "User",
    "ValidationFailed",
    "__version__",
    "avg_pos",
    "avg_vect",
    "compare_systems",
    "cumulated_gain",
    "dask_engine",
    "discounted_cumulated_gain",
    "evaluate",
    "evaluate_lists",
    "evaluate_run",
    "frame_from_flat",
    "frame_to_flat",
    "gain_scheme",
    "gain_vectors",
    "generate_study",
    "ideal_gains",
    "individual_curves",
    "judgments_from_records",
    "judgments_from_table",
    "load_cast",
    "load_jsonl",
    "load_judgments",
    "load_lab_tables",
    "load_mapped_table",
    "load_runs_as_sessions",
    "load_sessions",
    "load_study",
    "load_trec_session",
    "norm_vect",
    "parse_measure",
    "query_curves",
    "rating_correlations",
    "read_qrels",
    "read_run",
    "reformulations",
    "result_grades",
    "session_curves",
    "summarize",
    "write_flat",
    "write_jsonl",
    "write_study",
]
