"""``sessionval run LOGS --qrels QRELS --out DIR [--config FILE.toml]``: the whole analysis.

What a researcher with a finished user study runs first.  It validates the logs
and judgments, evaluates every session with the paper's defaults (Järvelin et
al. 2008: b = 2, bq = 4, X = 10, gains 0-1-10-100) or a TOML configuration, and
writes into ``DIR``:

``tables/``     per_position, per_query, per_session (CSV and Parquet), and
                rating_correlations when the sessions carry post-task ratings
``figures/``    every figure (PNG, SVG, PDF) and the table behind it (CSV)
``exports/``    per-session / per-query scores for R, SPSS, Stata + codebook
``config.toml`` / ``config.json``   the configuration actually used
``validation.txt`` / ``rejects.csv`` the study summary and what was rejected
``report.html`` one self-contained report (open it in a browser)

Re-running overwrites cleanly: the files of the previous run (listed in
``DIR/.sessionval-run.json``) that this run does not write again are removed;
nothing else in ``DIR`` is touched (:mod:`sessionval.workflow.outputs`).

Exit codes: 0 success; 1 the input failed validation (the problems are in
``DIR/validation.txt`` and on stderr); 2 usage or input error (missing file, bad
configuration).

The configuration file (TOML) is described in :mod:`sessionval.workflow.settings`;
the run's named steps are in :mod:`sessionval.workflow.steps` and
:func:`run` chains them (:mod:`sessionval.workflow.job`).  The command
``sessionval run`` is a thin wrapper around :func:`run`.
"""

from .correlations import correlation_step
from .job import STAGES, RunResult, run
from .outputs import MANIFEST, RunOutputs
from .settings import (
    FigureSettings,
    MeasureSettings,
    RunConfig,
    RunSettings,
    figure_table,
    load_run_config,
    measure_settings,
    run_settings,
    to_toml,
)
from .steps import (
    FigureCell,
    FigureData,
    ScoreTables,
    draw_figures,
    evaluate_step,
    figure_cell,
    figure_data,
    load_step,
    peak_memory_mb,
    write_configuration,
    write_exports_step,
    write_figure_tables,
    write_report_step,
    write_tables,
    write_validation,
    write_validation_failure,
)

__all__ = [
    "MANIFEST",
    "STAGES",
    "FigureCell",
    "FigureData",
    "FigureSettings",
    "MeasureSettings",
    "RunConfig",
    "RunOutputs",
    "RunResult",
    "RunSettings",
    "ScoreTables",
    "correlation_step",
    "draw_figures",
    "evaluate_step",
    "figure_cell",
    "figure_data",
    "figure_table",
    "load_run_config",
    "load_step",
    "measure_settings",
    "peak_memory_mb",
    "run",
    "run_settings",
    "to_toml",
    "write_configuration",
    "write_exports_step",
    "write_figure_tables",
    "write_report_step",
    "write_tables",
    "write_validation",
    "write_validation_failure",
]
