"""One chunk of whole sessions through the sDCG pipeline (the unit an engine runs).

:class:`_Context` holds the arrays prepared once per evaluation; :func:`_run_chunk`
turns the sessions ``s0:s1`` into per-query, per-session and (on request)
per-position arrays with the pure kernels of :mod:`sessionval.kernels.session`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .._types import FloatArray, IntArray
from ..errors import JudgmentError
from ..frame import SessionFrame
from ..judgments.gains import GainScheme
from ..judgments.ideal import IdealGains
from ..judgments.lookup import JudgmentIndex
from ..judgments.unjudged import apply_unjudged
from ..kernels.segments import segment_sum
from ..kernels.session import session_vectors
from .config import SessionConfig

__all__: list[str] = []


_CHUNK_ROWS: Final = 1 << 20
"""Result rows per chunk: bounds the kernels' temporary memory (about 40 arrays of it)."""


@dataclass(frozen=True)
class _Context:
    """Arrays prepared once per evaluation, sliced per chunk of sessions."""

    cfg: SessionConfig
    scheme: GainScheme
    frame: SessionFrame
    qs: IntArray
    qp: IntArray
    depth: IntArray
    query_ideal: IntArray
    ideal: IdealGains
    q_row_off: IntArray
    s_q_off: IntArray
    row_qidx: npt.NDArray[np.integer[Any]]
    row_rank: npt.NDArray[np.integer[Any]]
    doc_codes: npt.NDArray[np.integer[Any]]
    index: JudgmentIndex | None
    q_key: IntArray | None
    doc_map: IntArray | None
    user_grade: FloatArray | None
    high: float

    def grades(self, r0: int, r1: int) -> FloatArray:
        """Grades of result rows ``r0:r1`` (NaN = unjudged)."""
        if self.user_grade is not None:
            return self.user_grade[r0:r1].astype(np.float64)
        if self.index is None or self.q_key is None or self.doc_map is None:
            raise JudgmentError("reference judgments are required to look up grades")
        kc = self.q_key[self.row_qidx[r0:r1]]
        dc = self.doc_map[self.doc_codes[r0:r1]]
        return self.index.lookup_codes(kc, self.index.topics, dc, self.index.docs)

    def chunks(self, target: int | None = None) -> list[tuple[int, int]]:
        """Session ranges ``(s0, s1)`` of about ``target`` rows each (never splitting one)."""
        target = target or _CHUNK_ROWS
        n_s = self.s_q_off.size - 1
        s_row_off = self.q_row_off[self.s_q_off]
        total = int(s_row_off[-1])
        cuts = np.searchsorted(s_row_off, np.arange(target, max(total, 1), target), side="left")
        bounds = np.unique(np.concatenate(([0], cuts, [n_s])))
        return list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))


@dataclass
class _Chunk:
    """Outputs of one chunk: per query, per session and (on request) per position."""

    q: dict[str, npt.NDArray[Any]]
    s: dict[str, npt.NDArray[Any]]
    p: dict[str, npt.NDArray[Any]] | None
    n_unjudged: int
    n_negative: int


def _ratio(num: FloatArray, den: FloatArray, empty: str) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = num / den
    out[den == 0] = 0.0 if empty == "zero" else np.nan
    return out


