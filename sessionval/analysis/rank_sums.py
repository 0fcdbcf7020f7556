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
The cumulated vectors are the columns of reused ``(ranks, queries)`` matrices, the
queries laid out by system, so the sums of squares by system need no gather.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._types import FloatArray, IntArray
from ..errors import MeasureSpecError
from ..evaluation.result import SessionEvaluation
from ..kernels.cumulate import add_at_index, cumulate_down, cumulate_lists
from ..kernels.discounts import rank_discount
from .curve_bands import QUERY_BLOCK, add_column_squares, cell_runs
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


#: Columns after a chunk's queries in the dense (rank, query) matrices: a row of exactly
#: 2^14 doubles would put every rank of a query in the same cache set.
_PAD: Final[int] = 8


class _Dense:
    """Scratch matrices of one pass, reused chunk after chunk.

    :meth:`base` gives a ``(ranks, QUERY_BLOCK + _PAD)`` matrix (a query per column: a
    rank of every query is one contiguous row), :meth:`flat` a contiguous ``(ranks, n)``
    one.  A fresh matrix per chunk would be a fresh mapping the
    kernel zeroes (13 MB each at 100 ranks); the pass holds these few instead.
    """

    def __init__(self, ranks: int) -> None:
        self.ranks = ranks
        self.stride = QUERY_BLOCK + _PAD
        self._mats: dict[str, FloatArray] = {}

    def base(self, key: str) -> FloatArray:
        """The whole matrix ``key`` (contents left from the last chunk)."""
        if key not in self._mats:
            self._mats[key] = np.empty((self.ranks, self.stride))
        return self._mats[key]

    def flat(self, key: str, n: int) -> FloatArray:
        """A C-contiguous ``(ranks, n)`` scratch matrix (in the storage of matrix ``key``)."""
        return self.base(key).reshape(-1)[: self.ranks * n].reshape(self.ranks, n)


@dataclass
class _Chunk:
    """The rows of queries ``q0 .. q0 + n - 1`` cut at ``ranks``, and what they share.

    ``q``, ``r``, ``g``: each row's query, rank and gain; ``d`` its discounted gain.
    :meth:`cumulated` gives each query's cumulated vector of some row values, taken once
    per chunk whoever asks; :meth:`squared` squares it in place (the bands' squares).
    The vectors are the columns of a ``(ranks, n)`` matrix, in the chunk's ``layout``
    (the local query of each column, ``None``: query order; ``column`` its inverse):
    the lists of a cell that are adjacent in it are summed without a gather
    (:func:`~sessionval.analysis.curve_bands.add_column_squares`).
    """

    q0: int
    n: int
    ranks: int
    q: IntArray
    r: IntArray
    g: FloatArray
    d: FloatArray
    dense: _Dense
    layout: IntArray | None = None
    column: IntArray | None = None
    _cum: dict[str, FloatArray] = field(default_factory=dict)
    _squared: set[str] = field(default_factory=set)
    _flat: IntArray | None = None
    _rows: dict[str, FloatArray] = field(default_factory=dict)

    def row_values(self, key: str, make: Callable[[], FloatArray]) -> FloatArray:
        """A per-row array made once per chunk whoever asks (``dq`` of last and best)."""
        if key not in self._rows:
            self._rows[key] = make()
        return self._rows[key]

    def index(self, query_base: IntArray) -> IntArray:
        """Each row's ``query_base[query] + rank``.

        That is its flat (cell, rank) index when ``query_base`` holds each query's
        ``cell * ranks - 1`` (indexed by the study's query).
        """
        idx = query_base[self.q]
        idx += self.r
        return idx

    def in_layout(self, per_query: IntArray) -> IntArray:
        """A per-query array of the chunk's queries, in the columns' order."""
        local = per_query[self.q0 : self.q0 + self.n]
        return local if self.layout is None else local[self.layout]

    def cumulated(self, key: str, values: FloatArray) -> FloatArray:
        """``(ranks, n)``: each query's cumulated vector of ``values`` (one per ``key``).

        The rows of a query have the ranks ``1 .. k``, one row each, so the vectors are
        the rows put in place and cumulated along ranks
        (:func:`~sessionval.kernels.cumulate.cumulate_down`): the values
        :func:`~sessionval.kernels.cumulate.cumulate_by_rank` gives (up to the sign of
        a zero, which only their squares read).
        """
        if key in self._squared:
            raise MeasureSpecError(f"internal: the cumulated {key!r} vectors are squared already")
        if key not in self._cum:
            stride = self.dense.stride
            if self._flat is None:
                local = self.q - self.q0
                flat = local if self.column is None else self.column[local]
                flat += self.r * stride
                flat -= stride
                self._flat = flat
            base = self.dense.base(key)
            mat = base[:, : self.n]
            mat.fill(0.0)
            base.reshape(-1)[self._flat] = values
            self._cum[key] = cumulate_down(mat)
        return self._cum[key]

    def squared(self, key: str, values: FloatArray) -> FloatArray:
        """:meth:`cumulated` squared, in place (the cumulated vectors are gone after)."""
        cum = self.cumulated(key, values) if key not in self._squared else self._cum[key]
        if key not in self._squared:
            np.multiply(cum, cum, out=cum)
            self._squared.add(key)
        return cum


