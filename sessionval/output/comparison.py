r"""The comparison of systems as text: TSV, JSON lines, and a LaTeX table for a paper.

:func:`comparison_latex` writes the table users paste into papers: one row per system
(with a letter), one column per measure, the mean score in each cell, the best score
of each column in bold, and superscript letters marking the systems a score is
significantly better than (``p_adjusted < alpha`` and a positive difference), with a
legend in the caption that names the test, the correction and α.  It needs the
``booktabs`` package.

Every text format has one escaping function, used by every writer of it (``compare``,
``meta``'s summaries and its ``--out`` detail files): :func:`tsv_field` (the CSV rule
with a tab delimiter, as pandas and R's ``read.delim`` read it back: a field holding a
tab, a line break or a double quote is quoted, its quotes doubled) through
:func:`tsv_text`, and :func:`latex_escape` (LaTeX's special characters, and control
characters as visible ``\n``-style escapes, so a name never breaks a row or starts a
paragraph); JSON lines are escaped by :mod:`json`.  The HTML report escapes through
``DataFrame.to_html`` and Jinja's autoescape.

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
import re
from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

__all__ = [
    "CONTROL_CHARACTERS",
    "SignificanceMarks",
    "comparison_jsonl",
    "comparison_latex",
    "comparison_tsv",
    "latex_escape",
    "procedure_text",
    "significance_marks",
    "tsv_field",
    "tsv_text",
    "visible_escape",
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


#: Control characters (C0, DEL, C1) and the Unicode line and paragraph separators.
CONTROL_CHARACTERS: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: What makes a TSV field need quotes under the CSV rule.
_TSV_QUOTED: Final = r'[\t\n\r"]'


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters in plain text; control characters made visible.

    A tab or line break in a cell would break the row's line or (a blank line) start a
    paragraph inside the table, so each control character is written as its Python
    escape with ``\textbackslash{}``: a newline prints as ``\n``.

    Examples
    --------
    >>> latex_escape("org_bm25 & 50%")
    'org\\_bm25 \\& 50\\%'
    >>> latex_escape("two\n\npar")
    'two\\textbackslash{}n\\textbackslash{}npar'
    """
    plain = "".join(_LATEX_SPECIAL.get(c, c) for c in text)
    return CONTROL_CHARACTERS.sub(
        lambda m: visible_escape(m.group()).replace("\\", r"\textbackslash{}"), plain
    )


def visible_escape(char: str) -> str:
    r"""A control character as its Python escape (``\n``, ``\t``, ``\x1b``, ``\u2028``)."""
    return char.encode("unicode_escape").decode("ascii")


def tsv_field(text: str) -> str:
    r"""One TSV field under the CSV rule with a tab delimiter (quoted only when needed).

    Examples
    --------
    >>> tsv_field("bm25"), tsv_field("tab\tname")
    ('bm25', '"tab\tname"')
    >>> print(tsv_field('a "b" c'))
    "a ""b"" c"
    """
    return '"' + text.replace('"', '""') + '"' if re.search(_TSV_QUOTED, text) else text


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


@dataclass(frozen=True)
class SignificanceMarks:
    """What a table of mean scores marks: the best of each measure, the significant wins.

    Shared by the LaTeX, the terminal and the Markdown tables of a comparison.

    Attributes
    ----------
    systems, measures
        Rows and columns in the order of the means table.
    letter
        The letter of each system (``a``, ``b``, …, ``z``, ``aa``, …).
    value
        Mean score by (system, measure).
    best
        Highest mean of each measure (``None`` when every mean is NaN).
    better
        Letters of the systems each (system, measure) is significantly better than:
        ``significant`` and a positive difference.
    """

    systems: list[str]
    measures: list[str]
    letter: dict[str, str]
    value: dict[tuple[str, str], float]
    best: dict[str, float | None]
    better: dict[tuple[str, str], set[str]]

    def is_best(self, system: str, measure: str, digits: int) -> bool:
        """Whether the mean equals the column's best at the printed precision."""
        v, top = self.value.get((system, measure), math.nan), self.best[measure]
        return top is not None and not math.isnan(v) and round(v, digits) == round(top, digits)

    def over(self, system: str, measure: str) -> list[str]:
        """Letters of the systems ``system`` is significantly better than, in order."""
        return sorted(self.better.get((system, measure), set()), key=lambda x: (len(x), x))


def significance_marks(comparison: pd.DataFrame, means: pd.DataFrame) -> SignificanceMarks:
    """The :class:`SignificanceMarks` of a comparison and its system means.

    Parameters
    ----------
    comparison
        :func:`sessionval.analysis.compare.compare_systems` output (``measure, a, b,
        diff, significant``).
    means
        :func:`sessionval.analysis.compare.system_means` output (``system, measure,
        mean``); its order gives the rows and columns.
    """
    systems = list(dict.fromkeys(means["system"].astype(str)))
    measures = list(dict.fromkeys(means["measure"].astype(str)))
    letter = dict(zip(systems, _letters(len(systems)), strict=True))
    value = {
        (str(s), str(m)): float(v)
        for s, m, v in zip(means["system"], means["measure"], means["mean"], strict=True)
    }
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
    return SignificanceMarks(systems, measures, letter, value, best, better)


