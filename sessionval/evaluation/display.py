"""How result objects show themselves in a notebook (``_repr_html_``) and a console.

Jupyter shows an object's ``_repr_html_`` when a cell ends with it, as it shows a
DataFrame; :func:`html_block` is the one layout of the result objects of sessionval
(:class:`~sessionval.evaluation.result.SessionEvaluation`,
:class:`~sessionval.evaluation.lists.SingleEvaluation`,
:class:`~sessionval.analysis.summary.StudySummary`): a title, a line of facts, and
tables rendered by pandas (which escapes their cells).

Examples
--------
>>> import pandas as pd
>>> html = html_block("Run", ["3 queries"], {"means": pd.DataFrame({"AP": [0.5]})})
>>> html.startswith("<div class='sessionval'><strong>Run</strong>")
True
>>> "<p>3 queries</p>" in html and "<h4>means</h4>" in html
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

import pandas as pd

__all__ = [
    "html_block",
]


def html_block(
    title: str,
    facts: Sequence[str],
    tables: Mapping[str, pd.DataFrame],
    *,
    digits: int = 4,
) -> str:
    """A title, facts joined by `` · ``, and each table under its heading, as HTML.

    Parameters
    ----------
    title
        The object's name in bold.
    facts
        Short plain-text facts (escaped).
    tables
        Heading (escaped) -> table (``DataFrame.to_html``; floats to ``digits`` decimals).
    digits
        Decimals of float cells.

    A table's index is shown when it holds labels (not the default 0, 1, 2, …).
    """
    parts = [f"<div class='sessionval'><strong>{escape(title)}</strong>"]
    if facts:
        parts.append(f"<p>{escape(' · '.join(facts))}</p>")
    for heading, table in tables.items():
        parts.append(f"<h4>{escape(heading)}</h4>")
        parts.append(
            table.to_html(
                index=not isinstance(table.index, pd.RangeIndex),
                float_format=lambda v: f"{v:.{digits}f}",
                border=0,
                na_rep="NaN",
            )
        )
    parts.append("</div>")
    return "".join(parts)
