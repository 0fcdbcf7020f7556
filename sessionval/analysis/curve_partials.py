r"""The run's figures as sums that add up over partitions of sessions (issue 28, item 2).

A partition of a study (whole sessions) is evaluated on a worker; :func:`figure_partial`
reduces its :class:`~sessionval.evaluation.result.SessionEvaluation` to a
:class:`FigurePartial`: the per-group sums every averaged curve of the run's figures is
computed from (:func:`~sessionval.analysis.curves.session_sums`,
:func:`~sessionval.analysis.rank_sums.query_sums`,
:func:`~sessionval.analysis.rank_sums.cg_sums`, taken in one pass by
:func:`~sessionval.analysis.rank_sums.rank_sums`: the same functions the local curves
call), with the counts and sums of squares of the bands.  :func:`combine_figure_partials`
adds partials by the values of their labels (partitions code their categories
differently); ``workflow/figures.py`` finishes the sum of all partials into the tables
of ``figure_data`` with the local table functions.

Figures 3 and 4 show one scenario (and system), which ``figure_cell`` picks from the
counts of the whole study: a worker cannot know it.  The partial therefore keeps what
depends on the cell for every (topic, system) cell, which is exact and bounded:

- Figure 3's sums by (topic, system) and position, for all sessions and for those of at
  least ``min_queries`` queries (``topics × systems × positions``): a scenario's curve
  per system is its (scenario, system) row, the same sessions summed as locally;
- Figure 4's candidates: the first ``max_sessions`` sessions by session id of each
  (topic, system) cell, with their vectors (at most ``topics × systems ×
  max_sessions`` sessions).  The first ``max_sessions`` of a cell over the whole study
  are among the first ``max_sessions`` of its cell in each partition, so the
  combined candidates hold them;
- the sessions of each (topic, system) cell and those of at least ``min_queries``
  queries, from which ``figure_cell`` picks the cell (:func:`cell_counts`, the one
  count of both paths).

Nothing is kept per session: a partial's size depends on the numbers of systems,
topics, judgment keys, searchers (the categories), positions and ranks (the synthetic
design's, pickled: 0.32 MB at 4,000 sessions, 0.38 MB at 16,000, by longer sessions).
Counts and the cell are exact.  Sums are added partition by partition (and, for the CG
curves, topic by topic), not in the local run's row order, so the means differ from the
local ones in the last bits (1e-12 relative).  The standard errors and interval bounds come from
:math:`\sum x^2 - n\bar x^2` in both paths, which multiplies that rounding by
:math:`\bar x^2 / s^2`: 3e-12 relative at 4,000 sessions, 2e-11 at 16,000 on the ideal
curve of Figure 2.  A residue within the rounding error of the sums is 0 in both
(:func:`~sessionval.analysis.curve_bands.add_bands`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Final, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import JudgmentError, MeasureSpecError
from ..evaluation.config import SessionConfig
from ..evaluation.result import SessionEvaluation
from ..frame.order import id_order
from ..kernels.segments import gather_ranges, offsets_from_counts
from .curves import IDS, SessionSums, session_sums
from .rank_sums import CgSums, QuerySums, rank_sums

__all__ = [
    "Candidates",
    "FigurePartial",
    "cell_counts",
    "combine_figure_partials",
    "figure_partial",
    "in_study_order",
]

T = TypeVar("T", bound=np.generic)

#: The id columns whose categories the partial carries (``session_id``'s are not bounded).
CATEGORIES: Final[tuple[str, ...]] = ("user_id", "topic_id", "system_id")


def cell_counts(sessions: pd.DataFrame, min_queries: int) -> pd.DataFrame:
    """Sessions per (topic, system) cell, and those of at least ``min_queries`` queries.

    Returns
    -------
    pandas.DataFrame
        ``topic_id, system_id`` (text), ``n_sessions``, ``n_long`` (int64): one row per
        cell that has a session, in id text order.
    """
    # counted by category codes (no string per session), then labelled by the cells' text
    cells = (
        pd.DataFrame(
            {
                "topic_id": sessions["topic_id"],
                "system_id": sessions["system_id"],
                "n_sessions": np.ones(len(sessions), dtype=np.int64),
                "n_long": (sessions["n_queries"].to_numpy() >= min_queries).astype(np.int64),
            }
        )
        .groupby(["topic_id", "system_id"], observed=True, sort=False, as_index=False)
        .sum()
    )
    for c in ("topic_id", "system_id"):
        cells[c] = cells[c].astype(str).to_numpy(dtype=object)
    return _summed(cells, ["topic_id", "system_id"])


def _summed(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Rows with the same keys added up, sorted by the keys."""
    return table.groupby(keys, sort=True, as_index=False).sum()