def procedure_text(test: str, correction: str, *, latex: bool = False) -> str:
    """The test and correction in words, for a table's legend (``latex``: LaTeX math).

    Examples
    --------
    >>> procedure_text("paired-t", "holm")
    'paired t test, Holm correction'
    """
    if correction == "tukey-hsd":
        return (
            "randomised Tukey HSD blocked by topic"
            if test == "randomisation"
            else "Tukey HSD from the two-way ANOVA, topic "
            + (r"$\times$" if latex else "×")
            + " system"
        )
    return f"{_TEST_NAMES.get(test, test)}, {_CORRECTION_NAMES.get(correction, correction)}"


_AGGREGATE_TEXT = {"sum": "sum over topics", "exp_mean": "geometric mean over topics"}


def aggregate_legend(means: pd.DataFrame) -> str:
    """The legend's words for the measures whose summary is not a mean (``""`` if none).

    Examples
    --------
    >>> m = pd.DataFrame(columns=["system", "measure", "n", "mean"])
    >>> m.attrs["aggregate"] = {"GMAP": "exp_mean", "NumRet": "sum"}
    >>> aggregate_legend(m)
    ' (GMAP: geometric mean over topics; NumRet: sum over topics)'
    """
    kinds = means.attrs.get("aggregate", {})
    parts = [f"{m}: {_AGGREGATE_TEXT.get(k, k)}" for m, k in kinds.items()]
    return f" ({'; '.join(parts)})" if parts else ""


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
    marks = significance_marks(comparison, means)
    procedure = procedure_text(test, correction, latex=True)
    systems, measures, letter = marks.systems, marks.measures, marks.letter
    lines = [
        r"% requires \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{"
        + f"{caption[:-1] if caption.endswith('.') else caption}{aggregate_legend(means)}. "
        f"Bold: best in the column. A superscript letter marks a significant "
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
            v = marks.value.get((s, m), math.nan)
            if math.isnan(v):
                cells.append("--")
                continue
            text = f"{v:.{digits}f}"
            if marks.is_best(s, m, digits):
                text = rf"\textbf{{{text}}}"
            over = marks.over(s, m)
            if over:
                text += "$^{" + ",".join(over) + "}$"
            cells.append(text)
        lines.append(f"{letter[s]} & {latex_escape(s)} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)


def _column_text(col: pd.Series, digits: int | None) -> pd.Series:
    """A column as TSV fields, quoted where the rule needs it.

    Floats to ``digits`` significant digits (None: shortest round trip), a missing
    value as ``NaN``, booleans as ``true``/``false``.
    """
    if pd.api.types.is_bool_dtype(col.dtype):
        text = np.where(col.to_numpy(dtype=bool), "true", "false").astype(object)
    elif pd.api.types.is_float_dtype(col.dtype):
        v = col.to_numpy(dtype=np.float64)
        out = np.char.mod(f"%.{digits}g", v) if digits is not None else v.astype(str)
        text = np.where(np.isnan(v), "NaN", out).astype(object)
    else:
        text = col.astype(str).to_numpy(dtype=object)
        text[col.isna().to_numpy(dtype=bool)] = "NaN"
    fields = pd.Series(text, index=col.index, dtype=object)
    quote = fields.str.contains(_TSV_QUOTED, regex=True).to_numpy(dtype=bool)
    if quote.any():
        fields[quote] = '"' + fields[quote].str.replace('"', '""', regex=False) + '"'
    return fields


def tsv_text(table: pd.DataFrame, *, digits: int | None = 6) -> str:
    r"""A header line and one tab-separated line per row, every field through the TSV rule.

    Parameters
    ----------
    table
        Any table.
    digits
        Significant digits of floats (``None``: the shortest text that reads back
        to the same float, for files).

    Examples
    --------
    >>> tsv_text(pd.DataFrame({"a": ["x\ty"], "p": [0.123456789], "s": [True]})).split("\n")
    ['a\tp\ts', '"x\ty"\t0.123457\ttrue']
    """
    header = "\t".join(tsv_field(str(c)) for c in table.columns)
    if table.empty or table.shape[1] == 0:
        return header
    cols = [_column_text(table.iloc[:, i], digits) for i in range(table.shape[1])]
    rows = cols[0].str.cat(pd.concat(cols[1:], axis=1), sep="\t") if len(cols) > 1 else cols[0]
    return "\n".join([header, *rows.tolist()])


def comparison_tsv(table: pd.DataFrame) -> str:
    """A header line and one tab-separated line per row (floats to 6 significant digits)."""
    return tsv_text(table)


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
