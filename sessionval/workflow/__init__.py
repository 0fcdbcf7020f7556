"""``sessionval run LOGS --qrels QRELS --out DIR [--config FILE.toml]``: the whole analysis.

What a researcher with a finished user study runs first.  It validates the logs
and judgments, evaluates every session with the paper's defaults (Järvelin et
al. 2008: b = 2, bq = 4, X = 10, gains 0-1-10-100) or a TOML configuration, and
writes into ``DIR``:

``tables/``     per_position, per_query, per_session (CSV and Parquet)
``figures/``    every figure (PNG, SVG, PDF) and the table behind it (CSV)
``exports/``    per-session / per-query scores for R, SPSS, Stata + codebook
``config.toml`` / ``config.json``   the configuration actually used
``validation.txt`` / ``rejects.csv`` the study summary and what was rejected
``report.html`` one self-contained report (open it in a browser)

Outputs are written elsewhere first and swapped in when the run succeeds, the
manifest ``DIR/.sessionval-run.json`` last; the files of the previous run that this
run does not write again are removed; nothing else in ``DIR`` is touched, nothing
outside it ever, and a file no earlier run wrote is overwritten only with ``--force``
(:mod:`sessionval.workflow.outputs`).

Exit codes: 0 success; 1 the input failed validation (the problems are in
``DIR/validation.txt`` and on stderr); 2 usage or input error (missing file, bad
configuration); 3 out of memory; 70 internal error (``docs/reliability.md``).

The configuration file (TOML) is one typed model, :mod:`sessionval.workflow.config_file`
(``docs/configuration.md`` is generated from it by :mod:`sessionval.workflow.config_text`);
the run's named steps are in :mod:`sessionval.workflow.steps` and
:mod:`sessionval.workflow.figures`, and :func:`run` executes them as the stages of
:data:`STAGES` on a resolved plan (:mod:`sessionval.workflow.job`).  The command
``sessionval run`` is a thin wrapper around :func:`run`.
"""

from .config_text import config_markdown, config_tables, to_toml
from .correlations import correlation_step
from .figures import (
    FigureCell,
    FigureData,
    draw_figures,
    figure_cell,
    figure_cell_from_partial,
    figure_data,
    figure_data_from_partial,
    figure_partial_of,
    write_figure_tables,
)
from .job import STAGES, RunResult, input_files, run
from .outputs import MANIFEST, RunOutputs
from .settings import (
    ConfigFileError,
    FigureSettings,
    MeasureSelection,
    MeasureSettings,
    RunConfig,
    RunOptions,
    RunSettings,
    Section,
    figure_table,
    load_run_config,
    measure_settings,
    parse_run_config,
    run_settings,
)
from .steps import (
    ScoreTables,
    evaluate_step,
    load_step,
    peak_memory_mb,
    report_scores,
    write_config_json,
    write_config_toml,
    write_configuration,
    write_exports_step,
    write_report_step,
    write_tables,
    write_validation,
    write_validation_failure,
)

__all__ = [
    "MANIFEST",
    "STAGES",
    "ConfigFileError",
    "FigureCell",
    "FigureData",
    "FigureSettings",
    "MeasureSelection",
    "MeasureSettings",
    "RunConfig",
    "RunOptions",
    "RunOutputs",
    "RunResult",
    "RunSettings",
    "ScoreTables",
    "Section",
    "config_markdown",
    "config_tables",
    "correlation_step",
    "draw_figures",
    "evaluate_step",
    "figure_cell",
    "figure_cell_from_partial",
    "figure_data",
    "figure_data_from_partial",
    "figure_partial_of",
    "figure_table",
    "input_files",
    "load_run_config",
    "load_step",
    "measure_settings",
    "parse_run_config",
    "peak_memory_mb",
    "report_scores",
    "run",
    "run_settings",
    "to_toml",
    "write_config_json",
    "write_config_toml",
    "write_configuration",
    "write_exports_step",
    "write_figure_tables",
    "write_report_step",
    "write_tables",
    "write_validation",
    "write_validation_failure",
]
