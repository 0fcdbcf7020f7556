"""The study summary that ``sessionval validate`` prints and the run report shows.

Counts of searchers, sessions and queries, sessions per system × scenario, the
distribution of queries per session in the layout of Järvelin et al. (2008),
Table 2, and how much of what was logged is judged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..evaluation.remote import RemoteStudy
from ..frame import JudgmentFrame, LoadedStudy, SessionFrame
from ..judgments.coverage import BASE, coverage_counts, sum_counts

__all__ = [
    "StudySummary",
    "SummaryCounts",
    "summarize",
    "summary_counts",
    "summary_from_counts",
]


@dataclass(frozen=True)
class StudySummary:
    """Descriptive tables of a loaded study (all plain DataFrames, ready to print or export).

    Attributes
    ----------
    counts
        One row per entity kind: searchers, topics, systems, sessions, queries, results.
    design
        Sessions per system (rows) × topic (columns), with totals.
    queries_per_session
        Per system: number of sessions issuing exactly 1, 2, … queries, the number of
        sessions and the average per session (Järvelin et al. 2008, Table 2).
    coverage
        Fraction of logged result rows with a reference judgment (all ranks and top 10)
        and with a searcher judgment, per system and overall.
    judgments
        Number of judgments per grade and per topic (empty without judgments).
    report_line
        ``records read = accepted + rejected``.
    """

    counts: pd.DataFrame
    design: pd.DataFrame
    queries_per_session: pd.DataFrame
    coverage: pd.DataFrame
    judgments: pd.DataFrame
    report_line: str

    def _tables(self) -> dict[str, pd.DataFrame]:
        """Each table under the heading :meth:`to_text` gives it."""
        tables = {
            "Study": self.counts,
            "Sessions per system x topic": self.design,
            "Sessions issuing exactly n queries (Jarvelin et al. 2008, Table 2)": (
                self.queries_per_session
            ),
            "Judgment coverage of logged results": self.coverage,
        }
        if len(self.judgments):
            tables["Reference judgments per topic and grade"] = self.judgments
        return tables

    def __repr__(self) -> str:
        """The balance line and the counts (:meth:`to_text` has every table)."""
        counts = ", ".join(
            f"{w} {c}" for w, c in zip(self.counts.iloc[:, 0], self.counts.iloc[:, 1], strict=True)
        )
        return f"StudySummary({self.report_line}; {counts})"

    def _repr_html_(self) -> str:
        """Every table under its heading, for a notebook."""
        from ..evaluation.display import html_block

        return html_block("StudySummary", [self.report_line], self._tables(), digits=3)

    def to_text(self) -> str:
        """A plain-text rendering for terminals and READMEs."""
        parts = [
            self.report_line,
            "",
            "Study",
            self.counts.to_string(index=False),
            "",
            "Sessions per system x topic",
            self.design.to_string(),
            "",
            "Sessions issuing exactly n queries (Jarvelin et al. 2008, Table 2)",
            self.queries_per_session.to_string(float_format=lambda x: f"{x:.2f}"),
            "",
            "Judgment coverage of logged results",
            self.coverage.to_string(float_format=lambda x: f"{x:.3f}"),
        ]
        if len(self.judgments):
            parts += ["", "Reference judgments per topic and grade", self.judgments.to_string()]
        return "\n".join(parts)


@dataclass(frozen=True)
class SummaryCounts:
    """What the study summary is made of, as counts that add up over partitions.

    A partitioned study's summary is its partitions' counts added up
    (:meth:`combine`) and finished by :func:`summary_from_counts`; a study in one
    piece goes through the same two functions (:func:`summarize`), so both are the
    same tables.  The size grows with the searchers, topics and systems (their
    distinct ids and the system x topic and system x queries-per-session cells),
    not with the sessions.
    """

    users: pd.Index  # distinct searcher ids (strings)
    topics: pd.Index
    systems: pd.Index
    design: pd.Series  # sessions per (system, topic)
    queries_per_session: pd.Series  # sessions per (system, number of queries)
    n_sessions: int
    n_queries: int
    n_results: int
    no_results: int  # queries without a result
    unjudged_queries: int
    qrels_used: pd.Index  # the qrels ids the queries use
    coverage: pd.DataFrame  # coverage_counts

    def combine(self, other: SummaryCounts) -> SummaryCounts:
        """The counts of both parts of a study (sessions in one part only)."""

        def add(a: pd.Series, b: pd.Series) -> pd.Series:
            return a.add(b, fill_value=0).astype(np.int64)

        return SummaryCounts(
            users=self.users.union(other.users, sort=False),
            topics=self.topics.union(other.topics, sort=False),
            systems=self.systems.union(other.systems, sort=False),
            design=add(self.design, other.design),
            queries_per_session=add(self.queries_per_session, other.queries_per_session),
            n_sessions=self.n_sessions + other.n_sessions,
            n_queries=self.n_queries + other.n_queries,
            n_results=self.n_results + other.n_results,
            no_results=self.no_results + other.no_results,
            unjudged_queries=self.unjudged_queries + other.unjudged_queries,
            qrels_used=self.qrels_used.union(other.qrels_used, sort=False),
            coverage=sum_counts([self.coverage, other.coverage]),
        )


def _distinct(values: pd.Series) -> pd.Index:
    return pd.Index(pd.unique(values.astype(str).to_numpy()), dtype=object)


def summary_counts(
    frame: SessionFrame,
    judgments: JudgmentFrame | None,
    *,
    n_results: int | None = None,
    coverage: pd.DataFrame | None = None,
) -> SummaryCounts:
    """The summary's counts of ``frame`` (a study, or one partition of it).

    ``n_results`` and ``coverage`` are given when the frame's result rows were
    counted elsewhere (a study whose rows stay on a cluster's workers).
    """
    s, q = frame.sessions, frame.queries
    unjudged = 0
    if judgments is not None:
        judged_keys = set(judgments.topics.astype(str))
        unjudged = int((~q["qrels_id"].astype(str).isin(judged_keys)).sum())
    system = s["system_id"].astype(str).to_numpy()
    nq = s["n_queries"].to_numpy().astype(np.int64)
    design = (
        pd.Series(
            1,
            index=pd.MultiIndex.from_arrays(
                [system, s["topic_id"].astype(str).to_numpy()], names=["system", "topic"]
            ),
            dtype=np.int64,
        )
        .groupby(level=[0, 1])
        .sum()
    )
    qps = (
        pd.Series(
            1,
            index=pd.MultiIndex.from_arrays([system, nq], names=["system", "n_queries"]),
            dtype=np.int64,
        )
        .groupby(level=[0, 1])
        .sum()
    )
    return SummaryCounts(
        users=_distinct(s["user_id"]),
        topics=_distinct(s["topic_id"]),
        systems=_distinct(s["system_id"]),
        design=design,
        queries_per_session=qps,
        n_sessions=len(s),
        n_queries=len(q),
        n_results=len(frame.results) if n_results is None else n_results,
        no_results=int((q["n_results"] == 0).sum()),
        unjudged_queries=unjudged,
        qrels_used=_distinct(q["qrels_id"]),
        coverage=coverage_counts(frame, judgments) if coverage is None else coverage,
    )


def summarize(loaded: LoadedStudy) -> StudySummary:
    """Summarise a loaded study.

    Parameters
    ----------
    loaded
        The result of :func:`sessionval.io.load_study`.

    Returns
    -------
    StudySummary
    """
    remote = loaded if isinstance(loaded, RemoteStudy) else None  # rows counted on the workers
    counts = summary_counts(
        loaded.frame,
        loaded.judgments,
        n_results=remote.n_results if remote is not None else None,
        coverage=remote.coverage if remote is not None else None,
    )
    return summary_from_counts(counts, loaded.judgments, loaded.report.summary_line())


def summary_from_counts(
    counts: SummaryCounts, judgments: JudgmentFrame | None, report_line: str
) -> StudySummary:
    """The study summary's tables from its counts (:func:`summary_counts`, added up)."""
    table = pd.DataFrame(
        {
            "what": [
                "searchers",
                "topics",
                "systems",
                "sessions",
                "queries",
                "results",
                "queries without results",
                "queries without judgments",
            ],
            "count": [
                len(counts.users),
                len(counts.topics),
                len(counts.systems),
                counts.n_sessions,
                counts.n_queries,
                counts.n_results,
                counts.no_results,
                counts.unjudged_queries,
            ],
        }
    )
    design = _with_margins(counts.design.unstack(fill_value=0))  # noqa: PD010 - a Series
    design.index.name, design.columns.name = "system", "topic"

    cells = counts.queries_per_session
    qps = cells.unstack(fill_value=0).sort_index()  # noqa: PD010 - a Series
    deepest = int(cells.index.get_level_values(1).max()) if len(cells) else 0
    qps = qps.reindex(columns=range(1, deepest + 1 if deepest else 2), fill_value=0)
    qps.columns = [str(c) for c in qps.columns]
    qps.columns.name = None
    nq = cells.index.get_level_values(1).to_numpy()
    per_system = (
        pd.DataFrame(
            {"sessions": cells.to_numpy(), "queries": cells.to_numpy() * nq},
            index=cells.index.get_level_values(0),
        )
        .groupby(level=0)
        .sum()
    )
    qps["sessions"] = per_system["sessions"]
    qps["queries"] = per_system["queries"]
    qps["avg per session"] = per_system["queries"] / per_system["sessions"]
    total = qps.sum(numeric_only=True)
    n_s, n_q = int(per_system["sessions"].sum()), int(per_system["queries"].sum())
    total["avg per session"] = n_q / n_s if n_s else np.nan
    qps.loc["all"] = total
    qps.index.name = "system"

    judg = pd.DataFrame()
    if judgments is not None:
        t = judgments.table
        t = t[t["topic_id"].astype(str).isin(set(counts.qrels_used))]
        judg = pd.crosstab(
            t["topic_id"].astype(str), t["grade"], margins=True, margins_name="total"
        )
        judg.index.name, judg.columns.name = "topic", "grade"
    return StudySummary(table, design, qps, _coverage_table(counts.coverage), judg, report_line)


def _with_margins(cells: pd.DataFrame) -> pd.DataFrame:
    """``cells`` (sorted by both labels) with a ``total`` row and column, as ``pd.crosstab``."""
    cells = cells.sort_index().sort_index(axis=1).astype(np.int64)
    cells["total"] = cells.sum(axis=1)
    cells.loc["total"] = cells.sum(axis=0)
    return cells


def _coverage_table(counts: pd.DataFrame) -> pd.DataFrame:
    """Coverage fractions per system (systems with results, by name) and over all of them."""
    n = counts["results"].to_numpy()
    used = np.flatnonzero(n)
    names = counts.index.to_numpy().astype(str)[used]
    order = np.argsort(names, kind="stable")
    table: dict[str, list[float]] = {}
    for name in counts.columns:
        if name == "results" or name.endswith(BASE):
            continue
        hits = counts[name].to_numpy()
        base = counts[name + BASE].to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            per_sys = (hits / base)[used][order]
        total = base.sum()
        table[name] = [*per_sys.tolist(), hits.sum() / total if total else np.nan]
    index = pd.Index([*names[order].tolist(), "all"], name="system")
    by_sys = pd.DataFrame(table, index=index)
    by_sys.insert(0, "results", [*n[used][order].tolist(), int(n.sum())])
    return by_sys
