"""The run report: one self-contained HTML file a person opens in a browser.

Everything is inside the file (figures as base64 ``data:`` URIs, styles inline,
no script, no network), so the report can be mailed or archived as is.  It
shows, in order: the parameters of the evaluation, a per-system table of session
scores (mean, standard deviation and a Student-t confidence interval of the
mean), the figures, the study summary and the validation outcome.

The template is a jinja2 string in this module (:data:`TEMPLATE`), rendered with
autoescaping; jinja2 and scipy (extras ``export`` and ``stats``) are imported
only when a report is made.
"""

from __future__ import annotations

import base64
import datetime as _dt
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from ..analysis.stats import paired_comparison, score_table
from ..errors import SessionvalError, writing
from .parameters import parameter_docs
from .pvalues import format_p, is_p_column

if TYPE_CHECKING:
    from ..analysis.summary import StudySummary

__all__ = [
    "TEMPLATE",
    "ReportFigure",
    "ReportSection",
    "ReportTable",
    "paired_comparison",
    "render_report",
    "score_table",
    "unequal_counts",
    "unjudged_note",
    "unjudged_sessions",
    "write_report",
]
# paired_comparison and score_table live in sessionval.analysis.stats; they stay importable
# from here, where the previous release had them.


class ReportFigure:
    """One figure of the report.

    Parameters
    ----------
    title
        Heading shown above the figure.
    png
        The figure as PNG bytes (what the browser shows), or a function returning them
        (called once, when the report first reads them: a figure being written in the
        background, :class:`~sessionval.output.figure_writer.FigureFiles`).
    caption
        Text under the figure (what it shows, its parameters).
    svg
        The same figure as SVG bytes, offered as a download link (optional), or a
        function returning them (or ``None``).
    """

    def __init__(
        self,
        title: str,
        png: bytes | Callable[[], bytes],
        caption: str = "",
        svg: bytes | Callable[[], bytes | None] | None = None,
    ) -> None:
        self.title = title
        self.caption = caption
        self._png, self._svg = png, svg
        if isinstance(png, bytes):
            _check_png(title, png)

    @cached_property
    def png(self) -> bytes:
        """The PNG bytes."""
        data = self._png() if callable(self._png) else self._png
        _check_png(self.title, data)
        return data

    @cached_property
    def svg(self) -> bytes | None:
        """The SVG bytes, or None."""
        return self._svg() if callable(self._svg) else self._svg

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReportFigure):
            return NotImplemented
        mine, theirs = (self.title, self.caption), (other.title, other.caption)
        return mine == theirs and (self.png, self.svg) == (other.png, other.svg)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ReportFigure(title={self.title!r}, caption={self.caption!r})"

    @property
    def png_uri(self) -> str:
        """``data:image/png;base64,...``."""
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")

    @property
    def svg_uri(self) -> str | None:
        """``data:image/svg+xml;base64,...`` or None."""
        if self.svg is None:
            return None
        return "data:image/svg+xml;base64," + base64.b64encode(self.svg).decode("ascii")


def _check_png(title: str, png: bytes) -> None:
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        raise SessionvalError(f"figure {title!r}: png is not PNG data")


@dataclass(frozen=True)
class ReportTable:
    """A table of a report section: a tidy DataFrame rendered as HTML, with a note under it."""

    title: str
    table: pd.DataFrame
    note: str = ""
    index: bool = False
    digits: int = 4
    #: The significance level the p-values are read against (:func:`format_p`).
    alpha: float | None = None


@dataclass(frozen=True)
class ReportSection:
    """A section of the report beyond the fixed ones (statistics, correlations, notes, ...).

    The workflow builds sections from tidy tables; the report only renders them, in
    order, after the session scores.  Texts are plain text (escaped when rendered).

    Parameters
    ----------
    id
        HTML anchor (letters, digits, ``-``), also the navigation link.
    title
        Heading.
    intro
        Paragraphs above the tables (how the numbers were computed).
    tables, figures
        Tables and figures, in order.
    notes
        Remarks listed at the end (e.g. a figure that could not be drawn, and why).
    """

    id: str
    title: str
    intro: tuple[str, ...] = ()
    tables: tuple[ReportTable, ...] = ()
    figures: tuple[ReportFigure, ...] = ()
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", self.id):
            raise SessionvalError(
                f"report section id {self.id!r}: use letters, digits and '-' (an HTML anchor)"
            )


TEMPLATE: Final[str] = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="sessionval {{ version }}">
<title>{{ title }}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto;
       max-width: 64rem; padding: 0 1rem; color: #1a1a1a; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.25rem; margin-top: 2.2rem;
  border-bottom: 1px solid #ccc; padding-bottom: .2rem; } h3 { font-size: 1.05rem; }
