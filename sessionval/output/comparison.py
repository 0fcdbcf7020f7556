r"""The comparison of systems as text: TSV, JSON lines, and a LaTeX table for a paper.

:func:`comparison_latex` writes the table users paste into papers: one row per system
(with a letter), one column per measure, the mean score in each cell, the best score
of each column in bold, and superscript letters marking the systems a score is
significantly better than (``p_adjusted < alpha`` and a positive difference), with a
legend in the caption that names the test, the correction and α.  It needs the
``booktabs`` package.

Examples
--------
>>> comp = pd.DataFrame({"measure": ["AP"], "a": ["bm25"], "b": ["dense_v2"],
...                      "diff": [-0.1], "p_adjusted": [0.01], "significant": [True]})
>>> means = pd.DataFrame({"system": ["bm25", "dense_v2"], "measure": ["AP", "AP"],
...                       "n": [50, 50], "mean": [0.2, 0.3]})
>>> print(comparison_latex(comp, means, test="paired-t", correction="holm"))
... # doctest: +NORMALIZE_WHITESPACE
% requires \usepackage{booktabs}
\begin{table}[t]
\centering
\caption{Mean scores. Bold: best in the column. A superscript letter marks a
significant improvement over the system of that letter (paired t test, Holm
correction, $\alpha = 0.05$).}
\label{tab:comparison}
\begin{tabular}{llr}
\toprule
 & System & AP \\
\midrule
a & bm25 & 0.2000 \\
b & dense\_v2 & \textbf{0.3000}$^{a}$ \\
\bottomrule
\end{tabular}
\end{table}
"""

from __future__ import annotations

import json
import math
from typing import Final

import pandas as pd

__all__ = [
    "comparison_jsonl",
    "comparison_latex",
    "comparison_tsv",
    "latex_escape",
]

_TEST_NAMES: Final = {
    "paired-t": "paired t test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "sign": "sign test",
    "randomisation": "paired randomisation test",
    "bootstrap": "paired bootstrap test (studentised)",
}
_CORRECTION_NAMES: Final = {
    "holm": "Holm correction",
    "bonferroni": "Bonferroni correction",
    "bh": "Benjamini-Hochberg correction",
    "none": "no correction for multiple comparisons",
}
_LATEX_SPECIAL: Final = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters in plain text.

    Examples
    --------
    >>> latex_escape("org_bm25 & 50%")
    'org\\_bm25 \\& 50\\%'
    """
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def _letters(n: int) -> list[str]:
    """``a, b, …, z, aa, ab, …``: one label per system."""
    out = []
    for i in range(n):
        s, k = "", i
        while True:
            s = chr(ord("a") + k % 26) + s
            k = k // 26 - 1
            if k < 0:
                break
        out.append(s)
    return out


def comparison_latex(
    comparison: pd.DataFrame,
    means: pd.DataFrame,
    *,
    test: str,
    correction: str,
    alpha: float = 0.05,
    digits: int = 4,
    caption: str = "Mean scores.",
    label: str = "tab:comparison",
) -> str:
    r"""A LaTeX table of mean scores with the best in bold and significance marks.

    Parameters
    ----------
    comparison
        :func:`sessionval.analysis.compare.compare_systems` output (``measure, a, b,
        diff, significant``).
    means
        :func:`sessionval.analysis.compare.system_means` output (``system, measure,
        mean``); its order gives the rows and columns.
    test, correction, alpha
        Named in the legend.
    digits
        Decimals of the means.
    caption, label
        The caption's first sentence and the ``\label``.

    Returns
    -------
    str
        A ``table`` environment (booktabs rules).
    """
    systems = list(dict.fromkeys(means["system"].astype(str)))
    measures = list(dict.fromkeys(means["measure"].astype(str)))
    letter = dict(zip(systems, _letters(len(systems)), strict=True))
    value = {
        (str(s), str(m)): float(v)
        for s, m, v in zip(means["system"], means["measure"], means["mean"], strict=True)
    }
    if correction == "tukey-hsd":
        procedure = (
            "randomised Tukey HSD blocked by topic"
            if test == "randomisation"
            else r"Tukey HSD from the two-way ANOVA, topic $\times$ system"
        )
    else:
        named = _CORRECTION_NAMES.get(correction, correction)
        procedure = f"{_TEST_NAMES.get(test, test)}, {named}"
    better: dict[tuple[str, str], set[str]] = {}
    sig = comparison[comparison["significant"].astype(bool)]
    for m, a, b, d in zip(sig["measure"], sig["a"], sig["b"], sig["diff"], strict=True):
        winner, loser = (str(a), str(b)) if d > 0 else (str(b), str(a))
        if d != 0:
            better.setdefault((winner, str(m)), set()).add(letter[loser])
    best = {
        m: max((v for (s, mm), v in value.items() if mm == m and not math.isnan(v)), default=None)
        for m in measures
    }
    lines = [
        r"% requires \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{"
        + f"{caption} Bold: best in the column. A superscript letter marks a significant "
        f"improvement over the system of that letter ({procedure}, $\\alpha = {alpha:g}$).}}",
        f"\\label{{{label}}}",
        r"\begin{tabular}{ll" + "r" * len(measures) + "}",
        r"\toprule",
        " & System & " + " & ".join(latex_escape(m) for m in measures) + r" \\",
        r"\midrule",
    ]
    for s in systems:
        cells = []
        for m in measures:
            v = value.get((s, m), math.nan)
            if math.isnan(v):
                cells.append("--")
                continue
            text = f"{v:.{digits}f}"
            top = best[m]
            if top is not None and round(v, digits) == round(top, digits):
                text = rf"\textbf{{{text}}}"
            marks = sorted(better.get((s, m), set()), key=lambda x: (len(x), x))
            if marks:
                text += "$^{" + ",".join(marks) + "}$"
            cells.append(text)
        lines.append(f"{letter[s]} & {latex_escape(s)} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)


def _cell(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else f"{v:.6g}"
    return str(v)


def comparison_tsv(table: pd.DataFrame) -> str:
    """A header line and one tab-separated line per row (floats to 6 significant digits)."""
    rows = ["\t".join(map(str, table.columns))]
    for rec in table.itertuples(index=False):
        rows.append("\t".join(_cell(v) for v in rec))
    return "\n".join(rows)


def comparison_jsonl(table: pd.DataFrame) -> str:
    """One JSON object per row (NaN as null)."""
    out = []
    for rec in table.to_dict(orient="records"):
        clean = {
            str(k): (None if isinstance(v, float) and math.isnan(v) else _plain(v))
            for k, v in rec.items()
        }
        out.append(json.dumps(clean))
    return "\n".join(out)


def _plain(v: object) -> object:
    """NumPy scalars as Python values (``json`` does not know them)."""
    item = getattr(v, "item", None)
    return item() if callable(item) else v
