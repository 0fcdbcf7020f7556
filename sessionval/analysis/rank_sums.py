"""The sums behind the rank curves, taken in one pass over the result rows.

Figure 1 of Järvelin et al. (2008) (the last, and the best, query against the others:
:func:`query_sums`) and Figures 1-4 of Järvelin & Kekäläinen (2002) (CG, DCG, nCG and
nDCG per system: :func:`cg_sums`) average cumulated (discounted) gain vectors of ranked
lists.  Their sums are taken chunk by chunk of :data:`QUERY_BLOCK` whole queries: each
chunk's rows (the grade join of those rows alone,
:meth:`~sessionval.evaluation.result.SessionEvaluation.ranked_gains`) are added into
running (cell, rank) sums in row order, so the sums are bit for bit those of one call
over every row while a chunk's rows are in memory, not the study's.

:func:`rank_sums` takes the three sums the run's figures need in one such pass: the
rows of a chunk, their discounted gains and each query's cumulated vector (the bands'
squares) serve Figure 1 (last and best) and the CG curves alike, instead of one pass
(and one grade join) per curve.  Each sum is the one its own function takes alone.

The work on a chunk that does not depend on the others (its grade join, cumulated
vectors and each cell's sum of their squares: :meth:`_QueryAdder.partial`) runs on
:data:`WORKERS` threads, chunks ahead of the one being added; the running sums take
each chunk's rows and partial sums in chunk order (:func:`_in_order`), so the sums are
bit for bit those of one thread.  NumPy releases the GIL in the array work, so a second
core does part of it.
"""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Final, Literal, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import MeasureSpecError
from ..evaluation.result import SessionEvaluation
from ..kernels.cumulate import add_by_rank, cumulate_by_rank, cumulate_lists
from ..kernels.discounts import rank_discount
from .curve_bands import QUERY_BLOCK, cell_runs, square_sums
from .groups import group_codes

__all__ = [
    "CG_MEASURES",
    "CgSums",
    "QuerySums",
    "cg_sums",
    "query_sums",
    "rank_sums",
]

CG_MEASURES: Final[tuple[str, ...]] = ("CG", "DCG", "nCG", "nDCG")

#: Threads preparing chunks (:func:`_in_order`): two cores' worth, or one where there is one.
WORKERS: Final[int] = min(2, os.cpu_count() or 1)

#: A chunk's partial sums of squares: (name of the running sum, its cells, their sums).
_Partial = list[tuple[str, IntArray, FloatArray]]
_T = TypeVar("_T")
_R = TypeVar("_R")


@dataclass
class _Chunk:
    """The rows of queries ``q0 .. q0 + n - 1`` cut at ``ranks``, and what they share.

    ``d`` is each row's discounted gain; :meth:`scaled` each row's value times a per-query
    weight, :meth:`cumulated` each query's cumulated vector of some row values and
    :meth:`squared` its square, each taken once per chunk whoever asks (the bands'
    squares), until :meth:`release`.
    """

    q0: int
    n: int
    ranks: int
    q: IntArray
    r: IntArray
    g: FloatArray
    d: FloatArray
    _memo: dict[str, FloatArray] = field(default_factory=dict)

    def scaled(self, key: str, values: FloatArray, weight: FloatArray) -> FloatArray:
        """Each row's ``values`` times its query's ``weight`` (one per ``key``)."""
        if key not in self._memo:
            self._memo[key] = values * weight[self.q]
        return self._memo[key]

    def cumulated(self, key: str, values: FloatArray) -> FloatArray:
        """``(n, ranks)``: each query's cumulated vector of ``values`` (one per ``key``)."""
        cum = f"cum {key}"
        if cum not in self._memo:
            self._memo[cum] = cumulate_by_rank(
                self.q - self.q0, self.r, values, n_cells=self.n, ranks=self.ranks
            )
        return self._memo[cum]

    def squared(self, key: str, values: FloatArray) -> FloatArray:
        """``(n, ranks)``: the square of :meth:`cumulated` (one per ``key``)."""
        sq = f"sq {key}"
        if sq not in self._memo:
            self._memo[sq] = self.cumulated(key, values) ** 2
        return self._memo[sq]

    def release(self) -> None:
        """Drop the dense vectors (``n`` by ``ranks`` each); keep the rows and scaled values."""
        for k in [k for k in self._memo if k.startswith(("cum ", "sq "))]:
            del self._memo[k]


