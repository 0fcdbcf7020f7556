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

Re-running overwrites cleanly: the files of the previous run (listed in
``DIR/.sessionval-run.json``) that this run does not write again are removed;
nothing else in ``DIR`` is touched.

Exit codes: 0 success; 1 the input failed validation (the problems are in
``DIR/validation.txt`` and on stderr); 2 usage or input error (missing file, bad
configuration).

Configuration file (TOML): top-level keys are :class:`~sessionval.evaluation.config.SessionConfig`
fields (``preset``, ``b``, ``bq``, ``cutoff``, ``gains``, ``duplicates``, …); an
optional ``[figures]`` table sets ``depth`` (ranks of Figure 1 and of the CG
curves, default 100), ``scenario`` (topic of Figures 3 and 4), ``system``
(Figure 4), ``max_sessions`` (sessions drawn in Figure 4, default 30),
``min_queries`` (Figure 3's subset, default 4) and ``cg_gains`` (gain scheme of the
CG/DCG curves, default the session gains); ``[run]`` sets
``lenient`` (bool) and ``formats`` (export formats).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from .errors import InputFormatError, MeasureSpecError, SessionvalError, ValidationFailed

__all__ = [
    "MANIFEST",
    "FigureSettings",
    "RunConfig",
    "RunResult",
    "load_run_config",
    "run",
    "to_toml",
]

MANIFEST: Final = ".sessionval-run.json"
_FIGURE_KEYS: Final = frozenset(
    {"depth", "scenario", "system", "min_queries", "cg_gains", "max_sessions"}
)
_RUN_KEYS: Final = frozenset({"lenient", "formats"})


@dataclass(frozen=True)
class FigureSettings:
    """What the figures show beyond the session configuration."""

    depth: int = 100
    scenario: str | None = None
    system: str | None = None
    min_queries: int = 4
    max_sessions: int = 30
    cg_gains: str | dict[int, float] | None = None


@dataclass(frozen=True)
class RunConfig:
    """A parsed configuration file: session parameters, figure settings, run options."""

    session: dict[str, Any] = field(default_factory=dict)
    figures: FigureSettings = field(default_factory=FigureSettings)
    lenient: bool = False
    formats: tuple[str, ...] = ("csv", "parquet", "dta", "sav")


def load_run_config(path: Path | None) -> RunConfig:
    """Read a TOML configuration (``None``: the paper's defaults).

    Raises
    ------
    InputFormatError
        The file is not valid TOML, or a ``[figures]``/``[run]`` key is unknown.
    """
    if path is None:
        return RunConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputFormatError(f"{path}: not valid TOML: {exc}") from exc
    except OSError as exc:
        raise InputFormatError(f"{path}: cannot read: {exc}") from exc
    figures = data.pop("figures", {})
    run_opts = data.pop("run", {})
    for name, table, allowed in (("figures", figures, _FIGURE_KEYS), ("run", run_opts, _RUN_KEYS)):
        if not isinstance(table, dict):
            raise InputFormatError(f"{path}: [{name}] must be a table")
        bad = sorted(set(table) - allowed)
        if bad:
            raise InputFormatError(
                f"{path}: unknown key(s) {bad} in [{name}]; allowed: {sorted(allowed)}"
            )
    try:
        fs = FigureSettings(**figures)
        if fs.depth < 1 or fs.min_queries < 1 or fs.max_sessions < 1:
            raise InputFormatError(
                f"{path}: [figures] depth, min_queries and max_sessions must be >= 1"
            )
    except TypeError as exc:
        raise InputFormatError(f"{path}: [figures]: {exc}") from exc
    formats = tuple(run_opts.get("formats", RunConfig().formats))
    return RunConfig(
        session=data, figures=fs, lenient=bool(run_opts.get("lenient", False)), formats=formats
    )


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        return (
            "{ "
            + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items())
            + " }"
        )
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise SessionvalError(f"cannot write {v!r} ({type(v).__name__}) to TOML")