def _chunks(ev: SessionEvaluation, ranks: int, layout: IntArray | None = None) -> Iterator[_Chunk]:
    """The rows of ``ev`` at rank ``<= ranks``, :data:`QUERY_BLOCK` whole queries at a time.

    The same rows in the same order as :func:`~sessionval.analysis.rank_curves.rank_gains`
    (``query`` non-decreasing), so sums added chunk after chunk in row order are bit for
    bit the one-call sums.  ``layout``: a code per query of the study; each chunk's
    vectors are laid out by it (stable: query order within a code).
    """
    n_q = ev.query_session.size
    disc = rank_discount(np.arange(1, ranks + 1), b=ev.config.b, kind=ev.config.discount)
    dense = _Dense(ranks)
    for q0 in range(0, n_q, QUERY_BLOCK):
        q, r, g = ev.ranked_gains(queries=(q0, q0 + QUERY_BLOCK))
        if r.size and int(r.max()) > ranks:
            cut = r <= ranks
            q, r, g = q[cut], r[cut], g[cut]
        n = min(n_q, q0 + QUERY_BLOCK) - q0
        order = column = None
        if layout is not None:
            order = np.argsort(layout[q0 : q0 + n], kind="stable")
            column = np.empty(n, dtype=np.int64)
            column[order] = np.arange(n)
        yield _Chunk(q0, n, ranks, q, r, g, g / disc[r - 1], dense, order, column)


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
        self.base = self.qgroup * ranks - 1  # a row's (cell, rank) cell is base[query] + rank
        self.qd = np.asarray(ev.queries["qd"], dtype=np.float64)
        self.compare: Literal["last", "best"] = compare
        self.squares = squares
        names = ("dcg_q", "sdcg_q") + (("sdcg_q2", "dcg_q2") if squares else ())
        self.sums = {k: np.zeros((n_cls, ranks)) for k in names}

    def add(self, c: _Chunk) -> None:
        dq = c.row_values("dq", lambda: c.d * self.qd[c.q])
        # one (cell, rank) index for both sums, added in row order (bit for bit the one-call
        # sums, chunk after chunk)
        idx = c.index(self.base)
        add_at_index(self.sums["dcg_q"], idx, c.d)
        add_at_index(self.sums["sdcg_q"], idx, dq)
        if self.squares:
            runs = cell_runs(self.qgroup[c.q0 : c.q0 + c.n])
            sq_dq, sq_d = c.squared("dq", dq), c.squared("d", c.d)
            scratch = c.dense.flat("take", c.n)
            add_column_squares(self.sums["sdcg_q2"], sq_dq, runs, c.column, scratch)
            add_column_squares(self.sums["dcg_q2"], sq_d, runs, c.column, scratch)

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
    for chunk in _chunks(ev, ranks, adder.qgroup):
        adder.add(chunk)
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
        self.base = (self.qsys * n_t + self.qtop) * ranks - 1  # as _QueryAdder.base
        # the ideal vectors a query per column, as the chunks' matrices
        self.icg_t = np.ascontiguousarray(self.icg.T)
        self.idcg_t = np.ascontiguousarray(self.idcg.T)
        self.squares = squares
        self.sums: dict[str, FloatArray] = {
            "cg": np.zeros((n_g * n_t, ranks)),
            "dcg": np.zeros((n_g * n_t, ranks)),
        }
        if squares:
            self.sums |= {m: np.zeros((n_g, ranks)) for m in CG_MEASURES}

    def add(self, c: _Chunk) -> None:
        idx = c.index(self.base)
        add_at_index(self.sums["cg"], idx, c.g)
        add_at_index(self.sums["dcg"], idx, c.d)
        if not self.squares:
            return
        q0, q1 = c.q0, c.q0 + c.n
        scratch = c.dense.flat("take", c.n)
        # the normalised vectors first: the cumulated ones are squared in place after
        defined = cell_runs(self.defined_cell[q0:q1])
        top = c.in_layout(self.qtop)
        ratio = c.dense.flat("ratio", c.n)
        for name, key, ideal in (("nCG", "g", self.icg_t), ("nDCG", "d", self.idcg_t)):
            np.take(ideal, top, axis=1, out=ratio, mode="clip")
            with np.errstate(divide="ignore", invalid="ignore"):
                np.divide(c.cumulated(key, c.g if key == "g" else c.d), ratio, out=ratio)
            np.multiply(ratio, ratio, out=ratio)
            add_column_squares(self.sums[name], ratio, defined, c.column, scratch)
        by_system = cell_runs(self.qsys[q0:q1])
        add_column_squares(self.sums["CG"], c.squared("g", c.g), by_system, c.column, scratch)
        add_column_squares(self.sums["DCG"], c.squared("d", c.d), by_system, c.column, scratch)

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
    for chunk in _chunks(ev, ranks, adder.qsys):
        adder.add(chunk)
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
    # the vectors laid out by system: the CG curves' sums need no gather, Figure 1's one
    chunks = _chunks(ev, ranks, cg.qsys)
    # the CG curves' rows carry their own gains when cg_ev is another evaluation
    pairs = (
        ((c, c) for c in chunks)
        if cg_source is ev
        else zip(chunks, _chunks(cg_source, ranks, cg.qsys), strict=True)
    )
    for chunk, cg_chunk in pairs:
        cg.add(cg_chunk)  # first: it reads the cumulated vectors before they are squared
        last.add(chunk)
        best.add(chunk)
    return last.result(), best.result(), cg.result()