def _chunks(ev: SessionEvaluation, ranks: int) -> Iterator[Callable[[], _Chunk]]:
    """The rows of ``ev`` at rank ``<= ranks``, :data:`QUERY_BLOCK` whole queries at a time.

    Each chunk as the function that looks it up (run on a worker: :func:`_in_order`).  The
    same rows in the same order as :func:`~sessionval.analysis.rank_curves.rank_gains`
    (``query`` non-decreasing), so sums added chunk after chunk in row order are bit for
    bit the one-call sums.
    """
    n_q = ev.query_session.size
    disc = rank_discount(np.arange(1, ranks + 1), b=ev.config.b, kind=ev.config.discount)

    def chunk(q0: int) -> _Chunk:
        q, r, g = ev.ranked_gains(queries=(q0, q0 + QUERY_BLOCK))
        if r.size and int(r.max()) > ranks:
            cut = r <= ranks
            q, r, g = q[cut], r[cut], g[cut]
        return _Chunk(q0, min(n_q, q0 + QUERY_BLOCK) - q0, ranks, q, r, g, g / disc[r - 1])

    for q0 in range(0, n_q, QUERY_BLOCK):
        yield functools.partial(chunk, q0)


def _in_order(work: Callable[[_T], _R], items: Iterable[_T]) -> Iterator[_R]:
    """``work`` of each item on :data:`WORKERS` threads, the results in the items' order.

    At most ``WORKERS`` items are in flight (each holds a chunk's rows and, while it is
    worked on, its dense vectors), so the memory stays a few chunks' whatever the
    study's size.  One worker: in this thread.
    """
    if WORKERS < 2:
        yield from map(work, items)
        return
    with ThreadPoolExecutor(WORKERS, thread_name_prefix="rank_sums") as pool:
        pending: deque[Future[_R]] = deque()
        for item in items:
            pending.append(pool.submit(work, item))
            if len(pending) >= WORKERS:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


@dataclass(frozen=True)
class QuerySums:
    """What :func:`~sessionval.analysis.rank_curves.query_curves` averages: sums per cell and rank.

    Attributes
    ----------
    labels
        One row per group (the ``by`` columns, the sessions' values).
    compare
        ``"last"`` or ``"best"``: class 0 is the last (best) query, class 1 the others.
    n
        ``(2 n_groups,)`` queries per (group, class), row ``2 g + class``.
    sums
        ``(2 n_groups, ranks)``: ``sdcg_q`` and ``dcg_q``, the (discounted) gains at each
        rank summed over the cell's queries (the table cumulates them along ranks:
        :func:`~sessionval.kernels.cumulate.cumulate_by_rank`), and for the bands
        ``sdcg_q2`` and ``dcg_q2``, the sums of the squared cumulated vectors
        (:func:`~sessionval.analysis.curve_bands.cumulated_squares`).
    """

    labels: pd.DataFrame
    compare: Literal["last", "best"]
    n: IntArray
    sums: dict[str, FloatArray]


class _QueryAdder:
    """:func:`query_sums` as running sums, a chunk of rows at a time."""

    def __init__(
        self,
        ev: SessionEvaluation,
        by: Sequence[str],
        compare: Literal["last", "best"],
        ranks: int,
        squares: bool,
    ) -> None:
        if compare not in ("last", "best"):
            raise MeasureSpecError(f"compare must be 'last' or 'best', got {compare!r}")
        sessions = ev.frame.sessions
        gcode, self.labels = group_codes(sessions, by, np.ones(len(sessions), dtype=bool))
        n_cls = len(self.labels) * 2
        last, best = ev.last_and_best()
        chosen = last if compare == "last" else best
        is_sel = np.zeros(ev.query_session.size, dtype=bool)
        is_sel[chosen[chosen >= 0]] = True
        qclass = np.where(is_sel, 0, 1)  # 0: last/best, 1: other
        self.qgroup = gcode[ev.query_session] * 2 + qclass
        self.n = np.bincount(self.qgroup, minlength=n_cls).astype(np.int64)
        self.qd = np.asarray(ev.queries["qd"], dtype=np.float64)
        self.compare: Literal["last", "best"] = compare
        self.squares = squares
        names = ("dcg_q", "sdcg_q") + (("sdcg_q2", "dcg_q2") if squares else ())
        self.sums = {k: np.zeros((n_cls, ranks)) for k in names}

    def partial(self, c: _Chunk) -> _Partial:
        """The chunk's sums of squares per cell (no running sum touched: any thread)."""
        if not self.squares:
            return []
        runs = cell_runs(self.qgroup[c.q0 : c.q0 + c.n])
        dq = c.scaled("dq", c.d, self.qd)
        return [
            ("sdcg_q2", *square_sums(c.squared("dq", dq), runs)),
            ("dcg_q2", *square_sums(c.squared("d", c.d), runs)),
        ]

    def add(self, c: _Chunk, partial: _Partial) -> None:
        """Add the chunk's rows and :meth:`partial` to the running sums (chunks in order)."""
        cells = self.qgroup[c.q]
        add_by_rank(self.sums["dcg_q"], cells, c.r, c.d)
        add_by_rank(self.sums["sdcg_q"], cells, c.r, c.scaled("dq", c.d, self.qd))
        for name, at, sums in partial:
            self.sums[name][at] += sums

    def result(self) -> QuerySums:
        return QuerySums(labels=self.labels, compare=self.compare, n=self.n, sums=self.sums)