def to_toml(tables: Mapping[str, Mapping[str, Any]], *, header: str = "") -> str:
    """Write ``{"": top-level, "figures": {...}}`` as TOML (``None`` values are left out).

    Examples
    --------
    >>> t = {"": {"b": 2.0, "gains": "0-1-10-100", "x": None}, "figures": {"depth": 100}}
    >>> print(to_toml(t))
    b = 2.0
    gains = "0-1-10-100"
    <BLANKLINE>
    [figures]
    depth = 100
    <BLANKLINE>
    """
    lines = [f"# {line}" for line in header.splitlines()]
    for name, table in tables.items():
        if name:
            lines += ["", f"[{name}]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items() if v is not None]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# output directory bookkeeping


class _Outputs:
    """Files written by this run, relative to ``root``; removes stale files of the last run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written: list[str] = []
        previous = root / MANIFEST
        self.previous: list[str] = []
        if previous.is_file():
            try:
                self.previous = list(json.loads(previous.read_text(encoding="utf-8"))["files"])
            except (ValueError, KeyError, TypeError):
                self.previous = []

    def path(self, rel: str) -> Path:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def add(self, *paths: Path) -> None:
        for p in paths:
            self.written.append(p.relative_to(self.root).as_posix())

    def finish(self) -> list[str]:
        """Remove files of the previous run not written now; write the manifest."""
        keep = set(self.written)
        removed = []
        for rel in self.previous:
            if rel in keep or ".." in Path(rel).parts or Path(rel).is_absolute():
                continue
            p = self.root / rel
            if p.is_file():
                p.unlink()
                removed.append(rel)
        for d in sorted({(self.root / r).parent for r in removed}, reverse=True):
            if d != self.root and d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        (self.root / MANIFEST).write_text(
            json.dumps({"files": sorted(keep)}, indent=1) + "\n", encoding="utf-8"
        )
        return removed


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_") or "x"


# ---------------------------------------------------------------------------------------------
# the run


@dataclass
class RunResult:
    """What :func:`run` wrote and found."""

    out: Path
    files: list[str]
    removed: list[str]
    per_session: pd.DataFrame
    score_table: pd.DataFrame


def run(
    logs: Path,
    *,
    qrels: Path | None,
    out: Path,
    config_path: Path | None = None,
    lenient: bool | None = None,
    progress: bool | None = None,
) -> RunResult:
    """Validate, evaluate and write every output (the body of ``sessionval run``).

    Parameters
    ----------
    logs
        Study folder or session file.
    qrels
        Reference judgments (required unless the configuration uses ``judgments = "searcher"``).
    out
        Output folder (created; the previous run's files are replaced).
    config_path
        TOML configuration (``None``: the paper's defaults).
    lenient
        Reject bad sessions instead of failing (default: the configuration's ``[run]``).
    progress
        Show the progress bar (``None``: only on a terminal).

    Returns
    -------
    RunResult

    Raises
    ------
    ValidationFailed
        The input has problems (strict mode); ``out/validation.txt`` lists them.
    SessionvalError
        Bad configuration or unreadable input.
    """
    from .analysis import curves as ag
    from .analysis.cg_curves import cg_curves
    from .analysis.stats import paired_comparison, score_table
    from .analysis.summary import summarize
    from .evaluation.config import SessionConfig, config_from_mapping
    from .evaluation.session import evaluate
    from .io.study import load_study
    from .judgments.gains import gain_scheme
    from .output import plots
    from .output.export import write_exports
    from .output.report import ReportFigure, render_report
    from .progress import stages

    rc = load_run_config(config_path)
    is_lenient = rc.lenient if lenient is None else lenient
    try:
        config = config_from_mapping(rc.session) if rc.session else SessionConfig()
    except SessionvalError:
        raise
    except ValueError as exc:  # pydantic.ValidationError
        raise MeasureSpecError(f"{config_path}: invalid configuration: {exc}") from exc
    if qrels is None and config.judgments == "reference":
        raise InputFormatError(
            'no --qrels given: reference judgments are needed (or set judgments = "searcher" '
            "in the configuration to use the searchers' own grades)"
        )
    out.mkdir(parents=True, exist_ok=True)
    outputs = _Outputs(out)
    names = ["load and validate", "evaluate", "tables", "aggregate", "figures", "exports", "report"]
    with stages(names, disable=None if progress is None else not progress) as bar:
        # 1. load and validate
        try:
            loaded = load_study(logs, qrels=qrels, mode="lenient" if is_lenient else "strict")
        except ValidationFailed as exc:
            p = outputs.path("validation.txt")
            p.write_text(f"VALIDATION FAILED for {logs}\n\n{exc}\n", encoding="utf-8")
            outputs.add(p)
            outputs.finish()
            raise
        summary = summarize(loaded)
        report_ = loaded.report
        p = outputs.path("validation.txt")
        lines = [summary.to_text()]
        if report_.problems:
            lines += [
                "",
                f"{len(report_.problems)} problem(s) in {report_.sessions_rejected} "
                "rejected session(s):",
                *(f"  {q}" for q in report_.problems),
            ]
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
        outputs.add(p)
        p = outputs.path("rejects.csv")
        report_.rejects.to_csv(p, index=False)
        outputs.add(p)
        if loaded.frame.n_sessions == 0:
            raise InputFormatError(f"{logs}: no session left to evaluate")
        bar.update()

        # 2. evaluate
        ev = evaluate(loaded.frame, loaded.judgments, config)
        params = config.model_dump(mode="json")
        bar.update()

        # 3. tables
        per_session = ev.per_session()
        per_query = ev.per_query()
        for name, table in (
            ("per_position", ev.per_position()),
            ("per_query", per_query),
            ("per_session", per_session),
        ):
            for ext in ("csv", "parquet"):
                p = outputs.path(f"tables/{name}.{ext}")
                if ext == "csv":
                    table.to_csv(p, index=False)
                else:
                    table.to_parquet(p, index=False)
                outputs.add(p)
        p = outputs.path("config.toml")
        p.write_text(
            to_toml(
                {"": params, "figures": _figure_dict(rc.figures)},
                header="sessionval run: the configuration actually used.\n"
                "Re-run with: sessionval run LOGS --qrels QRELS --out DIR --config config.toml",
            ),
            encoding="utf-8",
        )
        outputs.add(p)
        p = outputs.path("config.json")
        p.write_text(
            json.dumps(
                {
                    "session": params,
                    "figures": _figure_dict(rc.figures),
                    "evaluation": {k: v for k, v in ev.summary().items() if k != "config"},
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
        outputs.add(p)
        bar.update()

        # 4. aggregations behind the figures
        sessions = loaded.frame.sessions
        topic = sessions["topic_id"].astype(str).to_numpy()
        system = sessions["system_id"].astype(str).to_numpy()
        nq = sessions["n_queries"].to_numpy()
        fs = rc.figures
        scenario = fs.scenario or _default_scenario(topic, nq, fs.min_queries)
        if scenario not in set(topic):
            raise InputFormatError(
                f"[figures] scenario {scenario!r} is not a topic of the study; "
                f"topics: {sorted(set(topic))}"
            )
        fig_system = fs.system or sorted(set(system))[0]
        if fig_system not in set(system):
            raise InputFormatError(
                f"[figures] system {fig_system!r} is not a system of the study; "
                f"systems: {sorted(set(system))}"
            )
        in_scen = topic == scenario
        subsets = ["all sessions", f">= {fs.min_queries} queries"]
        all_s = ag.session_curves(ev, where=in_scen)
        all_s["subset"] = pd.Categorical(["all sessions"] * len(all_s), categories=subsets)
        data: dict[str, pd.DataFrame] = {
            "fig1_last_vs_nonlast": ag.query_curves(ev, compare="last", depth=fs.depth),
            "fig1b_best_vs_other": ag.query_curves(ev, compare="best", depth=fs.depth),
            "fig2_session_nsdcg": ag.session_curves(ev),
        }
        if (nq[in_scen] >= fs.min_queries).any():
            sub = ag.session_curves(ev, where=in_scen, min_queries=fs.min_queries)
            sub["subset"] = pd.Categorical([subsets[1]] * len(sub), categories=subsets)
            data["fig3_scenario_sdcg"] = pd.concat([all_s, sub], ignore_index=True)
        else:
            data["fig3_scenario_sdcg"] = all_s
        # Figure 4 draws one line per session: the first max_sessions of the cell, in study order
        cell = np.flatnonzero(in_scen & (system == fig_system))
        shown = np.zeros(len(system), dtype=bool)
        shown[cell[: fs.max_sessions]] = True
        n_cell, n_shown = cell.size, int(shown.sum())
        data["fig4_individual_sessions"] = ag.individual_curves(ev, where=shown)
        cg_ev = ev
        if fs.cg_gains is not None and gain_scheme(fs.cg_gains) != config.gains:
            cg_ev = evaluate(
                loaded.frame, loaded.judgments, config.model_copy(update={"gains": fs.cg_gains})
            )
        cg = cg_curves(cg_ev, depth=fs.depth)
        for m in ("CG", "DCG", "nCG", "nDCG"):
            data[f"cg_{m}"] = cg[cg["measure"] == m].reset_index(drop=True)
        for name, table in data.items():
            p = outputs.path(f"figures/{name}.csv")
            table.to_csv(p, index=False)
            outputs.add(p)
        bar.update()

        # 5. figures
        cg_params = {**params, "gains": fs.cg_gains or params["gains"]}
        cg_params.pop("bq", None)
        cg_params.pop("cutoff", None)  # CG curves run to the figure depth, not X
        cutoff = config.cutoff
        drawn: list[tuple[str, str, str, Any]] = [
            (
                "fig1_last_vs_nonlast",
                "Last vs non-last queries (002, Figure 1)",
                "Mean query-discounted DCG by rank of each session's last query and of its "
                "earlier queries, per system.",
                plots.plot_query_curves(data["fig1_last_vs_nonlast"], params=params),
            ),
            (
                "fig1b_best_vs_other",
                "Best vs other queries (002, Figure 1 variant)",
                f"As Figure 1 with the best query (highest {config.best_by.upper()}) "
                "instead of the last.",
                plots.plot_query_curves(
                    data["fig1b_best_vs_other"], params=params, title="Best vs other queries"
                ),
            ),
            (
                "fig2_session_nsdcg",
                "Mean normalised session DCG (002, Figure 2)",
                f"nsDCG over concatenated top-{cutoff} results averaged over all sessions per "
                f"system; sessions held after they stop ({config.stopped}).",
                plots.plot_session_curves(data["fig2_session_nsdcg"], cutoff=cutoff, params=params),
            ),
            (
                "fig3_scenario_sdcg",
                f"Scenario {scenario}: raw session DCG (002, Figure 3)",
                f"sDCG averaged over the sessions of scenario {scenario}, all of them and those "
                f"with at least {fs.min_queries} queries.",
                plots.plot_session_curves(
                    data["fig3_scenario_sdcg"],
                    cutoff=cutoff,
                    params=params,
                    normalised=False,
                    style="subset",
                    title=f"Scenario {scenario}: mean session DCG",
                ),
            ),
            (
                "fig4_individual_sessions",
                f"Individual sessions, {fig_system} × scenario {scenario} (002, Figure 4)",
                "Every session held constant after the searcher stopped; circles mark where "
                "each searcher stopped"
                + (
                    f" (the first {n_shown} of {n_cell} sessions; [figures] max_sessions)."
                    if n_shown < n_cell
                    else "."
                ),
                plots.plot_individual_sessions(
                    data["fig4_individual_sessions"],
                    cutoff=cutoff,
                    params=params,
                    title=f"{fig_system}, scenario {scenario}: individual sessions",
                ),
            ),
        ]
        for i, m in enumerate(("CG", "DCG", "nCG", "nDCG"), start=1):
            drawn.append(
                (
                    f"cg_{m}",
                    f"{m} by rank per system (000, Figure {i})",
                    f"Mean {m} vector over all queries of each system against the ideal vector.",
                    plots.plot_cg_curves(data[f"cg_{m}"], measure=m, params=cg_params),
                )
            )
        figures: list[ReportFigure] = []
        for name, title, caption, ax in drawn:
            written = plots.save_figure(ax, out / "figures" / name)
            outputs.add(*written)
            figures.append(
                ReportFigure(
                    title,
                    plots.figure_bytes(ax, "png", dpi=150),
                    caption=caption + " " + plots.params_text(params),
                    svg=written[1].read_bytes(),
                )
            )
        bar.update()

        # 6. exports
        res = write_exports(
            out / "exports",
            per_session=per_session,
            per_query=per_query,
            parameters=params,
            formats=rc.formats,  # type: ignore[arg-type]
            title=loaded.study.name or "sessionval scores",
        )
        outputs.add(*res.files)
        bar.update()

        # 7. report
        measures = [
            m
            for m in ("nsdcg", "sdcg", "avg_pos_nsdcg", "n_queries", "n_relevant_found")
            if m in per_session.columns
        ]
        systems = sorted(set(system))
        paired = None
        if len(systems) == 2 and "user_id" in per_session.columns:
            paired = paired_comparison(
                per_session, measures=["nsdcg", "sdcg"], a=systems[0], b=systems[1]
            )
        html = render_report(
            per_session=per_session,
            measures=measures,
            parameters=params,
            figures=figures,
            summary=summary,
            validation_line=report_.summary_line(),
            validation_ok=not report_.problems,
            rejects=report_.rejects,
            paired=paired,
            title=f"sessionval report: {loaded.study.name or Path(logs).name}",
            source=str(logs),
        )
        p = outputs.path("report.html")
        p.write_text(html, encoding="utf-8")
        outputs.add(p)
        bar.update()
    removed = outputs.finish()
    return RunResult(
        out=out,
        files=outputs.written,
        removed=removed,
        per_session=per_session,
        score_table=score_table(per_session, measures=measures),
    )


def _figure_dict(fs: FigureSettings) -> dict[str, Any]:
    return {
        "depth": fs.depth,
        "scenario": fs.scenario,
        "system": fs.system,
        "min_queries": fs.min_queries,
        "max_sessions": fs.max_sessions,
        "cg_gains": fs.cg_gains,
    }


def _default_scenario(topic: np.ndarray, nq: np.ndarray, k: int) -> str:
    """Pick the topic with the most sessions of at least ``k`` queries (ties: first by name)."""
    names, codes = np.unique(topic, return_inverse=True)
    counts = np.bincount(codes, weights=(nq >= k).astype(float), minlength=names.size)
    return str(names[int(np.argmax(counts))])
