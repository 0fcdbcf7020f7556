r"""Incomplete judgments: f-qrels (Bompada et al. 2007, section 4.1) and what they change.

:func:`fqrels` samples nested subsets of the judgments.  For each topic, its relevant
documents :math:`R` and judged non-relevant documents :math:`N` are put in a random
order once (fixed by the seed); the f-qrels keep the first
:math:`\max(1, \lfloor f|R| \rfloor)` of :math:`R` and the first
:math:`\max(10, \lfloor f|N| \rfloor)` of :math:`N` (never more than there are).
Because every fraction takes prefixes of the same orders, the f-qrels are nested: a
larger :math:`f` keeps a superset.  The extracted text of the paper prints "min"; the
method it follows (Buckley & Voorhees 2004) takes the max, as the spec says.

:func:`decision_agreement` compares the pairwise significance decisions (Wilcoxon
signed-rank at α, as the paper's section 4.3) under the full and the f-qrels: the
confusion matrix of Table 2, its accuracy and the geometric mean
:math:`\sqrt{TP \cdot P}` with :math:`TP = C_{11}/(C_{11} + C_{12})` and
:math:`P = C_{11}/(C_{11} + C_{21})` (:math:`C_{11}`: H0 accepted under both,
:math:`C_{21}`: rejected under full judgments only, :math:`C_{12}`: rejected under
the f-qrels only).  The positive class is "H0 accepted", as in the paper, so the
rejections (:math:`C_{22}`) enter the accuracy only; a ratio with a zero denominator is
undefined and makes the g-mean NaN (with :math:`C_{11} = 0` and both denominators
positive it is 0).

References
----------
Bompada, Chang, Chen, Kumar & Shenoy (2007), SIGIR, sections 4.1-4.3 [bompada2007];
Buckley & Voorhees (2004), SIGIR [buckley2004].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import StatisticsError
from ..frame import JudgmentFrame
from ..kernels.segments import offsets_from_counts, segment_ranks
from .compare import compare_systems

__all__ = [
    "decision_agreement",
    "fqrels",
]


def fqrels(
    judgments: JudgmentFrame,
    fractions: Sequence[float],
    *,
    seed: int = 0,
    min_relevant: int = 1,
    min_nonrelevant: int = 10,
) -> dict[float, JudgmentFrame]:
    """Nested samples of the judgments at each fraction ``f`` (Bompada et al. 2007, 4.1).

    Parameters
    ----------
    judgments
        The complete judgments (the 100%-qrels).
    fractions
        Fractions in (0, 1]; ``1.0`` returns every judgment.
    seed
        Seed of the per-topic random orders (shared by every fraction: nested sets).
    min_relevant, min_nonrelevant
        The floors of the method (1 relevant and 10 non-relevant documents per topic).

    Returns
    -------
    dict
        ``{f: JudgmentFrame}`` in the order given; each keeps the judgments' scale and
        row order.

    Examples
    --------
    >>> from sessionval.validate.judgments import judgments_from_records
    >>> j = judgments_from_records(
    ...     [("t", f"r{i}", 1) for i in range(10)] + [("t", f"n{i}", 0) for i in range(30)])
    >>> sub = fqrels(j, [0.2, 0.5, 1.0], seed=1)
    >>> [(int((s.table.grade > 0).sum()), int((s.table.grade <= 0).sum())) for s in sub.values()]
    [(2, 10), (5, 15), (10, 30)]
    """
    fr = [float(f) for f in fractions]
    bad = [f for f in fr if not 0.0 < f <= 1.0]
    if bad:
        raise StatisticsError(f"fractions must be in (0, 1], got {bad}")
    table = judgments.table
    topic = table["topic_id"].cat.codes.to_numpy().astype(np.int64)
    relevant = table["grade"].to_numpy() > 0
    # group = (topic, relevant?); a random order within each group, drawn once
    group = topic * 2 + relevant
    key = np.random.default_rng(seed).random(len(table))
    order = np.lexsort((key, group))
    sizes = np.bincount(group, minlength=2 * (int(topic.max()) + 1 if topic.size else 0))
    position = np.empty(len(table), dtype=np.int64)
    position[order] = segment_ranks(offsets_from_counts(sizes)) - 1
    size = sizes[group]
    floor = np.where(relevant, min_relevant, min_nonrelevant)
    out: dict[float, JudgmentFrame] = {}
    for f in fr:
        quota = np.minimum(size, np.maximum(floor, np.floor(f * size + 1e-9).astype(np.int64)))
        keep = position < quota
        sub = table.loc[keep].reset_index(drop=True)
        out[f] = JudgmentFrame(sub, judgments.scale, f"{judgments.source} (f = {f:g})")
    return out


def decision_agreement(
    full: pd.DataFrame,
    partial: pd.DataFrame,
    *,
    measures: Sequence[str] | None = None,
    alpha: float = 0.05,
    test: str = "wilcoxon",
) -> pd.DataFrame:
    """Agreement of the pairwise significance decisions under full and partial judgments.

    Parameters
    ----------
    full, partial
        Long score tables (``system, topic, measure, value``) under the complete
        judgments and under the f-qrels.
    measures
        Measures (default: those of ``full``).
    alpha
        Level of a decision (unadjusted, as the paper).
    test
        The paired test of a decision (the paper: ``"wilcoxon"``).

    Returns
    -------
    pandas.DataFrame
        Per measure: ``measure, n_pairs, c11, c12, c21, c22, accuracy, g_mean``
        (``c11`` accepted under both, ``c12`` rejected under partial only, ``c21``
        rejected under full only, ``c22`` rejected under both).
    """
    opts = {"test": test, "correction": "none", "alpha": alpha, "measures": measures}
    a = compare_systems(full, **opts)  # type: ignore[arg-type]
    b = compare_systems(partial, **opts)  # type: ignore[arg-type]
    key = ["measure", "a", "b"]
    both = a[[*key, "significant"]].merge(
        b[[*key, "significant"]], on=key, suffixes=("_full", "_partial")
    )
    rows = []
    for m, g in both.groupby("measure", sort=False):
        sf = g["significant_full"].to_numpy(dtype=bool)
        sp = g["significant_partial"].to_numpy(dtype=bool)
        c11 = int(np.sum(~sf & ~sp))
        c12 = int(np.sum(~sf & sp))
        c21 = int(np.sum(sf & ~sp))
        c22 = int(np.sum(sf & sp))
        total = c11 + c12 + c21 + c22
        with np.errstate(invalid="ignore", divide="ignore"):
            tp = c11 / (c11 + c12) if c11 + c12 else np.nan
            pp = c11 / (c11 + c21) if c11 + c21 else np.nan
        rows.append(
            (m, total, c11, c12, c21, c22, (c11 + c22) / total if total else np.nan,
             float(np.sqrt(tp * pp)))
        )  # fmt: skip
    return pd.DataFrame(
        rows, columns=["measure", "n_pairs", "c11", "c12", "c21", "c22", "accuracy", "g_mean"]
    )
