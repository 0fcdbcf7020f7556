"""Tables for people: aligned plain text for a terminal, and Markdown.

The commands print these when standard output is a terminal (``--format table``) or
when asked (``--format markdown``); pipes and files get the machine formats of
:mod:`sessionval.output.comparison` (TSV, JSON lines).  Numbers are right-aligned
and written to a fixed number of decimals, text is left-aligned, a missing value is
``NaN``.  A cell may carry ANSI styling (bold): widths are measured without it, so
the columns stay aligned, and ``click.echo`` removes it when the output is no
terminal.

Examples
--------
>>> t = pd.DataFrame({"run": ["bm25", "dense"], "AP": [0.2, 0.31234]})
>>> print(aligned_table(t))
run        AP
bm25   0.2000
dense  0.3123
>>> print(markdown_table(t))
| run | AP |
| :-- | --: |
| bm25 | 0.2000 |
| dense | 0.3123 |
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import numpy as np
import pandas as pd

__all__ = [
    "BOLD",
    "RESET",
    "aligned_rows",
    "aligned_table",
    "cell_texts",
    "comparison_table",
    "markdown_row",
    "markdown_table",
    "superscript",
    "table_text",
    "visible_width",
]

#: ANSI bold on and off (``click.echo`` strips them when the output is not a terminal).
BOLD: Final = "\x1b[1m"
RESET: Final = "\x1b[0m"
_ANSI: Final = re.compile(r"\x1b\[[0-9;]*m")
# Unicode has a modifier letter for every Latin letter but q (ranx writes the same set)
_SUPERSCRIPT: Final = dict(
    zip("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ", strict=True)
)


def superscript(letters: str) -> str:
    """Letters as Unicode superscripts (``q``, which has none, stays as it is).

    Examples
    --------
    >>> superscript("abz")
    'ᵃᵇᶻ'
    """
    return "".join(_SUPERSCRIPT.get(c, c) for c in letters)


def visible_width(text: str) -> int:
    """Characters that take a column on a terminal (ANSI styling left out).

    Examples
    --------
    >>> visible_width(BOLD + "0.25" + RESET)
    4
    """
    return len(_ANSI.sub("", text))


def cell_texts(col: pd.Series, digits: int) -> list[str]:
    """A column as display text: floats to ``digits`` decimals, missing as ``NaN``."""
    if pd.api.types.is_bool_dtype(col.dtype):
        return ["true" if v else "false" for v in col.to_numpy(dtype=bool)]
    if pd.api.types.is_float_dtype(col.dtype):
        v = col.to_numpy(dtype=np.float64)
        # a tiny value (a p-value) would print as 0: its two leading digits instead
        tiny = (v != 0) & (np.abs(v) < 0.5 * 10.0**-digits)
        text = np.where(tiny, np.char.mod("%.1e", v), np.char.mod(f"%.{digits}f", v))
        return [str(t) for t in np.where(np.isnan(v), "NaN", text)]
    missing = col.isna().to_numpy(dtype=bool)
    return ["NaN" if m else str(v) for v, m in zip(col.tolist(), missing, strict=True)]


def aligned_rows(
    header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]
) -> str:
    """Cells padded to their column's widest, two spaces between columns.

    ``right`` says which columns are right-aligned (numbers).  Trailing spaces are
    removed from each line.
    """
    widths = [max(visible_width(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        out = []
        for cell, width, r in zip(cells, widths, right, strict=True):
            pad = " " * (width - visible_width(cell))
            out.append(pad + cell if r else cell + pad)
        return "  ".join(out).rstrip()

    return "\n".join(line(r) for r in [header, *rows])


def aligned_table(table: pd.DataFrame, *, digits: int = 4) -> str:
    """Any table as aligned plain text: a header line and one line per row.

    Parameters
    ----------
    table
        Any table (its index is not printed).
    digits
        Decimals of float columns.
    """
    cols = [cell_texts(table.iloc[:, i], digits) for i in range(table.shape[1])]
    rows = [list(r) for r in zip(*cols, strict=True)] if cols else []
    right = [pd.api.types.is_numeric_dtype(table.iloc[:, i].dtype) for i in range(table.shape[1])]
    return aligned_rows([str(c) for c in table.columns], rows, right)


def markdown_row(cells: Sequence[str]) -> str:
    """One Markdown table row (a ``|`` inside a cell escaped)."""
    return "| " + " | ".join(c.replace("|", r"\|") for c in cells) + " |"


def markdown_table(table: pd.DataFrame, *, digits: int = 4) -> str:
    """Any table as a Markdown (GitHub) table, numbers right-aligned."""
    right = [pd.api.types.is_numeric_dtype(table.iloc[:, i].dtype) for i in range(table.shape[1])]
    cols = [cell_texts(table.iloc[:, i], digits) for i in range(table.shape[1])]
    lines = [
        markdown_row([str(c) for c in table.columns]),
        "| " + " | ".join("--:" if r else ":--" for r in right) + " |",
    ]
    lines += [markdown_row(list(r)) for r in zip(*cols, strict=True)]
    return "\n".join(lines)


def comparison_table(
    comparison: pd.DataFrame,
    means: pd.DataFrame,
    *,
    test: str,
    correction: str,
    alpha: float = 0.05,
    digits: int = 4,
    markdown: bool = False,
) -> str:
    """Runs × measures with the mean of each, for a terminal (ranx's report) or Markdown.

    The same marks as :func:`~sessionval.output.comparison.comparison_latex`: the best
    mean of each measure in bold (ANSI on a terminal, ``**`` in Markdown) and, after a
    mean, the superscript letters of the runs it is significantly better than
    (``significant`` and a positive difference).  A legend under the table says what
    the marks mean and names the test, the correction and α.

    Parameters
    ----------
    comparison, means
        :func:`sessionval.analysis.compare.compare_systems` and
        :func:`sessionval.analysis.compare.system_means` outputs.
    test, correction, alpha
        Named in the legend.
    digits
        Decimals of the means.
    markdown
        A Markdown table (letters as ``<sup>``) instead of aligned text.

    Examples
    --------
    >>> comp = pd.DataFrame({"measure": ["AP"], "a": ["bm25"], "b": ["dense"],
    ...                      "diff": [-0.1], "p_adjusted": [0.01], "significant": [True]})
    >>> means = pd.DataFrame({"system": ["bm25", "dense"], "measure": ["AP", "AP"],
    ...                       "n": [50, 50], "mean": [0.2, 0.3]})
    >>> text = comparison_table(comp, means, test="paired-t", correction="holm")
    >>> print(_ANSI.sub("", text))
       run        AP
    a  bm25   0.2000
    b  dense  0.3000ᵃ
    <BLANKLINE>
    Mean of each run. Bold: the best of each measure. A superscript letter marks a
    significant improvement over the run of that letter (paired t test, Holm correction,
    alpha = 0.05).
    """
    from .comparison import aggregate_legend, procedure_text, significance_marks

    marks = significance_marks(comparison, means)
    # each cell is (mean, letters): the means line up, their letters follow them
    rows: list[list[tuple[str, str]]] = []
    for s in marks.systems:
        cells = [(marks.letter[s], ""), (s, "")]
        for m in marks.measures:
            v = marks.value.get((s, m), np.nan)
            text = "NaN" if np.isnan(v) else f"{v:.{digits}f}"
            if marks.is_best(s, m, digits):
                text = f"**{text}**" if markdown else BOLD + text + RESET
            over = marks.over(s, m)
            letters = f"<sup>{','.join(over)}</sup>" if markdown else superscript("".join(over))
            cells.append((text, letters if over else ""))
        rows.append(cells)
    header = ["", "run", *marks.measures]
    kinds = aggregate_legend(means)  # a sum or geometric mean gets its own line
    legend = (
        (f"Mean of each run{kinds}.\n" if kinds else "Mean of each run. ")
        + "Bold: the best of each measure. A superscript letter marks a\n"
        "significant improvement over the run of that letter "
        f"({procedure_text(test, correction)},\nalpha = {alpha:g})."
    )
    if markdown:
        lines = [markdown_row(header), "| :-- | :-- |" + " --: |" * len(marks.measures)]
        lines += [markdown_row([t + m for t, m in r]) for r in rows]
        return "\n".join([*lines, "", legend.replace("\n", " ")])
    n = len(header)
    num_w = [max([len(header[i])] + [visible_width(r[i][0]) for r in rows]) for i in range(n)]
    mark_w = [max([0] + [visible_width(r[i][1]) for r in rows]) for i in range(n)]
    out = []
    for cells in [[(h, "") for h in header], *rows]:
        texts = []
        for i, (num, mark) in enumerate(cells):
            pad = " " * (num_w[i] - visible_width(num))
            texts.append((pad + num if i >= 2 else num + pad) + mark.ljust(mark_w[i]))
        out.append("  ".join(texts).rstrip())
    return "\n".join(out) + "\n\n" + legend


def table_text(table: pd.DataFrame, fmt: str, *, digits: int = 4) -> str:
    """A table in one of the ``--format`` values of a plain table.

    ``table`` (:func:`aligned_table`), ``markdown`` (:func:`markdown_table`), ``tsv``
    (:func:`~sessionval.output.comparison.comparison_tsv`: 6 significant digits) or
    ``jsonl`` (:func:`~sessionval.output.comparison.comparison_jsonl`).

    Raises
    ------
    ValueError
        Another value (the commands accept only these for a plain table).
    """
    from .comparison import comparison_jsonl, comparison_tsv

    if fmt == "table":
        return aligned_table(table, digits=digits)
    if fmt == "markdown":
        return markdown_table(table, digits=digits)
    if fmt == "tsv":
        return comparison_tsv(table)
    if fmt == "jsonl":
        return comparison_jsonl(table)
    raise ValueError(f"unknown table format {fmt!r}: table, markdown, tsv or jsonl")
