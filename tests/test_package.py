from __future__ import annotations

import subprocess
import sys

import pytest

import sessionval

EXPECTED = {
    "PRESETS", "GainScheme", "GradeScale", "IdealGains", "InputFormatError", "Judgment",
    "JudgmentError", "JudgmentFrame", "LoadReport", "LoadedStudy", "Measure", "MeasureSpecError",
    "ParseError", "Problem", "Progress", "Query", "RankedLists", "Result", "Session",
    "SessionConfig",
    "SessionEvaluation", "SessionFrame", "SessionvalError", "SingleEvaluation", "Study",
    "StudySummary", "System", "Topic", "User", "ValidationFailed", "__version__", "avg_pos",
    "avg_vect", "cumulated_gain", "discounted_cumulated_gain", "evaluate", "evaluate_lists",
    "frame_from_flat", "frame_to_flat", "gain_scheme", "gain_vectors", "generate_study",
    "ideal_gains", "individual_curves", "load_judgments", "load_jsonl", "load_lab_tables",
    "load_mapped_table", "load_runs_as_sessions", "load_sessions", "load_study",
    "load_trec_session", "norm_vect", "parse_measure", "query_curves", "read_qrels", "read_run",
    "result_grades", "session_curves", "summarize", "write_flat", "write_jsonl", "write_study",
    "Engine", "LocalEngine", "ShortLists", "DaskEngine", "dask_engine",
    "rating_correlations",  # issue 13: measures against the searchers' ratings
    "compare_systems",
    "judgments_from_records", "judgments_from_table",  # issue 22: the judgments boundary
    "evaluate_run",
    "reformulations",  # issue 27: one row per query reformulation
    "EvaluationResult",  # issue 22: the one result protocol of both evaluations
    "load_cast",  # issue 22: load_<format>; load_runs_as_sessions its deprecated alias
}  # fmt: skip


def test_public_api_is_pinned():
    assert set(sessionval.__all__) == EXPECTED
    assert len(sessionval.__all__) == len(EXPECTED)
    for name in sessionval.__all__:
        assert getattr(sessionval, name) is not None


def test_import_pulls_in_no_optional_extra():
    code = (
        "import sys, sessionval; "
        "heavy = [m for m in ('matplotlib', 'seaborn', 'scipy', 'statsmodels', 'pyreadstat', "
        "'jinja2', 'snowballstemmer', 'rapidfuzz') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_end_to_end_from_python(tmp_path):
    sessionval.write_study(tmp_path, n_sessions=12, seed=3, formats="jsonl")
    study = sessionval.load_study(tmp_path, qrels=tmp_path / "qrels.txt")
    ev = sessionval.evaluate(study.frame, study.judgments)
    per_session = ev.per_session()
    assert len(per_session) == 12
    assert per_session["nsdcg"].between(0, 1).all()
    assert sessionval.summarize(study).counts.set_index("what").loc["sessions", "count"] == 12


def test_moved_modules_are_lazy_aliases():
    # importing the package imports no renderer: the aliases load their module on first use
    probe = (
        "import sys, sessionval; "
        "sys.exit(any(m.startswith('sessionval.output') for m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", probe], check=False).returncode == 0
    from sessionval import aggregate, export, plots, report
    from sessionval.analysis import curves
    from sessionval.output import export as output_export
    from sessionval.output import plots as output_plots
    from sessionval.output import report as output_report

    assert (plots, export, report, aggregate) == (
        output_plots,
        output_export,
        output_report,
        curves,
    )
    # the names the previous release's README, notebook and docs used
    assert aggregate.query_curves is sessionval.query_curves
    assert callable(plots.plot_session_curves) and callable(plots.params_text)
    assert callable(export.write_exports) and callable(export.codebook)
    assert callable(report.render_report) and callable(report.paired_comparison)
    with pytest.raises(AttributeError, match="no_such_module"):
        sessionval.no_such_module  # noqa: B018