def query_sums(
    ev: SessionEvaluation,
    *,
    by: Sequence[str] = ("system_id",),
    compare: Literal["last", "best"] = "last",
    ranks: int = 100,
    squares: bool = False,
) -> QuerySums:
    """The sums behind :func:`~sessionval.analysis.rank_curves.query_curves` (Figure 1 of 2008).

    Same parameters; ``squares`` for the bands.
    """
    adder = _QueryAdder(ev, by, compare, ranks, squares)
    _one_pass(ev, ranks, [adder])
    return adder.result()


@dataclass(frozen=True)
class CgSums:
    """What :func:`~sessionval.analysis.rank_curves.cg_curves` averages: sums per cell and rank.

    Attributes
    ----------
    names
        The systems, as text (``n_systems``).
    keys
        The judgment keys of the queries (``n_keys``; ``None``: queries without
        judgments), each with its ideal vectors.
    count
        ``(n_systems, n_keys)`` queries per cell.
    sums
        ``cg`` and ``dcg``: ``(n_systems, n_keys, ranks)`` gains (discounted gains) at
        each rank summed over the cell's queries (cumulated by the table); for the
        bands, ``CG``, ``DCG``, ``nCG`` and ``nDCG``: ``(n_systems, ranks)`` sums of the
        squared (normalised) cumulated vectors of each system's queries.
    icg, idcg
        ``(n_keys, ranks)``: each key's ideal CG and DCG vectors.
    """

    names: npt.NDArray[np.object_]
    keys: npt.NDArray[np.object_]
    count: IntArray
    sums: dict[str, FloatArray]
    icg: FloatArray
    idcg: FloatArray


class _CgAdder:
    """:func:`cg_sums` as running sums, a chunk of rows at a time."""

    def __init__(self, ev: SessionEvaluation, by: str, ranks: int, squares: bool) -> None:
        sessions = ev.frame.sessions
        if by not in sessions.columns:
            raise MeasureSpecError(
                f"cannot name curves by {by!r}; "
                f"session columns: {', '.join(map(str, sessions.columns))}"
            )
        # curves are named by the system's text (sorted as text), whatever the column's dtype
        gcode, labels = group_codes(
            sessions[[by]].astype(str), (by,), np.ones(len(sessions), dtype=bool)
        )
        self.names = labels[by].to_numpy(dtype=object)
        n_g = self.names.size
        self.qsys = gcode[ev.query_session]
        # topics (ideal positions) actually used, compressed to 0..n_t-1 (-1: no judgments)
        used, self.qtop = np.unique(np.asarray(ev.query_ideal, dtype=np.int64), return_inverse=True)
        self.n_t = n_t = used.size
        self.keys = np.array(
            [None if u < 0 else str(ev.ideal_source.keys[u]) for u in used], dtype=object
        )
        disc = rank_discount(np.arange(1, ranks + 1), b=ev.config.b, kind=ev.config.discount)
        ioff, ivals = ev.ideal_source.segments(used, depth=ranks)  # -1 gives an empty list
        self.icg = cumulate_lists(ioff, ivals, ranks=ranks)  # (n_t, ranks)
        self.idcg = cumulate_lists(ioff, ivals, ranks=ranks, discount=disc)
        defined = self.icg[:, 0] > 0  # a relevant document: CG_I and DCG_I > 0 at every rank
        self.defined_cell = np.where(defined[self.qtop], self.qsys, -1)
        self.squares = squares
        self.sums: dict[str, FloatArray] = {
            "cg": np.zeros((n_g * n_t, ranks)),
            "dcg": np.zeros((n_g * n_t, ranks)),
        }
        if squares:
            self.sums |= {m: np.zeros((n_g, ranks)) for m in CG_MEASURES}

    def partial(self, c: _Chunk) -> _Partial:
        """The chunk's sums of squares per system (no running sum touched: any thread)."""
        if not self.squares:
            return []
        q0, q1 = c.q0, c.q0 + c.n
        by_system = cell_runs(self.qsys[q0:q1])
        defined = cell_runs(self.defined_cell[q0:q1])
        top = self.qtop[q0:q1]
        cum_g, cum_d = c.cumulated("g", c.g), c.cumulated("d", c.d)
        with np.errstate(divide="ignore", invalid="ignore"):
            ncg, ndcg = (cum_g / self.icg[top]) ** 2, (cum_d / self.idcg[top]) ** 2
        return [
            ("CG", *square_sums(c.squared("g", c.g), by_system)),
            ("DCG", *square_sums(c.squared("d", c.d), by_system)),
            ("nCG", *square_sums(ncg, defined)),
            ("nDCG", *square_sums(ndcg, defined)),
        ]

    def add(self, c: _Chunk, partial: _Partial) -> None:
        """Add the chunk's rows and :meth:`partial` to the running sums (chunks in order)."""
        cells = self.qsys[c.q] * self.n_t + self.qtop[c.q]
        add_by_rank(self.sums["cg"], cells, c.r, c.g)
        add_by_rank(self.sums["dcg"], cells, c.r, c.d)
        for name, at, sums in partial:
            self.sums[name][at] += sums

    def result(self) -> CgSums:
        n_g, n_t = self.names.size, self.n_t
        sums = dict(self.sums)
        sums["cg"] = sums["cg"].reshape(n_g, n_t, -1)
        sums["dcg"] = sums["dcg"].reshape(n_g, n_t, -1)
        count = np.bincount(self.qsys * n_t + self.qtop, minlength=n_g * n_t).reshape(n_g, n_t)
        return CgSums(
            names=self.names,
            keys=self.keys,
            count=count.astype(np.int64),
            sums=sums,
            icg=self.icg,
            idcg=self.idcg,
        )


