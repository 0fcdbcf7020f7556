"""Compare the systems of a per-session table with the analysis its design asks for.

:func:`compare_per_session` detects the design (:func:`~sessionval.analysis.design.detect_design`)
and compares every pair of systems on each score:

``by_topic`` (runs; searcher absent or the system)
    each system's sessions averaged per topic, the systems paired by topic: exactly
    :func:`~sessionval.analysis.compare.compare_systems` on the long table, as
    ``sessionval compare`` does for runs.
``within``, block ``searcher``
    each searcher's sessions averaged per system, paired by searcher.
``within``, block ``searcher+topic``
    (topics nested in searcher × system, e.g. a Latin square) per pair, the ordinary
    least-squares model ``score ~ system + searcher + topic`` (+ ``session_order`` as a
    period effect in a Latin square) on the two systems' sessions: the system contrast,
    its t test on the residual degrees of freedom, and ``effect_size`` = contrast / root
    residual mean square.  A paired t test on searcher means would ignore the topics.
``between``
    each searcher's sessions averaged, Welch's unequal-variance t test of the searcher
    means of the two systems (no pairing unit exists).
``log``
    one system: no row, a note says so.

Every row gains ``design``, ``block`` and ``note`` (why a pair could not be compared);
``n`` is the number of blocks used (topics, searchers; searchers of both systems for
``between``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import StatisticsError
from .absorb import demean_within, indicator_columns, pinv_and_rank
from .compare import COMPARISON_COLUMNS, compare_systems
from .design import Design, detect_design
from .model_rows import CellRows, ModelRows, SessionRows
from .multiple import ROUNDING, adjust_p, pair_indices

if TYPE_CHECKING:
    from .cell_sums import CellSums

__all__ = [
    "DESIGN_COLUMNS",
    "compare_cells",
    "compare_per_session",
    "is_per_session",
]

#: The columns of :func:`compare_per_session`: the comparison's, then the design's.
DESIGN_COLUMNS: tuple[str, ...] = (*COMPARISON_COLUMNS, "design", "block", "note")
_UNIT = {
    "topic": "topic(s)",
    "searcher": "searcher(s)",
    "searcher+topic": "searcher(s)",
    "none": "",
}


def is_per_session(table: pd.DataFrame) -> bool:
    """``table`` is a per-session table as ``run`` writes it (``session_id``, ``system_id``)."""
    return {"session_id", "system_id"} <= {str(c) for c in table.columns}


def compare_per_session(
    per_session: pd.DataFrame,
    *,
    measures: Sequence[str],
    design: str | None = None,
    block: str | None = None,
    test: str = "paired-t",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    effect_size: str = "sakai",
) -> pd.DataFrame:
    """Compare every pair of systems of ``per_session`` as its design asks (module docstring).

    Parameters
    ----------
    per_session
        One row per session: ``system_id``, ``topic_id``, ``user_id`` (optional),
        ``session_order`` (optional) and the score columns.
    measures
        Score columns to compare.
    design, block
        Override of the detected design (:data:`~sessionval.analysis.design.DESIGNS`,
        :data:`~sessionval.analysis.design.BLOCKS`).
    test, correction, alpha, confidence, resamples, seed, effect_size
        As :func:`~sessionval.analysis.compare.compare_systems`; ``test`` applies to the
        paired designs (``by_topic``, ``within`` by searcher), the others have their own.

    Returns
    -------
    pandas.DataFrame
        :data:`DESIGN_COLUMNS`; ``attrs["design"]`` is the
        :class:`~sessionval.analysis.design.Design`, ``attrs["notes"]`` the remarks.
    """
    # pandas deep-copies a frame's attrs into every frame derived from it: the caller's
    # (e.g. simulate_scores' list of measures) would be copied at every step
    per_session = per_session.copy(deep=False)
    per_session.attrs = {}
    d = detect_design(per_session, design=design, block=block)
    missing = [m for m in measures if m not in per_session.columns]
    if missing:
        raise StatisticsError(
            f"per-session table: score column(s) {missing} missing; columns are "
            f"{list(per_session.columns)}"
        )
    return _compare(
        SessionRows(per_session),
        d,
        list(measures),
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        effect_size=effect_size,
    )


def compare_cells(
    cells: CellSums,
    *,
    measures: Sequence[str],
    design: str | None = None,
    block: str | None = None,
    test: str = "paired-t",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    effect_size: str = "sakai",
) -> pd.DataFrame:
    """:func:`compare_per_session` of the sessions that ``cells`` sum (a distributed run).

    The same rows, columns and notes: the paired designs compare the block means (sums
    over counts per system and block) with :func:`compare_systems`; ``between`` runs
    Welch's test on the searcher means; the blocks model is the weighted least squares
    of the cell means, each weighted by its sessions, whose residual sum of squares
    plus the cells' own sums of squares is the session-level one: ordinary least
    squares with categorical regressors only is exactly that (the design matrix has one
    row per cell, repeated for its sessions).  Cells summed without ``session_order``
    (``by_order=False``) fit a Latin square without its period effect, and a note says so.

    Raises
    ------
    StatisticsError
        A measure that was not summed, or an unknown option.
    """
    from .cell_sums import design_from_cells

    d = design_from_cells(cells, design=design, block=block)
    missing = [m for m in measures if m not in cells.measures]
    if missing:
        raise StatisticsError(
            f"cell sums: measure(s) {missing} were not summed; summed: {list(cells.measures)}"
        )
    return _compare(
        CellRows(cells),
        d,
        list(measures),
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        effect_size=effect_size,
    )


def _compare(
    source: SessionRows | CellRows,
    d: Design,
    measures: list[str],
    *,
    test: str,
    correction: str,
    alpha: float,
    confidence: float,
    resamples: int,
    seed: int,
    effect_size: str,
) -> pd.DataFrame:
    """The rows of every pair as design ``d`` asks (module docstring), from sessions or cells."""
    notes: list[str] = []
    if d.design == "log":
        out = pd.DataFrame(columns=list(DESIGN_COLUMNS))
        notes.append(f"Design: {d.description}.")
    elif d.block in ("topic", "searcher"):
        column = "topic_id" if d.block == "topic" else "user_id"
        long = source.blocked(measures, column)
        out = compare_systems(
            long,
            test=test,  # type: ignore[arg-type]
            correction=correction,  # type: ignore[arg-type]
            alpha=alpha,
            confidence=confidence,
            systems=source.systems(),
            resamples=resamples,
            seed=seed,
            effect_size=effect_size,  # type: ignore[arg-type]
            unit=d.block,  # the notes name the block: "3 searchers", not "3 topics"
        )
        notes += out.attrs.get("notes", [])
    else:
        if correction == "tukey-hsd":
            notes.append(
                "Tukey's HSD needs paired blocks; this design's p-values are corrected with "
                "Holm's method instead"
            )
            correction = "holm"
        period = d.latin_square and source.has_order()
        if d.latin_square and d.block == "searcher+topic" and not period:
            notes.append(
                "The blocks model has no period effect: the sessions were summed per cell "
                "without their session_order (cell_sums(by_order=False))"
            )
        out = _model_rows(
            source.rows(measures, period),
            source.systems(),
            measures,
            d,
            alpha=alpha,
            confidence=confidence,
            correction=correction,
            period=period,
        )
        notes += out.attrs["notes"]
    out["design"] = d.design
    out["block"] = d.block
    if "note" not in out.columns:
        out["note"] = ""
    n = out["n"].to_numpy(dtype=np.float64) if len(out) else np.zeros(0)
    short = (out["note"] == "") & (~np.isfinite(out["p"].to_numpy(dtype=np.float64)))
    out.loc[short, "note"] = [
        f"not compared: {int(k)} {_UNIT[d.block] or 'searchers'} scored for both systems (need 2)"
        if k < 2
        else "not compared: the scores do not vary"
        for k in n[short.to_numpy()]
    ]
    out = out.loc[:, list(DESIGN_COLUMNS)]
    out.attrs.update(design=d, notes=notes)
    return out


def _model_rows(
    rows: ModelRows,
    names: list[str],
    measures: list[str],
    d: Design,
    *,
    alpha: float,
    confidence: float,
    correction: str,
    period: bool,
) -> pd.DataFrame:
    """The rows of the ``between`` design and the ``searcher+topic`` block, every measure.

    Each pair is analysed for all measures at once: the measures whose scores are
    missing in the same sessions (cells: with the same counts) share one design
    (Welch's searcher means, or one least squares solve with a column per measure), so
    many scores cost about one.
    """
    ia, ib = pair_indices(len(names))
    keys = rows.keys
    parts: list[pd.DataFrame] = []
    notes: list[str] = []
    for i, j in zip(ia, ib, strict=True):
        a, b = names[i], names[j]
        pair = np.flatnonzero(keys["system"].isin([a, b]).to_numpy())
        missing = rows.missing(pair)
        # measures missing in the same sessions (cells: of the same counts) share one analysis;
        # each measure's pattern as bytes, in np.unique's (lexicographic) order: np.unique(
        # axis=0) on rows of n flags builds a dtype of n fields (seconds at 200k sessions)
        bits = [missing[:, c].tobytes() for c in range(missing.shape[1])]
        for key in sorted(set(bits)):
            cols = np.flatnonzero([b == key for b in bits])
            pattern = np.frombuffer(key, dtype=np.bool_)
            used = pair[~pattern]
            for same in _same_weights(rows, used, cols):
                sub = rows.take(used, same)
                if d.design == "between":
                    part = _welch(sub, a, b, confidence)
                else:
                    part, said = _blocked_ols(sub, a, b, confidence, period)
                    named = ", ".join(measures[c] for c in same)
                    notes += [f"{named}: {a} vs {b}: {n}" for n in said]
                part.insert(0, "measure", [measures[c] for c in same])
                part.insert(1, "a", a)
                part.insert(2, "b", b)
                part["_part"] = len(parts)  # parts come in pair order
                parts.append(part)
    table = pd.concat(parts, ignore_index=True)
    # one family per measure, its rows in pair order: the layout of compare_systems
    table["_measure"] = table["measure"].map({m: k for k, m in enumerate(measures)})
    table = table.sort_values(["_measure", "_part"], kind="stable").reset_index(drop=True)
    p_adj = np.empty(len(table))
    for idx in table.groupby("_measure", sort=False).indices.values():
        p_adj[idx] = adjust_p(table["p"].to_numpy(dtype=np.float64)[idx], correction)  # type: ignore[arg-type]
    table["p_adjusted"] = p_adj
    table["correction"] = correction
    table["significant"] = np.asarray(p_adj < alpha)
    table = table.drop(columns=["_measure", "_part"])
    table.attrs["notes"] = notes
    return table


def _rows(size: int, **columns: object) -> pd.DataFrame:
    """``size`` result rows: arrays as given, scalars repeated."""
    return pd.DataFrame(columns, index=pd.RangeIndex(size))


def _same_weights(
    rows: ModelRows, used: npt.NDArray[np.intp], cols: npt.NDArray[np.intp]
) -> list[npt.NDArray[np.intp]]:
    """``cols`` split by their weights on the ``used`` rows (sessions: all alike)."""
    if rows.weight is None or cols.size < 2:
        return [cols]
    w = rows.weight[np.ix_(used, cols)]
    groups: list[list[int]] = []
    for j in range(cols.size):
        for g in groups:
            if np.array_equal(w[:, g[0]], w[:, j]):
                g.append(j)
                break
        else:
            groups.append([j])
    return [cols[g] for g in groups]


def _welch(rows: ModelRows, a: str, b: str, confidence: float) -> pd.DataFrame:
    """Welch's t test of the searcher means of ``a`` against ``b``, one row per column of ``y``."""
    from scipy import stats as st

    y, keys = rows.y, rows.keys
    m = y.shape[1]
    by = [keys["system"], keys["searcher"]]
    if rows.weight is None:
        means = pd.DataFrame(y).groupby(by).mean()
    else:  # cells: their sums over their sessions, per searcher
        w = pd.Series(rows.weight)
        means = pd.DataFrame(y * rows.weight[:, None]).groupby(by).sum()
        means = means.div(w.groupby(by).sum(), axis=0)
    systems = means.index.get_level_values(0)
    xa, xb = means[systems == a].to_numpy(), means[systems == b].to_numpy()
    na, nb = len(xa), len(xb)
    mean_a = xa.mean(axis=0) if na else np.full(m, np.nan)
    mean_b = xb.mean(axis=0) if nb else np.full(m, np.nan)
    out = _rows(
        m,
        n=na + nb,
        mean_a=mean_a,
        mean_b=mean_b,
        diff=mean_a - mean_b,
        ci_low=np.nan,
        ci_high=np.nan,
        effect_size=np.nan,
        statistic=np.nan,
        p=np.nan,
        test="welch-t",
        effect_size_kind="cohen_d",
        ci_method="welch-t",
        note="",
    )
    if na < 2 or nb < 2:
        out["note"] = f"not compared: {na} searchers with {a} and {nb} with {b} (need 2 each)"
        return out
    va, vb = xa.var(axis=0, ddof=1), xb.var(axis=0, ddof=1)
    noise = ROUNDING * np.maximum(np.abs(xa).max(axis=0), np.abs(xb).max(axis=0))
    flat = np.sqrt(va + vb) <= noise  # rounding noise of equal means counts as no variation
    out.loc[flat, "note"] = "not compared: the searcher means do not vary within either system"
    ok = np.flatnonzero(~flat)
    if ok.size:
        res = st.ttest_ind(xa[:, ok], xb[:, ok], equal_var=False, axis=0)
        ci = res.confidence_interval(confidence)
        pooled = np.sqrt(((na - 1) * va[ok] + (nb - 1) * vb[ok]) / (na + nb - 2))
        diff = out["diff"].to_numpy()[ok]
        with np.errstate(divide="ignore", invalid="ignore"):
            es = np.where(pooled > 0, diff / pooled, np.nan)
        out.loc[ok, ["ci_low", "ci_high", "effect_size", "statistic", "p"]] = np.column_stack(
            [ci.low, ci.high, es, res.statistic, res.pvalue]
        )
    return out


def _sorted_codes(values: pd.Series) -> tuple[npt.NDArray[np.intp], int]:
    """Codes of a factor's levels in sorted order (the first sorted level is the reference)."""
    codes, levels = pd.factorize(values, sort=True)
    return codes, len(levels)


def _with_both(searcher: pd.Series, system: pd.Series) -> npt.NDArray[np.bool_]:
    """The rows of the searchers who used both systems of the pair (two distinct values).

    On the columns' codes: a ``groupby(searcher).nunique()`` built a grouping of
    200k rows per pair and measure pattern.
    """
    who, n_who = _codes(searcher)
    what, n_what = _codes(system)
    ok = (who >= 0) & (what >= 0)  # a missing searcher or system counts for none
    distinct = np.unique(who[ok].astype(np.int64) * max(n_what, 1) + what[ok])
    systems = np.bincount(distinct // max(n_what, 1), minlength=n_who)
    return np.asarray((who >= 0) & (systems[np.maximum(who, 0)] == 2), dtype=np.bool_)


def _codes(values: pd.Series) -> tuple[npt.NDArray[np.intp], int]:
    """Codes of a column's values (-1: missing) and how many distinct values it has."""
    codes, uniques = pd.factorize(values)
    return np.asarray(codes, dtype=np.intp), len(uniques)


def _blocked_ols(
    rows: ModelRows, a: str, b: str, confidence: float, period: bool
) -> tuple[pd.DataFrame, list[str]]:
    r"""OLS ``y ~ system + searcher + topic (+ order)`` on one pair's sessions: a − b.

    One solve for every column of ``y`` (the same sessions): the least-squares fit by
    the pseudo-inverse, as statsmodels' ``OLS`` does, with the contrast's standard
    error from :math:`\hat\sigma^2 (X^\top X)^{+}` on ``n - rank(X)`` degrees of freedom.
    The block of most levels is absorbed (every column demeaned within it, the
    Frisch-Waugh-Lovell theorem) instead of entering as dummy columns, so memory grows
    with the sessions, not with sessions × searchers.

    Rows of cells (``rows.weight``: sessions per cell) give the same fit: the
    session-level design repeats each cell's row, so :math:`X^\top X = X_c^\top W X_c`
    and :math:`X^\top y = X_c^\top W \bar y_c` (weighted least squares on the cell
    means, the block absorbed by weighted demeaning) and the residual sum of squares
    is the weighted one plus the cells' own sums of squares about their means.
    Returns the rows and the notes (collinear blocks).
    """
    from scipy import stats as st

    keys, y = rows.keys, rows.y
    m = y.shape[1]
    kept = _with_both(keys["searcher"], keys["system"])
    k, yk = keys[kept].reset_index(drop=True), y[kept]
    wk = None if rows.weight is None else rows.weight[kept]
    is_a = (k["system"] == a).to_numpy()
    n_blocks = int(k["searcher"].nunique())
    with np.errstate(invalid="ignore"):
        if wk is None:
            mean_a = yk[is_a].mean(axis=0) if is_a.any() else np.full(m, np.nan)
            mean_b = yk[~is_a].mean(axis=0) if (~is_a).any() else np.full(m, np.nan)
        else:
            sums = yk * wk[:, None]
            mean_a = sums[is_a].sum(axis=0) / wk[is_a].sum() if is_a.any() else np.full(m, np.nan)
            mean_b = (
                sums[~is_a].sum(axis=0) / wk[~is_a].sum() if (~is_a).any() else np.full(m, np.nan)
            )
    out = _rows(
        m,
        n=n_blocks,
        mean_a=mean_a,
        mean_b=mean_b,
        diff=np.nan,
        ci_low=np.nan,
        ci_high=np.nan,
        effect_size=np.nan,
        statistic=np.nan,
        p=np.nan,
        test="ols-blocks" + ("+period" if period else ""),
        effect_size_kind="sakai_es_e2",
        ci_method="ols-t",
        note="",
    )
    if n_blocks < 2:
        out["note"] = f"not compared: {n_blocks} searchers used both {a} and {b} (need 2)"
        return out, []
    # the block of most levels (searchers, usually) is absorbed by demeaning within it
    # (Frisch-Waugh-Lovell): the same estimate, t and residual as its dummy columns, in
    # memory linear in the sessions (dummies of 50,000 searchers would take 75 GiB)
    factors = [
        c
        for c in ("searcher", "topic", "order")
        if c in k and (c == "searcher" or (k[c] != k[c].iloc[0]).any())
    ]
    absorbed = max(factors, key=lambda c: k[c].nunique())
    codes = pd.factorize(k[absorbed])[0]
    n_absorbed = int(codes.max()) + 1
    blocks = [indicator_columns(*_sorted_codes(k[c])) for c in factors if c != absorbed]
    n_columns = 2 + (n_absorbed - 1) + sum(b.shape[1] for b in blocks)
    x = demean_within(np.column_stack([is_a.astype(np.float64), *blocks]), codes, n_absorbed, wk)
    y_within = demean_within(yk, codes, n_absorbed, wk)
    if wk is not None:  # weighted least squares: each cell's row times the root of its sessions
        root = np.sqrt(wk)[:, None]
        x, y_within = x * root, y_within * root
    pinv, rank = pinv_and_rank(x)
    rank += n_absorbed
    df = (len(k) if wk is None else round(float(wk.sum()))) - rank
    if df < 1:
        out["note"] = "not compared: no residual degrees of freedom left by the blocks"
        return out, []
    # the contrast is estimable when its unit vector lies in the row space of the design
    if not np.allclose((pinv @ x)[:, 0], np.eye(x.shape[1])[0], atol=1e-8):
        out["note"] = "not compared: the system is confounded with the searcher and topic blocks"
        return out, []
    notes = (
        [
            f"the blocks are collinear (design rank {rank} of {n_columns} columns, e.g. "
            "each position of the order always on the same topic); the system contrast "
            "is estimable and estimated by the pseudo-inverse"
        ]
        if rank < n_columns
        else []
    )
    beta = pinv @ y_within
    rss = ((y_within - x @ beta) ** 2).sum(axis=0)
    if rows.within is not None:  # the sessions' spread about their cell means
        rss = rss + rows.within[kept].sum(axis=0)
    mse = rss / df
    diff = beta[0]
    se = np.sqrt(mse * (pinv[0] @ pinv[0]))
    half = st.t.ppf(0.5 + confidence / 2, df) * se
    rmse = np.sqrt(mse)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = diff / se
        es = diff / rmse
        p = 2 * st.t.sf(np.abs(t), df)
    # the blocks explain every score: a residual of rounding noise (a t of ~1e16
    # otherwise) counts as 0, as the two-way ANOVA counts its sums of squares
    scale = ROUNDING * (np.abs(yk) if rows.absmax is None else rows.absmax[kept]).max(axis=0)
    exact = rmse <= scale
    zero = exact & (np.abs(diff) <= scale)
    moved = exact & ~zero
    diff = np.where(zero, 0.0, diff)
    half = np.where(exact, 0.0, half)
    with np.errstate(invalid="ignore"):  # 0 * inf where the contrast is exactly 0
        t = np.where(zero, 0.0, np.where(moved, np.sign(diff) * np.inf, t))
    es = np.where(zero, 0.0, np.where(moved, np.nan, es))
    p = np.where(zero, 1.0, np.where(moved, 0.0, p))
    out["diff"] = diff
    out["ci_low"], out["ci_high"] = diff - half, diff + half
    out["effect_size"] = es
    out["statistic"] = t
    out["p"] = p
    out.loc[zero, "note"] = (
        "no residual variation: the blocks explain every session, so the systems do not "
        "differ (t = 0, p = 1) and the effect size is 0"
    )
    out.loc[moved, "note"] = (
        "no residual variation: the blocks explain every session, so t = ±inf, p = 0 "
        "and the effect size is undefined (NaN)"
    )
    return out, notes