@dataclass(frozen=True)
class Candidates:
    """Figure 4's candidate sessions: the first ``max_sessions`` of each (topic, system).

    Attributes
    ----------
    ids
        One row per session: :data:`~sessionval.analysis.curves.IDS` as text.
    plen
        Positions of each session.
    vectors
        ``sdcg``, ``ideal`` and ``nsdcg`` of the sessions' positions, one after the other.
    """

    ids: pd.DataFrame
    plen: IntArray
    vectors: dict[str, FloatArray]

    def first(self, max_sessions: int) -> Candidates:
        """The first ``max_sessions`` sessions by session id of each (topic, system) cell."""
        order = np.lexsort(
            [self.ids[c].to_numpy(dtype=str) for c in ("session_id", "system_id", "topic_id")]
        )
        ranked = self.ids.iloc[order]
        keep = order[ranked.groupby(["topic_id", "system_id"]).cumcount().to_numpy() < max_sessions]
        return self.take(np.sort(keep))

    def take(self, rows: IntArray) -> Candidates:
        """The sessions ``rows`` (positions), their vectors gathered."""
        start = offsets_from_counts(self.plen)[:-1]
        at = gather_ranges(start[rows], self.plen[rows])
        return Candidates(
            ids=self.ids.iloc[rows].reset_index(drop=True),
            plen=self.plen[rows],
            vectors={k: v[at] for k, v in self.vectors.items()},
        )


@dataclass(frozen=True)
class FigurePartial:
    """The sums behind the run's figures, of one partition of sessions or of several.

    Attributes
    ----------
    config, cg_config
        The configuration of the evaluation and of the CG curves' evaluation.
    ranks, min_queries, max_sessions
        ``[figures]`` settings the sums were taken with.
    squares
        Whether the sums hold the squares of the confidence bands.
    categories
        Values of each id column of :data:`CATEGORIES` (the tables' categories), and
        ``session_id``: no value, its categories' dtype.
    cells
        :func:`cell_counts`.
    deepest
        The longest logged list (results).
    last, best
        Figure 1 (last vs non-last, best vs other), by system.
    sessions
        Figure 2, by system.
    scenario_all, scenario_long
        Figure 3 by (topic, system): all sessions, those of at least ``min_queries``
        queries.
    cg
        The CG curves of Järvelin & Kekäläinen (2002).
    candidates
        Figure 4's candidate sessions.
    """

    config: SessionConfig
    cg_config: SessionConfig
    ranks: int
    min_queries: int
    max_sessions: int
    squares: bool
    categories: dict[str, pd.Index]
    cells: pd.DataFrame
    deepest: int
    last: QuerySums
    best: QuerySums
    sessions: SessionSums
    scenario_all: SessionSums
    scenario_long: SessionSums
    cg: CgSums
    candidates: Candidates


def _as_text(labels: pd.DataFrame) -> pd.DataFrame:
    """Group labels as text (object) columns: partitions code categories differently."""
    return pd.DataFrame({c: labels[c].astype(str).to_numpy(dtype=object) for c in labels.columns})


def _candidates(ev: SessionEvaluation, max_sessions: int) -> Candidates:
    """The first ``max_sessions`` sessions by session id of each (topic, system) of ``ev``."""
    sessions = ev.frame.sessions
    v = ev.positions()
    every = Candidates(
        ids=_as_text(sessions[list(IDS)]),
        plen=np.diff(v.offsets),
        vectors={"sdcg": v.sdcg, "ideal": v.ideal, "nsdcg": ev.nsdcg()},
    )
    return every.first(max_sessions)


def figure_partial(
    ev: SessionEvaluation,
    *,
    ranks: int = 100,
    min_queries: int = 4,
    max_sessions: int = 30,
    squares: bool = False,
    cg_ev: SessionEvaluation | None = None,
) -> FigurePartial:
    """The sums behind the run's figures of one evaluation (a partition of whole sessions).

    Parameters
    ----------
    ev
        The evaluation of the partition's sessions.
    ranks, min_queries, max_sessions
        ``[figures]`` settings.
    squares
        Keep the sums of squares of the confidence bands (``[statistics] bands``).
    cg_ev
        The evaluation behind the CG curves when ``[figures] cg_gains`` differs
        (default ``ev``).

    Returns
    -------
    FigurePartial
        Sums by group; its size does not depend on the number of sessions.
    """
    sessions = ev.frame.sessions
    scenario = ("topic_id", "system_id")
    cg_source = cg_ev if cg_ev is not None else ev

    def text(sums: SessionSums) -> SessionSums:
        return replace(sums, labels=_as_text(sums.labels))

    def query_text(sums: QuerySums) -> QuerySums:
        return replace(sums, labels=_as_text(sums.labels))

    # Figure 1 (last, best) and the CG curves in one pass over the rows
    last, best, cg = rank_sums(ev, ranks=ranks, squares=squares, cg_ev=cg_source)
    return FigurePartial(
        config=ev.config,
        cg_config=cg_source.config,
        ranks=ranks,
        min_queries=min_queries,
        max_sessions=max_sessions,
        squares=squares,
        # session_id: no value (they are not bounded), only the dtype of the categories
        categories={c: sessions[c].cat.categories for c in CATEGORIES}
        | {"session_id": sessions["session_id"].cat.categories[:0]},
        cells=cell_counts(sessions, min_queries),
        deepest=int(ev.frame.queries["n_results"].max()) if ev.frame.n_queries else 0,
        last=query_text(last),
        best=query_text(best),
        sessions=text(session_sums(ev, squares=squares)),
        scenario_all=text(session_sums(ev, by=scenario)),
        scenario_long=text(session_sums(ev, by=scenario, min_queries=min_queries)),
        cg=cg,
        candidates=_candidates(ev, max_sessions),
    )