def _run_chunk(ctx: _Context, s0: int, s1: int, *, positions: bool) -> _Chunk:
    """Run the pipeline on sessions ``s0:s1`` (contiguous queries and rows)."""
    cfg = ctx.cfg
    q0, q1 = int(ctx.s_q_off[s0]), int(ctx.s_q_off[s1])
    r0, r1 = int(ctx.q_row_off[q0]), int(ctx.q_row_off[q1])
    n_s = s1 - s0
    grades = ctx.grades(r0, r1)
    n_unj = int(np.count_nonzero(np.isnan(grades)))
    n_neg = int(np.count_nonzero(grades < 0))
    gain = ctx.scheme.gains(grades, negative=cfg.negative)
    local_off = ctx.q_row_off[q0 : q1 + 1] - r0
    rows: IntArray | None = None
    if cfg.unjudged == "zero":
        np.nan_to_num(gain, copy=False, nan=0.0)
    else:
        gain, _, rows = apply_unjudged(gain, local_off, policy=cfg.unjudged)
    if cfg.negative == "clip":
        grades = np.where(grades < 0, 0.0, grades)
    row_q = ctx.row_qidx[r0:r1].astype(np.int64) - q0
    row_rank: npt.ArrayLike | None = ctx.row_rank[r0:r1]
    row_doc: IntArray | None = (
        ctx.doc_codes[r0:r1].astype(np.int64) if cfg.duplicates != "every" else None
    )
    if rows is not None:
        row_q = row_q[rows]
        grades = grades[rows]
        row_rank = None  # condensed lists: ranks move up
        row_doc = row_doc[rows] if row_doc is not None else None
    v = session_vectors(
        row_query=row_q,
        row_gain=gain,
        row_doc=row_doc,
        query_session=ctx.qs[q0:q1] - s0,
        query_pos=ctx.qp[q0:q1],
        query_depth=ctx.depth[q0:q1],
        query_ideal=ctx.query_ideal[q0:q1],
        ideal_offsets=ctx.ideal.offsets,
        ideal_values=ctx.ideal.values,
        n_sessions=n_s,
        b=cfg.b,
        bq=cfg.bq,
        discount=cfg.discount,
        qdiscount=cfg.query_discount,
        duplicates=cfg.duplicates,
        short_lists=cfg.short_lists,
        ideal=cfg.ideal,
        row_rank=row_rank,
    )
    n_pos = np.diff(v.session_offsets)
    pos_s = np.repeat(np.arange(n_s, dtype=np.int64), n_pos)
    ratio = _ratio(v.sdcg, v.ideal, cfg.empty_ideal)
    shown = np.flatnonzero(v.pos_row >= 0)
    krow = v.pos_row[shown]
    frame_row = (rows[krow] if rows is not None else krow) + r0
    g_shown = grades[krow]
    s_out: dict[str, npt.NDArray[Any]] = {
        "n_positions": n_pos,
        "final": v.final,
        "ideal_final": v.ideal_final,
        "sum_sdcg": segment_sum(v.sdcg, pos_s, n_s),
        "sum_nsdcg": segment_sum(ratio, pos_s, n_s),
    }
    doc_all = ctx.doc_codes[frame_row].astype(np.int64)
    ndoc = int(doc_all.max(initial=0)) + 1
    for tag, hit in (("rel", g_shown > 0), ("hrel", g_shown >= ctx.high)):
        idx = np.flatnonzero(hit)
        hs = pos_s[shown[idx]]
        fq = np.zeros(n_s, dtype=np.int16)
        fr = np.zeros(n_s, dtype=np.int32)
        found = np.zeros(n_s, dtype=bool)
        if idx.size:
            first = idx[np.r_[True, hs[1:] != hs[:-1]]]
            fs = pos_s[shown[first]]
            found[fs] = True
            fq[fs] = ctx.qp[q0 + v.pos_query[shown[first]]]
            fr[fs] = ctx.row_rank[frame_row[first]]
        s_out[f"first_{tag}_query"] = fq
        s_out[f"first_{tag}_rank"] = fr
        s_out[f"found_{tag}"] = found
        uniq = np.unique(hs * ndoc + doc_all[idx])
        s_out[f"n_{tag}"] = np.bincount(uniq // ndoc, minlength=n_s).astype(np.int32)
    q_out: dict[str, npt.NDArray[Any]] = {
        "n_available": v.n_available,
        "n_repeats": v.n_repeats,
        "n_scored": np.diff(v.slot_offsets),
        "qd": v.qd,
        "dcg": v.dcg,
        "ideal_dcg": v.ideal_dcg,
    }
    p_out = None
    if positions:
        full_row = np.full(v.pos_row.size, -1, dtype=np.int64)
        full_row[shown] = frame_row
        grade_pos = np.full(v.pos_row.size, np.nan)
        grade_pos[shown] = g_shown
        p_out = {
            "session": pos_s + s0,
            "query": v.pos_query + q0,
            "slot": v.pos_slot,
            "frame_row": full_row,
            "grade": grade_pos,
            "gain": v.gain,
            "sdcg": v.sdcg,
            "ideal": v.ideal,
        }
    return _Chunk(q_out, s_out, p_out, n_unj, n_neg)


def _concat(parts: list[dict[str, npt.NDArray[Any]]]) -> dict[str, npt.NDArray[Any]]:
    if not parts:
        return {}
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