def cg_sums(
    ev: SessionEvaluation, *, by: str = "system_id", ranks: int = 100, squares: bool = False
) -> CgSums:
    """The sums behind :func:`~sessionval.analysis.rank_curves.cg_curves` (2002, Figures 1-4).

    Same parameters; ``squares`` for the bands.
    """
    adder = _CgAdder(ev, by, ranks, squares)
    _one_pass(ev, ranks, [adder])
    return adder.result()


def rank_sums(
    ev: SessionEvaluation,
    *,
    ranks: int = 100,
    squares: bool = False,
    by: Sequence[str] = ("system_id",),
    cg_ev: SessionEvaluation | None = None,
) -> tuple[QuerySums, QuerySums, CgSums]:
    """Figure 1's sums (last, best) and the CG curves' in one pass over the result rows.

    The :func:`query_sums` of ``compare="last"`` and ``"best"`` and the :func:`cg_sums`
    (of ``cg_ev``, default ``ev``: the CG curves' own gains) by the first ``by`` column,
    bit for bit those three calls: each chunk of rows is looked up, discounted and
    cumulated once for all of them.

    """
    cg_source = ev if cg_ev is None else cg_ev
    last = _QueryAdder(ev, by, "last", ranks, squares)
    best = _QueryAdder(ev, by, "best", ranks, squares)
    cg = _CgAdder(cg_source, by[0], ranks, squares)
    if cg_source is ev:
        _one_pass(ev, ranks, [last, best, cg])
    else:  # the CG curves' rows carry their own gains when cg_ev is another evaluation
        _one_pass(ev, ranks, [last, best], cg_source, [cg])
    return last.result(), best.result(), cg.result()


_Adder = _QueryAdder | _CgAdder


def _one_pass(
    ev: SessionEvaluation,
    ranks: int,
    adders: Sequence[_Adder],
    other: SessionEvaluation | None = None,
    other_adders: Sequence[_Adder] = (),
) -> None:
    """Each chunk of ``ev`` to ``adders`` (the same chunk of ``other`` to ``other_adders``).

    A chunk is looked up and its partial sums taken on a worker (:func:`_in_order`), then
    added to the running sums here, chunk after chunk in row order.
    """
    looks = _chunks(ev, ranks)
    jobs: Iterable[tuple[Callable[[], _Chunk], Callable[[], _Chunk] | None]] = (
        ((look, None) for look in looks)
        if other is None
        else zip(looks, _chunks(other, ranks), strict=True)
    )

    def prepare(
        job: tuple[Callable[[], _Chunk], Callable[[], _Chunk] | None],
    ) -> tuple[_Chunk, _Chunk, list[_Partial]]:
        chunk = job[0]()
        its = chunk if job[1] is None else job[1]()
        parts = [a.partial(chunk) for a in adders] + [a.partial(its) for a in other_adders]
        chunk.release()
        its.release()
        return chunk, its, parts

    for chunk, its, parts in _in_order(prepare, jobs):
        for adder, part in zip(adders, parts, strict=False):
            adder.add(chunk, part)
        for adder, part in zip(other_adders, parts[len(adders) :], strict=True):
            adder.add(its, part)