# ---- combining: rows matched by the values of their labels


def _union(labels: Sequence[pd.DataFrame]) -> tuple[pd.DataFrame, list[IntArray]]:
    """The union of label tables (text columns) and where each table's rows go in it."""
    stacked = pd.concat(labels, ignore_index=True)
    cols = list(stacked.columns)
    key = pd.MultiIndex.from_frame(stacked)
    codes, uniques = pd.factorize(key)
    union = pd.DataFrame(list(uniques), columns=cols) if len(uniques) else stacked.iloc[:0]
    bounds = np.cumsum([0, *(len(t) for t in labels)])
    return union.reset_index(drop=True), [codes[a:b].astype(np.int64) for a, b in pairwise(bounds)]


def _scatter(arrays: Sequence[npt.NDArray[T]], where: Sequence[IntArray], n: int) -> npt.NDArray[T]:
    """Rows of each array added into ``n`` rows at their places (the same group's added)."""
    out = np.zeros((n, *arrays[0].shape[1:]), dtype=arrays[0].dtype)
    for a, w in zip(arrays, where, strict=True):
        np.add.at(out, w, a)
    return out


def _combine_sessions(parts: Sequence[SessionSums]) -> SessionSums:
    labels, where = _union([p.labels for p in parts])
    n = len(labels)
    width = max(p.sums["s"].shape[1] for p in parts)
    longest = np.zeros(n, dtype=np.int64)
    for p, w in zip(parts, where, strict=True):
        np.maximum.at(longest, w, p.longest)
    widened = [p.columns(width) for p in parts]
    return SessionSums(
        labels=labels,
        n_sessions=_scatter([p.n_sessions for p in parts], where, n),
        longest=longest,
        stopped=parts[0].stopped,
        normalise=parts[0].normalise,
        sums={k: _scatter([c[k] for c in widened], where, n) for k in parts[0].sums},
    )