.meta { color: #555; font-size: .9rem; }
table { border-collapse: collapse; margin: .6rem 0; font-size: .88rem; }
th, td { border: 1px solid #ccc; padding: .2rem .5rem; text-align: right; }
th { background: #f2f2f2; } td:first-child, th:first-child { text-align: left; }
table.parameters td, table.parameters th { text-align: left; }
figure { margin: 1.2rem 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .88rem; color: #333; }
pre { background: #f7f7f7; padding: .6rem; overflow-x: auto; font-size: .82rem; }
.ok { color: #1b7837; } .bad { color: #b2182b; }
nav a { margin-right: .8rem; }
</style>
</head>
<body>
<h1>{{ title }}</h1>
<p class="meta">Generated {{ generated }} by sessionval {{ version }}{% if source %}
 from <code>{{ source }}</code>{% endif %}.</p>
<nav><a href="#parameters">Parameters</a><a href="#scores">Session scores</a>
{% for sec in sections %}<a href="#{{ sec.id }}">{{ sec.title }}</a>{% endfor %}
<a href="#figures">Figures</a><a href="#study">Study</a><a href="#validation">Validation</a></nav>

<h2 id="parameters">Parameters</h2>
<table class="parameters">
<tr><th>parameter</th><th>value</th><th>meaning</th></tr>
{% for p in parameters %}<tr><td><code>{{ p.name }}</code></td><td>{{ p.value }}</td>
<td>{{ p.meaning }}</td></tr>
{% endfor %}</table>

<h2 id="scores">Session scores per system</h2>
<p>Mean over sessions, standard deviation and {{ ci_percent }}% confidence interval of the mean
(Student t with n&minus;1 degrees of freedom). Sessions without a value are not counted.</p>
{{ score_html }}
{% for n in score_notes %}<p class="meta">{{ n }}</p>
{% endfor %}

{% for sec in sections %}<h2 id="{{ sec.id }}">{{ sec.title }}</h2>
{% for para in sec.intro %}<p>{{ para }}</p>
{% endfor %}{% for t in sec.tables %}<h3>{{ t.title }}</h3>
{{ t.html }}{% if t.note %}<p class="meta">{{ t.note }}</p>{% endif %}
{% endfor %}{% for f in sec.figures %}<figure id="{{ sec.id }}-figure-{{ loop.index }}">
<h3>{{ f.title }}</h3>
<img src="{{ f.png_uri }}" alt="{{ f.title }}">
<figcaption>{{ f.caption }}</figcaption>
</figure>
{% endfor %}{% if sec.notes %}<ul>{% for n in sec.notes %}<li>{{ n }}</li>{% endfor %}</ul>
{% endif %}{% endfor %}
<h2 id="figures">Figures</h2>
{% for f in figures %}<figure id="figure-{{ loop.index }}">
<h3>{{ loop.index }}. {{ f.title }}</h3>
<img src="{{ f.png_uri }}" alt="{{ f.title }}">
<figcaption>{{ f.caption }}{% if f.svg_uri %} <a download="figure-{{ loop.index }}.svg"
 href="{{ f.svg_uri }}">SVG</a>{% endif %}</figcaption>
</figure>
{% else %}<p>No figure in this run (see the notes on this run).</p>
{% endfor %}

<h2 id="study">Study summary</h2>
{% if summary %}<p>{{ summary.report_line }}</p>
<h3>Counts</h3>{{ summary_html.counts }}
<h3>Sessions per system &times; topic</h3>{{ summary_html.design }}
<h3>Sessions issuing exactly n queries (J&auml;rvelin et al. 2008, Table 2)</h3>
{{ summary_html.queries_per_session }}
<h3>Judgment coverage of logged results</h3>{{ summary_html.coverage }}
{% else %}<p>No study summary.</p>{% endif %}

<h2 id="validation">Validation</h2>
<p class="{{ 'ok' if validation_ok else 'bad' }}">{{ validation_line }}</p>
{% if rejects_html %}<h3>Rejected sessions</h3>{{ rejects_html }}{% endif %}
</body>
</html>
"""


def _flat(df: pd.DataFrame, *, index: bool) -> pd.DataFrame:
    """One header row: the index becomes the first column (named after it), no columns name.

    ``DataFrame.to_html`` writes a second header row for the index name and the
    columns name (``topic`` over ``system``); a report table has one.
    """
    out = df.copy()
    if index:
        names = [n if n is not None else "" for n in out.index.names]
        label = " / ".join(str(n) for n in names if n) or ""
        if out.columns.name:
            label = f"{label} \\ {out.columns.name}" if label else str(out.columns.name)
        out.index = out.index.set_names([None] * out.index.nlevels)
        out = out.reset_index(names=[label] if out.index.nlevels == 1 else None)
    out.columns = [str(c) for c in out.columns]
    out.columns.name = None
    return out


def _table_html(
    df: pd.DataFrame, *, index: bool = False, digits: int = 3, alpha: float | None = None
) -> str:
    """A table as HTML: floats to ``digits`` decimals, p-values in the one APA format.

    Every p-value column (:func:`~sessionval.output.pvalues.is_p_column`) of every
    section is written by :func:`~sessionval.output.pvalues.format_p`.
    """

    def fmt(x: float) -> str:
        return "" if pd.isna(x) else f"{x:.{digits}f}"

    flat = _flat(df, index=index)
    for col in flat.columns:
        if is_p_column(str(col)) and pd.api.types.is_numeric_dtype(flat[col].dtype):
            flat[col] = [format_p(float(v), alpha=alpha) for v in flat[col]]
    return flat.to_html(
        index=False, border=0, float_format=fmt, na_rep="", escape=True, classes="data"
    )


def unequal_counts(scores: pd.DataFrame) -> tuple[str, ...]:
    """Notes for a score table whose measures are averaged over different numbers of sessions.

    A session without a value is not counted (nsDCG where the ideal is 0, e.g. a topic
    without relevant judged documents), so a system's nsDCG may average fewer sessions
    than its sDCG; the note says so, per system.

    Examples
    --------
    >>> t = pd.DataFrame({"system": ["A"] * 3, "measure": ["nsdcg", "sdcg", "n_queries"],
    ...                   "n": [116, 133, 133]})
    >>> print(unequal_counts(t)[0][:80])
    A: the scores are averaged over different numbers of sessions: nsdcg over 116; s
    >>> print(unequal_counts(t)[0][80:122])
    dcg, n_queries over 133. A session without
    """
    notes = []
    for system, part in scores.groupby("system", sort=True):
        if part["n"].nunique() < 2:
            continue
        by_n = part.groupby("n", sort=True)["measure"].agg(list)
        counts = "; ".join(f"{', '.join(map(str, ms))} over {n}" for n, ms in by_n.items())
        notes.append(
            f"{system}: the scores are averaged over different numbers of sessions: {counts}. "
            "A session without a value is not counted (a topic without judgments gives no "
            "score; nsDCG and nDCG are undefined where the ideal is 0, e.g. a topic without "
            "judged relevant documents)."
        )
    return tuple(notes)


def unjudged_sessions(per_session: pd.DataFrame) -> tuple[str, ...]:
    """The note on the sessions that have no score because their topic has no judgments.

    Such a session's sDCG is missing (NaN), not 0 (:func:`sessionval.evaluation.session.evaluate`),
    so it is left out of every mean of a measure that needs judgments; the note says how
    many sessions, on which topics.

    Examples
    --------
    >>> nan = float("nan")
    >>> t = pd.DataFrame({"topic_id": ["A", "B", "B"], "sdcg": [1.0, nan, nan]})
    >>> print(unjudged_sessions(t)[0])
    2 sessions on 1 topic without judgments (B): no score, left out of every mean of a \
measure that needs judgments.
    """
    if "sdcg" not in per_session.columns or "topic_id" not in per_session.columns:
        return ()
    gone = per_session["sdcg"].isna().to_numpy()
    if not gone.any():
        return ()
    topics = sorted(pd.unique(per_session["topic_id"].astype(str).to_numpy()[gone]))
    return unjudged_note(int(gone.sum()), topics)


def unjudged_note(n: int, topics: Sequence[str]) -> tuple[str, ...]:
    """:func:`unjudged_sessions`' note from the count of such sessions and their sorted topics."""
    if not n:
        return ()
    shown = ", ".join(topics[:10]) + (", ..." if len(topics) > 10 else "")
    return (
        f"{n} session{'s' if n != 1 else ''} on {len(topics)} "
        f"topic{'s' if len(topics) != 1 else ''} without judgments ({shown}): no score, "
        "left out of every mean of a measure that needs judgments.",
    )


def render_report(
    *,
    per_session: pd.DataFrame | None = None,
    measures: Sequence[str] = (),
    parameters: Mapping[str, object],
    scores: pd.DataFrame | None = None,
    figures: Sequence[ReportFigure] = (),
    summary: StudySummary | None = None,
    validation_line: str = "",
    validation_ok: bool = True,
    rejects: pd.DataFrame | None = None,
    paired: pd.DataFrame | None = None,
    title: str = "sessionval report",
    source: str = "",
    confidence: float = 0.95,
    sections: Sequence[ReportSection] = (),
    score_notes: Sequence[str] = (),
) -> str:
    """Render the self-contained HTML report.

    Parameters
    ----------
    per_session
        One row per session with ``system_id`` and the ``measures`` (used when no
        ``scores`` are given).
    measures
        Score columns shown in the per-system table.
    parameters
        The configuration actually used (name -> value), shown with its meaning
        (:func:`sessionval.output.parameters.parameter_docs`: the configured formulas).
    scores
        The per-system score table (:func:`sessionval.analysis.stats.score_table`);
        default: computed from ``per_session`` and ``measures``.
    figures
        Figures to embed, in order.
    summary
        The study summary (:func:`sessionval.analysis.summary.summarize`).
    validation_line, validation_ok
        The loader's one-line outcome and whether it is clean.
    rejects
        Rejected sessions with reasons (lenient mode), shown as a table.
    paired
        Deprecated: a table of :func:`paired_comparison` (shown as a section of its own).
        The run shows its comparison of systems once, in the statistics section.
    title, source
        Heading and where the study came from.
    confidence
        Level of the confidence intervals.
    sections
        Further sections (:class:`ReportSection`), rendered in order after the scores.
    score_notes
        Remarks under the score table (:func:`unequal_counts`).

    Returns
    -------
    str
        The HTML document.
    """
    import jinja2
    from markupsafe import Markup

    from .._version import __version__

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(TEMPLATE)
    if scores is None:
        if per_session is None:
            raise SessionvalError("render_report: give the per-session table or the scores")
        scores = score_table(per_session, measures=measures, confidence=confidence)
    params = [
        {"name": p.name, "value": p.value, "meaning": p.meaning} for p in parameter_docs(parameters)
    ]
    summary_html: dict[str, Markup] = {}
    if summary is not None:
        summary_html = {
            "counts": Markup(_table_html(summary.counts)),
            "design": Markup(_table_html(summary.design, index=True)),
            "queries_per_session": Markup(
                _table_html(summary.queries_per_session, index=True, digits=2)
            ),
            "coverage": Markup(_table_html(summary.coverage, index=True)),
        }
    rejects_html = (
        Markup(_table_html(rejects.head(500))) if rejects is not None and len(rejects) else ""
    )
    if paired is not None:
        warnings.warn(
            "render_report(paired=...) is deprecated: the run's comparison of systems is "
            "the statistics section (sessionval.workflow.statistics); pass it in sections",
            DeprecationWarning,
            stacklevel=2,
        )
        sections = [_paired_section(paired), *sections]
    return template.render(
        title=title,
        version=__version__,
        generated=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        source=source,
        parameters=params,
        score_html=Markup(_table_html(scores, digits=4)),
        ci_percent=f"{100 * confidence:g}",
        figures=list(figures),
        summary=summary,
        summary_html=summary_html,
        validation_line=validation_line or "no problems found",
        validation_ok=validation_ok,
        rejects_html=rejects_html,
        sections=[_section_view(sec, Markup) for sec in sections],
        score_notes=list(score_notes),
    )


def _section_view(sec: ReportSection, markup: Any) -> dict[str, Any]:
    """A section as the template reads it: tables already rendered to (escaped) HTML."""
    return {
        "id": sec.id,
        "title": sec.title,
        "intro": sec.intro,
        "tables": [
            {
                "title": t.title,
                "note": t.note,
                "html": markup(_table_html(t.table, index=t.index, digits=t.digits, alpha=t.alpha)),
            }
            for t in sec.tables
        ],
        "figures": sec.figures,
        "notes": sec.notes,
    }


def _paired_section(paired: pd.DataFrame) -> ReportSection:
    """A table of :func:`paired_comparison` as a section (the deprecated ``paired=``)."""
    table = paired.rename(columns={"mean_diff": "diff (a − b)"})
    return ReportSection(
        id="paired",
        title="Paired comparison",
        intro=("diff (a − b) = mean_a − mean_b; n_pairs: the blocks compared.",),
        tables=(ReportTable("Pairs of systems", table),),
    )


def write_report(path: str | Path, **kwargs: Any) -> Path:
    """Render with :func:`render_report` (same keyword arguments) and write UTF-8 HTML to ``path``.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    p = Path(path)
    text = render_report(**kwargs)
    with writing(p):
        p.write_text(text, encoding="utf-8")
    return p
