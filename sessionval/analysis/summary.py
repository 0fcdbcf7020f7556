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
from ..frame import LoadedStudy
from ..judgments.coverage import BASE, coverage_counts

__all__ = [
    "StudySummary",
    "summarize",
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
    f = loaded.frame
    s, q, r = f.sessions, f.queries, f.results
    unjudged_queries = 0
    if loaded.judgments is not None:
        judged_keys = set(loaded.judgments.topics.astype(str))
        unjudged_queries = int((~q["qrels_id"].astype(str).isin(judged_keys)).sum())
    counts = pd.DataFrame(
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
                s["user_id"].nunique(),
                s["topic_id"].nunique(),
                s["system_id"].nunique(),
                len(s),
                len(q),
                loaded.n_results if isinstance(loaded, RemoteStudy) else len(r),
                int((q["n_results"] == 0).sum()),
                unjudged_queries,
            ],
        }
    )
    design = pd.crosstab(
        s["system_id"].astype(str), s["topic_id"].astype(str), margins=True, margins_name="total"
    )
    design.index.name, design.columns.name = "system", "topic"

    nq = s["n_queries"].to_numpy()
    qps = pd.crosstab(s["system_id"].astype(str), nq)
    qps = qps.reindex(columns=range(1, int(nq.max()) + 1 if len(nq) else 1), fill_value=0)
    qps.columns = [str(c) for c in qps.columns]
    grouped = pd.Series(nq, index=s["system_id"].astype(str).to_numpy()).groupby(level=0)
    qps["sessions"] = grouped.size()
    qps["queries"] = grouped.sum()
    qps["avg per session"] = grouped.mean()
    total = qps.sum(numeric_only=True)
    total["avg per session"] = float(nq.mean()) if len(nq) else np.nan
    qps.loc["all"] = total
    qps.index.name = "system"

    coverage = _coverage(loaded)
    judg = pd.DataFrame()
    if loaded.judgments is not None:
        t = loaded.judgments.table
        used = set(q["qrels_id"].astype(str))
        t = t[t["topic_id"].astype(str).isin(used)]
        judg = pd.crosstab(
            t["topic_id"].astype(str), t["grade"], margins=True, margins_name="total"
        )
        judg.index.name, judg.columns.name = "topic", "grade"
    return StudySummary(counts, design, qps, coverage, judg, loaded.report.summary_line())


def _coverage(loaded: LoadedStudy) -> pd.DataFrame:
    if isinstance(loaded, RemoteStudy):  # counted on the workers, where the result rows are
        return _coverage_table(loaded.coverage)
    return _coverage_table(coverage_counts(loaded.frame, loaded.judgments))


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
