"""The one p-value format of the human outputs: APA style (``p < .001``, ``p = .023``).

The report and the terminal text show p-values as a paper's results section does
(American Psychological Association, *Publication Manual*, 7th ed., 2020, §6.36):
three decimals without the leading zero (a probability is never above 1), and
``< .001`` below one in a thousand.  A p-value that three decimals would round onto the
significance level (``0.0496`` → ``.050`` at α = .05) keeps a fourth decimal, so the
text never shows a significant result as ``p = .050``.  Files written for programs
(CSV, Parquet, TSV, JSON lines) keep the full-precision numbers; only what a person
reads goes through :func:`format_p`.

Every table cell of the report whose column is a p-value (:func:`is_p_column`) is
formatted here, so the sections (statistics, omnibus tests, mixed model,
correlations) cannot disagree.
"""

from __future__ import annotations

import math
from typing import Final

__all__ = [
    "format_p",
    "is_p_column",
]

#: Below this a p-value is shown as ``< .001``.
_FLOOR: Final = 1e-3


def format_p(p: float, *, alpha: float | None = None, prefix: bool = False) -> str:
    """A p-value as APA text: ``.023``, ``< .001`` (``p = .023``, ``p < .001`` with ``prefix``).

    Parameters
    ----------
    p
        The p-value (NaN gives ``""``, or ``"p = n/a"`` with ``prefix``).
    alpha
        The significance level: a value that three decimals would round onto it keeps
        a fourth decimal, so the text is on the same side of α as the number.
    prefix
        Write the ``p =`` / ``p <`` of a sentence.

    Examples
    --------
    >>> format_p(0.0234), format_p(0.00042), format_p(0.5), format_p(1.0)
    ('.023', '< .001', '.500', '1.000')
    >>> format_p(0.0496, alpha=0.05), format_p(0.0496)
    ('.0496', '.050')
    >>> format_p(1.5e-5, prefix=True), format_p(0.0234, prefix=True)
    ('p < .001', 'p = .023')
    >>> format_p(float("nan")), format_p(float("nan"), prefix=True)
    ('', 'p = n/a')
    """
    if p is None or math.isnan(p):
        return "p = n/a" if prefix else ""
    if p < _FLOOR:
        return "p < .001" if prefix else "< .001"
    digits = 3
    if alpha is not None and (p < alpha) != (round(p, 3) < alpha):
        digits = 4
    text = f"{p:.{digits}f}"
    text = text[1:] if text.startswith("0.") else text
    return f"p = {text}" if prefix else text


def is_p_column(name: str) -> bool:
    """``name`` holds p-values: ``p``, ``p_adjusted``, ``p_t``, ``pearson_p``, ...

    Examples
    --------
    >>> [c for c in ["p", "p_adjusted", "pearson_p", "n", "ps", "top"] if is_p_column(c)]
    ['p', 'p_adjusted', 'pearson_p']
    """
    return name == "p" or name.startswith("p_") or name.endswith("_p")