def _combine_queries(parts: Sequence[QuerySums]) -> QuerySums:
    labels, where = _union([p.labels for p in parts])
    n = len(labels)

    def by_group(a: npt.NDArray[T]) -> npt.NDArray[T]:
        return a.reshape(a.shape[0] // 2, 2, *a.shape[1:])

    def rows(arrays: Sequence[npt.NDArray[T]]) -> npt.NDArray[T]:
        out = _scatter(arrays, where, n)
        return out.reshape(2 * n, *out.shape[2:])

    return QuerySums(
        labels=labels,
        compare=parts[0].compare,
        n=rows([by_group(p.n) for p in parts]),
        sums={k: rows([by_group(p.sums[k]) for p in parts]) for k in parts[0].sums},
    )


def _combine_cg(parts: Sequence[CgSums]) -> CgSums:
    names, at_name = _union([pd.DataFrame({"name": p.names}) for p in parts])
    keys = pd.Index([k for p in parts for k in p.keys], dtype=object).unique()
    at_key = [
        np.asarray(keys.get_indexer(pd.Index(p.keys, dtype=object)), dtype=np.int64) for p in parts
    ]
    n_g, n_t, ranks = len(names), len(keys), parts[0].icg.shape[1]
    icg, idcg = np.full((n_t, ranks), np.nan), np.full((n_t, ranks), np.nan)
    for p, k in zip(parts, at_key, strict=True):
        seen = ~np.isnan(icg[k, 0])
        if not (
            np.array_equal(icg[k[seen]], p.icg[seen])
            and np.array_equal(idcg[k[seen]], p.idcg[seen])
        ):
            raise JudgmentError(
                "the partitions' evaluations have different ideal vectors for the same "
                "judgment key: evaluate every partition with the study's judgments"
            )
        icg[k], idcg[k] = p.icg, p.idcg
    count = np.zeros((n_g, n_t), dtype=np.int64)
    cells = {k: np.zeros((n_g, n_t, ranks)) for k in ("cg", "dcg")}
    for p, g, k in zip(parts, at_name, at_key, strict=True):
        np.add.at(count, (g[:, None], k[None, :]), p.count)
        for name, total in cells.items():
            np.add.at(total, (g[:, None], k[None, :]), p.sums[name])
    squares = {
        m: _scatter([p.sums[m] for p in parts], at_name, n_g)
        for m in parts[0].sums
        if m not in cells
    }
    return CgSums(
        names=names["name"].to_numpy(dtype=object),
        keys=keys.to_numpy(dtype=object),
        count=count,
        sums={**cells, **squares},
        icg=icg,
        idcg=idcg,
    )


def _categories(indexes: Sequence[pd.Index]) -> pd.Index:
    """The union of category values, in id order (the whole study's categories)."""
    union = indexes[0].append(list(indexes[1:])).unique() if len(indexes) > 1 else indexes[0]
    return union.take(id_order(union.astype(str)))


def _same_settings(parts: Sequence[FigurePartial]) -> None:
    first = parts[0]
    for p in parts[1:]:
        for name in ("config", "cg_config", "ranks", "min_queries", "max_sessions", "squares"):
            if getattr(p, name) != getattr(first, name):
                raise MeasureSpecError(
                    f"figure partials taken with different {name} cannot be combined: "
                    f"{getattr(first, name)!r} and {getattr(p, name)!r}"
                )


def combine_figure_partials(first: FigurePartial, *others: FigurePartial) -> FigurePartial:
    """The partial of the sessions of all the given partials (each session in one of them).

    Associative and commutative up to the order of floating-point sums: groups are
    matched by the values of their labels, never by category codes.

    Raises
    ------
    MeasureSpecError
        The partials were taken with different settings or configurations.
    JudgmentError
        Two partials have different ideal vectors for one judgment key.
    """
    parts = [first, *others]
    if not others:
        return first
    _same_settings(parts)
    candidates = Candidates(
        ids=pd.concat([p.candidates.ids for p in parts], ignore_index=True),
        plen=np.concatenate([p.candidates.plen for p in parts]),
        vectors={
            k: np.concatenate([p.candidates.vectors[k] for p in parts])
            for k in first.candidates.vectors
        },
    )
    return replace(
        first,
        categories={c: _categories([p.categories[c] for p in parts]) for c in first.categories},
        cells=_summed(
            pd.concat([p.cells for p in parts], ignore_index=True), ["topic_id", "system_id"]
        ),
        deepest=max(p.deepest for p in parts),
        last=_combine_queries([p.last for p in parts]),
        best=_combine_queries([p.best for p in parts]),
        sessions=_combine_sessions([p.sessions for p in parts]),
        scenario_all=_combine_sessions([p.scenario_all for p in parts]),
        scenario_long=_combine_sessions([p.scenario_long for p in parts]),
        cg=_combine_cg([p.cg for p in parts]),
        candidates=candidates.first(first.max_sessions),
    )


# ---- finishing: groups in the order of the local tables


def _id_rank(labels: pd.DataFrame, categories: dict[str, pd.Index]) -> IntArray:
    """Positions that sort label rows as the local tables do: by category (id) order."""
    keys = [
        np.asarray(pd.Index(categories[c].astype(str)).get_indexer(labels[c]), dtype=np.int64)
        for c in reversed(labels.columns)
    ]
    return np.lexsort(keys) if keys else np.arange(len(labels), dtype=np.int64)


def _take_queries(sums: QuerySums, rows: IntArray) -> QuerySums:
    both = np.stack([2 * rows, 2 * rows + 1], axis=1).ravel()
    return QuerySums(
        labels=sums.labels.iloc[rows].reset_index(drop=True),
        compare=sums.compare,
        n=sums.n[both],
        sums={k: a[both] for k, a in sums.sums.items()},
    )


def _take_cg(sums: CgSums, rows: IntArray) -> CgSums:
    return replace(
        sums,
        names=sums.names[rows],
        count=sums.count[rows],
        sums={k: a[rows] for k, a in sums.sums.items()},
    )


def in_study_order(partial: FigurePartial) -> FigurePartial:
    """The partial with its groups in the local tables' order.

    Systems and topics in id order (the categories' order, as ``group_codes`` sorts
    them), the CG curves' systems in text order.
    """
    cats = partial.categories

    def sessions(sums: SessionSums) -> SessionSums:
        return sums.take(_id_rank(sums.labels, cats), list(sums.labels.columns))

    return replace(
        partial,
        last=_take_queries(partial.last, _id_rank(partial.last.labels, cats)),
        best=_take_queries(partial.best, _id_rank(partial.best.labels, cats)),
        sessions=sessions(partial.sessions),
        scenario_all=sessions(partial.scenario_all),
        scenario_long=sessions(partial.scenario_long),
        cg=_take_cg(partial.cg, np.argsort(partial.cg.names.astype(str), kind="stable")),
    )
