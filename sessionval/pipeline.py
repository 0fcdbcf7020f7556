"""Session evaluation pipeline: a typed configuration and :func:`evaluate`.

``evaluate(frame, judgments, config)`` runs the sDCG pipeline of Järvelin et al.
(2008) on a whole study at once: grades → gains → unjudged policy → session
vectors (duplicates, short lists, scan depth, ideal) → tidy tables.  The
:class:`SessionConfig` (a frozen Pydantic model) holds every parameter; it is
attached to every table (``df.attrs["config"]``) and serialises to JSON so each
number can be traced to its parameters.  Named presets reproduce published
variants (``SessionConfig.preset("jiang-allan-2016")``; table in
``docs/sessions.md``).

Output tables (column names are stable; documented in ``docs/sessions.md``)
---------------------------------------------------------------------------
``SessionEvaluation.per_position()``
    one row per session position: ``session_id, query_pos, rank, position,
    doc_id, doc_rank, grade, gain, sdcg, ideal, nsdcg``.
``SessionEvaluation.per_query()``
    one row per query: ``session_id, user_id, topic_id, system_id, query_pos,
    query_id, qrels_id, n_results, n_available, n_scored, padded, n_repeats, qd,
    dcg, sdcg, ideal_dcg, ndcg, is_last, is_best`` and one column per requested
    single-query measure.
``SessionEvaluation.per_session()``
    one row per session: ``session_id, user_id, topic_id, system_id, n_queries,
    n_positions, sdcg, ideal, nsdcg, avg_pos_sdcg, avg_pos_nsdcg, sdcg_per_query,
    last_sdcg, last_dcg, best_query_pos, best_sdcg, best_dcg, first_rel_query,
    first_rel_rank, first_hrel_query, first_hrel_rank, n_relevant_found,
    n_highly_relevant_found`` and the ``rating_*`` columns of the study.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, cast

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import ConfigDict, Field, field_validator

from .errors import InputFormatError, JudgmentError, MeasureSpecError
from .frame import JudgmentFrame, SessionFrame
from .judgments.gains import (
    GainScheme,
    IdealGains,
    NegativePolicy,
    UnjudgedPolicy,
    apply_unjudged,
    gain_scheme,
    ideal_gains,
    result_grades,
)
from .metrics.session import (
    DuplicatePolicy,
    IdealRule,
    QueryDiscount,
    RankDiscount,
    SessionVectors,
    parse_short_lists,
    rank_discount,
    session_vectors,
    weighted_sum,
)
from .models._base import Model
from .models.judgments import GradeScale

__all__ = ["PRESETS", "SessionConfig", "SessionEvaluation", "evaluate"]


# ---------------------------------------------------------------------------------------------
# configuration

PRESETS: Final[dict[str, dict[str, Any]]] = {
    "jarvelin-2008": {
        "description": "sDCG as in Järvelin et al. (2008): b=2, bq=4, X=10, gains 0-1-10-100, "
        "rank discount 1+log_b(i), query discount 1+log_bq(q), every duplicate counted, "
        "short lists padded, ideal = topic's ideal top-X repeated per query (the defaults)",
        "citation": "jarvelin2008",
        "params": {},
    },
    "jiang-allan-2016": {
        "description": "sDCG/nsDCG of the CHIIR 2016 session-metrics code: query discount "
        "1/log_bq(q+bq-1), rank discount 1/log_b(r+b-1), gain 2^g-1 (negative grades kept), "
        "top-k of each query (padding adds no gain, and the ideal copy of every query keeps k "
        "positions as in that code), every duplicate counted, ideal = the session's judged pool "
        "sorted, repeated per query (load judgments keyed per session)",
        "citation": "jiang2016",
        "params": {
            "gains": "exp",
            "negative": "keep",
            "discount": "shifted-log",
            "query_discount": "shifted-log",
        },
    },
    "trec-dd-no-repeat": {
        "description": "ideal session without repeated documents (greedy: the largest gains "
        "on the most valuable discounted positions, each relevant document once) as in the "
        "TREC Dynamic Domain jig, with repeats earning nothing; other parameters as "
        "jarvelin-2008",
        "citation": "yang2015dd",
        "params": {"ideal": "no-repeat", "duplicates": "first"},
    },
    "kanoulas-2011-no-qdiscount": {
        "description": "sDCG without query discount (bq -> infinity): the sum of the queries' "
        "DCG@X, as the no-discount baseline of Kanoulas et al. (2011)",
        "citation": "kanoulas2011",
        "params": {"query_discount": "none"},
    },
}
"""Named parameter sets reproducing published variants (``docs/sessions.md`` variant table)."""


class SessionConfig(Model):
    """Every parameter of the session measures (spec section 4); defaults = the paper.

    Defaults are the illustration of Järvelin et al. (2008): ``b = 2``, ``bq = 4``,
    ``X = 10`` (``cutoff``), gains 0-1-10-100, rank discount ``jk2008``, duplicates
    counted every time, short lists padded, reference judgments, the topic's ideal
    repeated per query, per-session normalisation, sessions held after stopping.

    Examples
    --------
    >>> cfg = SessionConfig()
    >>> cfg.b, cfg.bq, cfg.cutoff, cfg.gains, cfg.duplicates, cfg.short_lists
    (2.0, 4.0, 10, '0-1-10-100', 'every', 'pad')
    >>> SessionConfig.model_validate_json(cfg.model_dump_json()) == cfg
    True
    >>> SessionConfig.preset("jiang-allan-2016").query_discount
    'shifted-log'
    """

    b: float = Field(2.0, gt=1, description="log base of the rank discount")
    bq: float = Field(4.0, gt=1, description="log base of the query discount (inf: none)")
    cutoff: int = Field(10, ge=1, description="X: top ranks of each query concatenated")
    scan_depth: Literal["ignore", "replace", "cap"] = Field(
        "ignore",
        description="per-query scan depth from the log: ignore it (X for every query), "
        "replace X by it where known, or cap X by it (min)",
    )
    gains: str | dict[int, float] = Field("0-1-10-100", description="gain scheme")
    negative: NegativePolicy = "clip"
    unjudged: UnjudgedPolicy = "zero"
    judgments: Literal["reference", "searcher"] = Field(
        "reference", description="whose grades drive the gains"
    )
    discount: RankDiscount = "jk2008"
    query_discount: QueryDiscount = "jk2008"
    duplicates: DuplicatePolicy = "every"
    short_lists: str = Field("pad", description="pad, none or min:m")
    ideal: IdealRule = "repeat"
    normalise: Literal["per-session", "of-averages"] = "per-session"
    stopped: Literal["hold", "active"] = "hold"
    empty_ideal: Literal["nan", "zero"] = Field(
        "nan", description="value of nsDCG / nDCG where the ideal is 0"
    )
    best_by: Literal["dcg", "sdcg"] = Field(
        "dcg", description="the best query of a session: highest DCG_q or highest sDCG_q"
    )
    high_grade: int | None = Field(
        None, description="lowest 'highly relevant' grade (None: the top grade of the scale)"
    )
    preset_name: str | None = Field(None, description="preset the configuration started from")

    model_config = ConfigDict(**Model.model_config, ser_json_inf_nan="constants")

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = PRESETS

    @field_validator("short_lists")
    @classmethod
    def _short(cls, v: str) -> str:
        parse_short_lists(v)
        return v

    @field_validator("gains")
    @classmethod
    def _gains(cls, v: str | dict[int, float]) -> str | dict[int, float]:
        gain_scheme(v)
        return v

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> SessionConfig:
        """Return the configuration of a named published variant, with optional overrides.

        Raises
        ------
        MeasureSpecError
            Unknown preset name (the message lists the known ones).
        """
        if name not in PRESETS:
            raise MeasureSpecError(
                f"unknown session preset {name!r}; known: {', '.join(PRESETS)}"
            )
        params = {**PRESETS[name]["params"], "preset_name": name, **overrides}
        return cls(**params)

    def scheme(self) -> GainScheme:
        """Return the gain scheme object."""
        return gain_scheme(self.gains)


# ---------------------------------------------------------------------------------------------
# result object


@dataclass(frozen=True)
class SessionEvaluation:
    """Result of :func:`evaluate`: session vectors plus the tables built from them.

    Attributes
    ----------
    config
        The configuration used (also in every table's ``attrs["config"]``).
    frame
        The evaluated study.
    vectors
        The raw session vectors (:class:`~sessionval.metrics.session.SessionVectors`);
        its row arrays index the kernel rows, ``rows`` maps them to ``frame.results``.
    rows
        Row number in ``frame.results`` of each kernel row (after ``condense``).
    grade, gain
        Grade (NaN = unjudged) and gain (unjudged policy applied) per kernel row.
    n_unjudged, n_negative
        Result rows without a judgment / with a negative grade.
    n_empty_ideal
        Sessions whose ideal is 0 at the end (empty recall base): nsDCG undefined.
    high_grade
        The lowest grade counted as highly relevant.
    measures
        Requested single-query measures (names as given).
    """

    config: SessionConfig
    frame: SessionFrame
    vectors: SessionVectors
    rows: npt.NDArray[np.int64]
    grade: npt.NDArray[np.float64]
    gain: npt.NDArray[np.float64]
    query_session: npt.NDArray[np.int64]
    query_pos: npt.NDArray[np.int64]
    n_unjudged: int
    n_negative: int
    n_empty_ideal: int
    high_grade: float
    ideal_source: IdealGains
    query_ideal: npt.NDArray[np.int64]
    measures: tuple[str, ...] = ()
    _cache: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False, compare=False)

    # ---- helpers
    def _attach(self, df: pd.DataFrame) -> pd.DataFrame:
        df.attrs["config"] = self.config.model_dump(mode="json")
        return df

    def _ratio(self, num: npt.NDArray[np.float64], den: npt.NDArray[np.float64]) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = num / den
        out[den == 0] = 0.0 if self.config.empty_ideal == "zero" else np.nan
        return out

    def position_session(self) -> npt.NDArray[np.int64]:
        """Session index of every session position."""
        return self.query_session[self.vectors.pos_query]

    def nsdcg(self) -> npt.NDArray[np.float64]:
        """``S[p] / I[p]`` for every position (NaN or 0 where the ideal is 0)."""
        return self._ratio(self.vectors.sdcg, self.vectors.ideal)  # type: ignore[no-any-return]

    # ---- tables
    def per_position(self) -> pd.DataFrame:
        """One row per session position (columns in the module docstring).

        ``rank`` is the rank inside the query's slot (what the discount uses);
        ``doc_rank`` the document's rank in the logged list (<NA> on padded
        positions; differs from ``rank`` under ``drop``/``condense``); ``position``
        runs 1..P within the session.
        """
        if "position" in self._cache:
            return self._cache["position"]
        v = self.vectors
        res = self.frame.results
        ps = self.position_session()
        within = np.arange(v.pos_query.size, dtype=np.int64) - v.session_offsets[ps]
        shown = v.pos_row >= 0
        kernel_row = v.pos_row[shown]
        frame_row = self.rows[kernel_row]
        doc_codes = np.full(shown.size, -1, dtype=np.int64)
        doc_codes[shown] = res["doc_id"].cat.codes.to_numpy()[frame_row]
        ranks = np.zeros(shown.size, dtype=np.int32)
        ranks[shown] = res["rank"].to_numpy()[frame_row]
        doc_rank = pd.array(ranks, dtype="Int32")
        doc_rank[~shown] = pd.NA
        grade = np.full(shown.size, np.nan)
        grade[shown] = self.grade[kernel_row]
        df = pd.DataFrame(
            {
                "session_id": pd.Categorical.from_codes(
                    ps, dtype=cast(pd.CategoricalDtype, self.frame.sessions["session_id"].dtype)
                ),
                "query_pos": self.query_pos[v.pos_query].astype(np.int16),
                "rank": v.pos_slot.astype(np.int32),
                "position": (within + 1).astype(np.int32),
                "doc_id": pd.Categorical.from_codes(
                    doc_codes, dtype=cast(pd.CategoricalDtype, res["doc_id"].dtype)
                ),
                "doc_rank": doc_rank,
                "grade": grade,
                "gain": v.gain,
                "sdcg": v.sdcg,
                "ideal": v.ideal,
                "nsdcg": self.nsdcg(),
            }
        )
        self._cache["position"] = self._attach(df)
        return df

    def last_and_best(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Return the query index of the last and of the best query of each session (−1: none)."""
        v = self.vectors
        n_s = self.frame.n_sessions
        qs = self.query_session
        nq = qs.size
        last = np.full(n_s, -1, dtype=np.int64)
        best = np.full(n_s, -1, dtype=np.int64)
        if nq == 0:
            return last, best
        ends = np.flatnonzero(np.r_[qs[1:] != qs[:-1], True])
        starts = np.r_[0, ends[:-1] + 1]
        last[qs[ends]] = ends
        val = v.dcg if self.config.best_by == "dcg" else v.dcg * v.qd
        top = np.maximum.reduceat(val, starts)
        is_top = val == np.repeat(top, ends - starts + 1)
        idx = np.flatnonzero(is_top)
        first = idx[np.r_[True, qs[idx][1:] != qs[idx][:-1]]]
        best[qs[first]] = first
        return last, best

    def per_query(self) -> pd.DataFrame:
        """One row per query (columns in the module docstring).

        ``dcg`` is ``DCG_q[L_q]`` of the query's slot (duplicate policy applied, no
        query discount); ``sdcg = qd · dcg``; ``ndcg = dcg / ideal_dcg``;
        ``n_scored`` is ``L_q`` (positions the query occupies), ``padded`` is true when
        some of them are padding; ``is_best`` marks the query with the highest
        ``dcg`` (or ``sdcg``, per ``best_by``), the earliest on ties.
        """
        if "query" in self._cache:
            return self._cache["query"]
        v = self.vectors
        q = self.frame.queries
        s = self.frame.sessions
        qs = self.query_session
        nq = qs.size
        last, best = self.last_and_best()
        is_last = np.zeros(nq, dtype=bool)
        is_last[last[last >= 0]] = True
        is_best = np.zeros(nq, dtype=bool)
        is_best[best[best >= 0]] = True
        n_scored = np.diff(v.slot_offsets)
        df = pd.DataFrame(
            {
                "session_id": q["session_id"].to_numpy(),
                "user_id": s["user_id"].to_numpy()[qs],
                "topic_id": s["topic_id"].to_numpy()[qs],
                "system_id": s["system_id"].to_numpy()[qs],
                "query_pos": q["query_pos"].to_numpy(),
                "query_id": q["query_id"].to_numpy(),
                "qrels_id": q["qrels_id"].to_numpy(),
                "n_results": q["n_results"].to_numpy(),
                "n_available": v.n_available.astype(np.int32),
                "n_scored": n_scored.astype(np.int32),
                "padded": n_scored > v.n_available,
                "n_repeats": v.n_repeats.astype(np.int32),
                "qd": v.qd,
                "dcg": v.dcg,
                "sdcg": v.qd * v.dcg,
                "ideal_dcg": v.ideal_dcg,
                "ndcg": self._ratio(v.dcg, v.ideal_dcg),
                "is_last": is_last,
                "is_best": is_best,
            }
        )
        for col in ("session_id", "user_id", "topic_id", "system_id", "qrels_id"):
            df[col] = df[col].astype(q[col].dtype if col in q else s[col].dtype)
        for name in self.measures:
            df[name] = _single_query_measure(self, name)
        self._cache["query"] = self._attach(df)
        return df

    def per_session(self) -> pd.DataFrame:
        """One row per session with every summary score of spec section 4.

        ``sdcg`` = ``S[P]``, ``ideal`` = ``I[P]``, ``nsdcg`` = their ratio;
        ``avg_pos_*`` = mean over the session's ``P`` positions (avg-pos of
        Järvelin & Kekäläinen 2002); ``sdcg_per_query`` = ``sdcg / n_queries`` (Jiang
        & Allan 2016's sDCG/q); ``last_*`` / ``best_*`` = the last / best query's
        ``sdcg`` and ``dcg``; ``first_rel_*`` / ``first_hrel_*`` = query position and
        logged rank of the first scored document with grade > 0 / grade >=
        ``high_grade`` (<NA> when none); ``n_relevant_found`` /
        ``n_highly_relevant_found`` = distinct such documents shown in the session
        vector.  Then the study's ``rating_*`` columns.
        """
        if "session" in self._cache:
            return self._cache["session"]
        v = self.vectors
        fr = self.frame
        s = fr.sessions
        n_s = fr.n_sessions
        n_pos = np.diff(v.session_offsets)
        n_queries = np.bincount(self.query_session, minlength=n_s)
        ps = self.position_session()
        with np.errstate(divide="ignore", invalid="ignore"):
            avg_pos = weighted_sum(ps, v.sdcg, n_s) / n_pos
            avg_pos_n = weighted_sum(ps, self.nsdcg(), n_s) / n_pos
            per_q = v.final / n_queries
        last, best = self.last_and_best()
        qsdcg = v.qd * v.dcg

        def pick(arr: npt.NDArray[Any], idx: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
            return np.where(idx >= 0, arr[np.maximum(idx, 0)], np.nan)

        first_rel_q, first_rel_r, n_rel = self._first_found(ps, 0.0, strict=True)
        first_h_q, first_h_r, n_h = self._first_found(ps, self.high_grade, strict=False)
        df = pd.DataFrame(
            {
                "session_id": s["session_id"],
                "user_id": s["user_id"],
                "topic_id": s["topic_id"],
                "system_id": s["system_id"],
                "n_queries": n_queries.astype(np.int16),
                "n_positions": n_pos.astype(np.int32),
                "sdcg": v.final,
                "ideal": v.ideal_final,
                "nsdcg": self._ratio(v.final, v.ideal_final),
                "avg_pos_sdcg": avg_pos,
                "avg_pos_nsdcg": avg_pos_n,
                "sdcg_per_query": per_q,
                "last_sdcg": pick(qsdcg, last),
                "last_dcg": pick(v.dcg, last),
                "best_query_pos": pd.array(
                    np.where(best >= 0, self.query_pos[np.maximum(best, 0)], 0), dtype="Int16"
                ),
                "best_sdcg": pick(qsdcg, best),
                "best_dcg": pick(v.dcg, best),
                "first_rel_query": first_rel_q,
                "first_rel_rank": first_rel_r,
                "first_hrel_query": first_h_q,
                "first_hrel_rank": first_h_r,
                "n_relevant_found": n_rel,
                "n_highly_relevant_found": n_h,
            }
        )
        df.loc[best < 0, "best_query_pos"] = pd.NA
        for c in s.columns:
            if str(c).startswith("rating_"):
                df[c] = s[c].to_numpy()
        self._cache["session"] = self._attach(df)
        return df

    def _first_found(
        self, ps: npt.NDArray[np.int64], grade: float, *, strict: bool
    ) -> tuple[pd.arrays.IntegerArray, pd.arrays.IntegerArray, npt.NDArray[np.int32]]:
        """First (query, logged rank) and distinct count of shown documents above a grade."""
        v = self.vectors
        n_s = self.frame.n_sessions
        shown = np.flatnonzero(v.pos_row >= 0)
        g = self.grade[v.pos_row[shown]]
        hit = shown[g > grade] if strict else shown[g >= grade]
        q_out = pd.array(np.zeros(n_s, dtype=np.int16), dtype="Int16")
        r_out = pd.array(np.zeros(n_s, dtype=np.int32), dtype="Int32")
        found = np.zeros(n_s, dtype=bool)
        hs = ps[hit]
        if hit.size:
            first = hit[np.r_[True, hs[1:] != hs[:-1]]]
            sess = ps[first]
            found[sess] = True
            q_vals = np.zeros(n_s, dtype=np.int16)
            r_vals = np.zeros(n_s, dtype=np.int32)
            q_vals[sess] = self.query_pos[v.pos_query[first]]
            frame_rows = self.rows[v.pos_row[first]]
            r_vals[sess] = self.frame.results["rank"].to_numpy()[frame_rows]
            q_out = pd.array(q_vals, dtype="Int16")
            r_out = pd.array(r_vals, dtype="Int32")
        q_out[~found] = pd.NA
        r_out[~found] = pd.NA
        docs = self.frame.results["doc_id"].cat.codes.to_numpy().astype(np.int64)
        d = docs[self.rows[v.pos_row[hit]]]
        ndoc = int(docs.max()) + 1 if docs.size else 1
        uniq = np.unique(hs * ndoc + d)
        n_found = np.bincount(uniq // ndoc, minlength=n_s).astype(np.int32)
        return q_out, r_out, n_found

    def summary(self) -> dict[str, Any]:
        """Return the counts a report needs (sessions, queries, unjudged, empty ideals)."""
        return {
            "n_sessions": self.frame.n_sessions,
            "n_queries": int(self.query_session.size),
            "n_positions": int(self.vectors.pos_query.size),
            "n_unjudged": self.n_unjudged,
            "n_negative": self.n_negative,
            "n_empty_ideal": self.n_empty_ideal,
            "config": self.config.model_dump(mode="json"),
        }


# ---------------------------------------------------------------------------------------------
# single-query measures (fallback until the measure registry is wired)

_DCG_SPEC = re.compile(r"^(n?DCG)(?:@(\d+))?$")


def _single_query_measure(ev: SessionEvaluation, name: str) -> npt.NDArray[np.float64]:
    """DCG@k / nDCG@k of each query's own logged list (no session policy).

    Uses the configuration's gains, ``b`` and rank discount; ``k`` defaults to
    ``cutoff``.  Other measures need the single-query registry.
    """
    m = _DCG_SPEC.match(name.strip())
    if not m:
        raise MeasureSpecError(
            f"per-query measure {name!r} not supported here; use 'DCG@k' or 'nDCG@k'"
        )
    k = int(m.group(2)) if m.group(2) else ev.config.cutoff
    res_rank = ev.frame.results["rank"].to_numpy()[ev.rows].astype(np.int64)
    qidx = ev.frame.results["query_idx"].to_numpy()[ev.rows].astype(np.int64)
    # condensed lists: rank = position in the kept list
    if ev.config.unjudged == "condense":
        counts = np.bincount(qidx, minlength=ev.query_session.size)
        off = np.r_[0, np.cumsum(counts)]
        res_rank = np.arange(qidx.size) - off[qidx] + 1
    cut = res_rank <= k
    d = rank_discount(res_rank[cut], b=ev.config.b, kind=ev.config.discount)
    nq = ev.query_session.size
    dcg = weighted_sum(qidx[cut], ev.gain[cut] / d, nq)
    if m.group(1) == "DCG":
        return dcg
    ideal = ev.ideal_source
    off, vals = ideal.segments(ev.query_ideal, depth=k)
    seg = np.repeat(np.arange(nq), np.diff(off))
    within = np.arange(vals.size) - off[seg] + 1
    idcg = weighted_sum(
        seg, vals / rank_discount(within, b=ev.config.b, kind=ev.config.discount), nq
    )
    return ev._ratio(dcg, idcg)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# evaluate


def _searcher_ideal(
    frame: SessionFrame, scheme: GainScheme, negative: NegativePolicy
) -> IdealGains:
    """Recall base from the searchers' own grades: max grade per (qrels_id, document)."""
    res = frame.results
    ug = res["user_grade"].to_numpy(dtype=np.float64, na_value=np.nan)
    ok = ~np.isnan(ug)
    qcat = frame.queries["qrels_id"]
    key = qcat.to_numpy()[res["query_idx"].to_numpy()[ok]]
    t = pd.DataFrame({"topic_id": key, "doc_id": res["doc_id"].to_numpy()[ok], "grade": ug[ok]})
    t = t.groupby(["topic_id", "doc_id"], observed=True, sort=False)["grade"].max().reset_index()
    table = pd.DataFrame(
        {
            "topic_id": pd.Categorical(t["topic_id"].astype(str),
                                       categories=qcat.cat.categories.astype(str)),
            "doc_id": t["doc_id"].astype(str).astype("category"),
            "grade": t["grade"].astype(np.int16),
            "assessor": pd.Categorical(["searcher"] * len(t)),
        }
    )
    scale = frame.grade_scale or GradeScale.from_grades(sorted({int(x) for x in t["grade"]}) or [0])
    return ideal_gains(JudgmentFrame(table, scale, source="searchers' grades"), scheme,
                       negative=negative)


def _check_order(query_session: npt.NDArray[np.int64], query_pos: npt.NDArray[np.int64],
                 source: str) -> None:
    if query_session.size < 2:
        return
    ds = np.diff(query_session)
    bad = (ds < 0) | ((ds == 0) & (np.diff(query_pos) != 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0]) + 1
        raise InputFormatError(
            f"{source}: queries table row {i}: queries must be grouped by session in session "
            f"order with positions 1..n (got session index {int(query_session[i])}, "
            f"query_pos {int(query_pos[i])} after {int(query_pos[i - 1])})"
        )


def evaluate(
    frame: SessionFrame,
    judgments: JudgmentFrame | None,
    config: SessionConfig | None = None,
    *,
    measures: Sequence[str] = (),
) -> SessionEvaluation:
    """Score every session of a study with sDCG and its summaries.

    Parameters
    ----------
    frame
        The study (results sorted by query, queries grouped by session).
    judgments
        Reference judgments keyed by ``queries.qrels_id``; may be ``None`` with
        ``config.judgments = "searcher"`` (the ideal then pools the searchers' grades).
    config
        Parameters (default: the paper's, :class:`SessionConfig`).
    measures
        Single-query measures to add to :meth:`SessionEvaluation.per_query`
        (``"DCG@10"``, ``"nDCG@10"``).

    Returns
    -------
    SessionEvaluation

    Raises
    ------
    JudgmentError
        No judgments for the reference source; unjudged documents under ``error``.
    MeasureSpecError
        An invalid option or measure.
    InputFormatError
        The frame's queries are not grouped by session.

    Notes
    -----
    Järvelin et al. (2008), sections 2.2 and 3.3: ``sDCG_q = DCG_q / (1 + log_bq q)``,
    top-X of each query concatenated, the ideal session = the topic's ideal top-X
    repeated and discounted the same way, ``nsDCG = S / I`` component-wise.

    Examples
    --------
    A one-query session equals the query's DCG (rank discount ``1 + log_2 i``):

    >>> from sessionval.io.tables import frame_from_flat
    >>> flat = pd.DataFrame({"session_id": "s", "user_id": "u", "topic_id": "T",
    ...     "system_id": "S", "query_pos": 1, "rank": [1, 2, 3], "doc_id": ["a", "b", "c"]})
    >>> frame, _ = frame_from_flat(flat)
    >>> qrels = pd.DataFrame({"topic_id": "T", "doc_id": ["a", "c"], "grade": [1, 3],
    ...     "assessor": ""}).astype({"topic_id": "category", "doc_id": "category",
    ...     "grade": "int16", "assessor": "category"})
    >>> ev = evaluate(frame, JudgmentFrame(qrels, GradeScale.default()))
    >>> round(float(ev.per_session()["sdcg"][0]), 4)  # 1/1 + 100/(1 + log2 3)
    39.6853
    """
    cfg = config or SessionConfig()
    scheme = cfg.scheme()
    q = frame.queries
    qs = q["session_id"].cat.codes.to_numpy().astype(np.int64)
    qp = q["query_pos"].to_numpy().astype(np.int64)
    _check_order(qs, qp, frame.source)
    offsets = frame.query_offsets()
    if int(offsets[-1]) != frame.n_results:
        raise InputFormatError(
            f"{frame.source}: queries.n_results sums to {int(offsets[-1])} but results has "
            f"{frame.n_results} rows"
        )
    grades = result_grades(frame, judgments, source=cfg.judgments)
    raw_gain = scheme.gains(grades, negative=cfg.negative)
    n_unj = int(np.count_nonzero(np.isnan(grades)))
    n_neg = int(np.count_nonzero(grades < 0))
    gain, _, rows = apply_unjudged(raw_gain, offsets, policy=cfg.unjudged)
    if cfg.unjudged == "condense":
        grade_rows = grades[rows]
    else:
        grade_rows = grades
    if cfg.negative == "clip":
        grade_rows = np.where(grade_rows < 0, 0.0, grade_rows)

    if cfg.judgments == "reference":
        if judgments is None:  # pragma: no cover - result_grades raised already
            raise JudgmentError("reference judgments required")
        ideal = ideal_gains(judgments, scheme, negative=cfg.negative)
        scale: GradeScale | None = judgments.scale
    else:
        ideal = _searcher_ideal(frame, scheme, cfg.negative)
        scale = frame.grade_scale
    query_ideal = ideal.positions(q["qrels_id"])
    if cfg.high_grade is not None:
        high = float(cfg.high_grade)
    elif scale is not None:
        high = float(max(scale.grades))
    else:
        finite = grades[~np.isnan(grades)]
        high = float(finite.max()) if finite.size else math.inf

    x = cfg.cutoff
    depth = np.full(len(q), x, dtype=np.int64)
    if cfg.scan_depth != "ignore":
        sd = q["scan_depth"].to_numpy(dtype=np.float64, na_value=np.nan)
        known = ~np.isnan(sd)
        if cfg.scan_depth == "replace":
            depth[known] = sd[known].astype(np.int64)
        else:
            depth[known] = np.minimum(sd[known].astype(np.int64), x)

    row_query = frame.results["query_idx"].to_numpy().astype(np.int64)[rows]
    need_docs = cfg.duplicates != "every"
    row_doc = (
        frame.results["doc_id"].cat.codes.to_numpy().astype(np.int64)[rows] if need_docs else None
    )
    vec = session_vectors(
        row_query=row_query, row_gain=gain, row_doc=row_doc, query_session=qs, query_pos=qp,
        query_depth=depth, query_ideal=query_ideal, ideal_offsets=ideal.offsets,
        ideal_values=ideal.values, n_sessions=frame.n_sessions, b=cfg.b, bq=cfg.bq,
        discount=cfg.discount, qdiscount=cfg.query_discount, duplicates=cfg.duplicates,
        short_lists=cfg.short_lists, ideal=cfg.ideal,
    )
    for name in measures:
        if not _DCG_SPEC.match(name.strip()):
            raise MeasureSpecError(
                f"per-query measure {name!r} not supported here; use 'DCG@k' or 'nDCG@k'"
            )
    return SessionEvaluation(
        config=cfg, frame=frame, vectors=vec, rows=rows, grade=grade_rows, gain=gain,
        query_session=qs, query_pos=qp, n_unjudged=n_unj, n_negative=n_neg,
        n_empty_ideal=int(np.count_nonzero(vec.ideal_final == 0)), high_grade=high,
        ideal_source=ideal, query_ideal=query_ideal, measures=tuple(measures),
    )


def config_from_mapping(values: Mapping[str, Any]) -> SessionConfig:
    """Build a :class:`SessionConfig` from a mapping, honouring a ``preset`` key first."""
    vals = dict(values)
    name = vals.pop("preset", None)
    if name:
        return SessionConfig.preset(str(name), **vals)
    return SessionConfig(**vals)
