"""The HTML report: self-contained, statistics right, opened in a real headless browser."""

from __future__ import annotations

import base64
import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from sessionval.analysis.stats import paired_comparison, score_table
from sessionval.errors import SessionvalError
from sessionval.output.report import ReportFigure, ReportSection, ReportTable, render_report
from tests.analysis.scores import two_system_sessions


def _png(color: str) -> tuple[bytes, bytes]:
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2, 3], [1, 4, 9], color=color)
    png, svg = io.BytesIO(), io.BytesIO()
    fig.savefig(png, format="png", dpi=50)
    fig.savefig(svg, format="svg")
    plt.close(fig)
    return png.getvalue(), svg.getvalue()


def _report(tmp_path):
    p1, s1 = _png("#0072B2")
    p2, _ = _png("#D55E00")
    figs = [
        ReportFigure("Session curves <b>", p1, caption="b=2, bq=4", svg=s1),
        ReportFigure("Last vs non-last", p2, caption="x"),
    ]
    ps = two_system_sessions()
    html = render_report(
        per_session=ps,
        measures=["nsdcg", "sdcg"],
        parameters={"b": 2.0, "bq": 4.0, "cutoff": 10, "gains": "0-1-10-100"},
        figures=figs,
        validation_line="12 records read = 12 sessions accepted + 0 rejected",
        title="Test study",
    )
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    return html, path, figs


def test_analysis_report_self_contained(tmp_path):
    html, _, figs = _report(tmp_path)
    # no external resource of any kind
    assert not re.search(r"""(src|href)=["'](?!data:|#)""", html)
    assert "<script" not in html
    # titles are escaped; images are the PNGs, byte for byte
    assert "Session curves &lt;b&gt;" in html
    uris = re.findall(r'<img src="data:image/png;base64,([^"]+)"', html)
    assert [base64.b64decode(u) for u in uris] == [f.png for f in figs]
    assert 'href="data:image/svg+xml;base64,' in html
    # parameters and the score table
    assert "<code>bq</code>" in html and "0-1-10-100" in html
    assert html.count("<tr>") >= 4
    with pytest.raises(SessionvalError, match="not PNG"):
        ReportFigure("x", b"GIF89a")


def test_analysis_report_in_headless_browser(tmp_path, browser):
    _, path, figs = _report(tmp_path)
    results = browser.probe(path)
    assert len(results) == len(figs)
    assert all(r.startswith("ok:") for r in results), results
    shot = browser.screenshot(path, tmp_path / "shot.png")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG")
    img = plt.imread(io.BytesIO(data))
    # the page rendered something (not a blank white screenshot)
    assert img.shape[0] > 500 and float(np.std(img[..., :3])) > 0.01


def test_analysis_browser_probe_detects_broken_image(tmp_path, browser):
    # the probe itself must be able to fail: a corrupt data URI is reported as broken
    good, _ = _png("#000000")
    page = tmp_path / "broken.html"
    page.write_text(
        "<html><body>"
        f'<img src="data:image/png;base64,{base64.b64encode(good).decode()}">'
        '<img src="data:image/png;base64,AAAA"></body></html>',
        encoding="utf-8",
    )
    results = browser.probe(page)
    assert results[0].startswith("ok:") and results[1] == "broken"


def test_analysis_report_renders_given_scores():
    ps = two_system_sessions()
    scores = score_table(ps, measures=["sdcg"])
    html = render_report(scores=scores[scores["system"] == "S2"], parameters={"b": 2.0})
    assert "S2" in html and "<td>S1</td>" not in html
    with pytest.raises(SessionvalError, match="per-session table or the scores"):
        render_report(parameters={})


def test_report_sections_render_in_order_and_escape(tmp_path):
    """Sections built by the workflow render after the scores, escaped, with their anchors."""
    table = pd.DataFrame({"measure": ["<b>nsdcg</b>"], "value": [0.12345]})
    sections = [
        ReportSection(
            "stats-a", "First", intro=("How: <script>",), tables=(ReportTable("T", table),)
        ),
        ReportSection("second", "Second", notes=("figure 4 skipped: no sessions",)),
    ]
    html = render_report(
        per_session=two_system_sessions(), measures=["nsdcg"], parameters={}, sections=sections
    )
    assert html.index('id="stats-a"') < html.index('id="second"') < html.index('id="figures"')
    assert html.index('id="scores"') < html.index('id="stats-a"')
    assert '<a href="#stats-a">First</a>' in html
    assert "How: &lt;script&gt;" in html and "&lt;b&gt;nsdcg&lt;/b&gt;" in html
    assert "0.1235" in html and "<li>figure 4 skipped: no sessions</li>" in html
    with pytest.raises(SessionvalError, match="HTML anchor"):
        ReportSection("bad id", "x")


def test_report_tables_have_one_header_row():
    """Issue 12 item 8: crosstabs rendered with pandas' two-row header (columns and index name)."""
    design = pd.crosstab(
        pd.Series(["S1", "S2"], name="system"), pd.Series(["A", "B"], name="topic")
    )
    html = render_report(
        per_session=two_system_sessions(),
        measures=["nsdcg"],
        parameters={},
        sections=[
            ReportSection("design", "Design", tables=(ReportTable("T", design, index=True),))
        ],
    )
    part = html[html.index('id="design"') :]
    table = part[part.index("<table") : part.index("</table>")]
    head = table[table.index("<thead>") : table.index("</thead>")]
    assert head.count("<tr") == 1
    assert "<th>system \\ topic</th>" in head and "<th>A</th>" in head
    assert "<td>S1</td>" in table


def test_report_formats_every_p_value_column_one_way():
    """APA style in every section's table; the numbers elsewhere keep their decimals."""
    table = pd.DataFrame(
        {
            "a": ["S1", "S1", "S2"],
            "diff": [0.1234, -0.2, 0.0],
            "p": [1.5e-5, 0.0234, float("nan")],
            "p_adjusted": [4.5e-5, 0.0496, 1.0],
            "pearson_p": [0.5, 0.01, 0.2],
        }
    )
    html = render_report(
        per_session=two_system_sessions(),
        measures=["nsdcg"],
        parameters={},
        sections=[ReportSection("s", "S", tables=(ReportTable("T", table, alpha=0.05),))],
    )
    body = html[html.index('id="s"') :]
    cells = re.findall(r"<td>([^<]*)</td>", body)
    assert cells[:5] == ["S1", "0.1234", "&lt; .001", "&lt; .001", ".500"]
    assert cells[5:10] == ["S1", "-0.2000", ".023", ".0496", ".010"]  # .0496 stays below .05
    assert cells[10:15] == ["S2", "0.0000", "", "1.000", ".200"]
    assert "0.0000" not in "".join(cells[2:5] + cells[7:10])


def test_report_paired_argument_is_deprecated_and_shown_once():
    ps = two_system_sessions()
    with pytest.warns(DeprecationWarning, match="compare_per_session"):
        paired = paired_comparison(ps, measures=["nsdcg"], a="S1", b="S2")
    with pytest.warns(DeprecationWarning, match="paired"):
        html = render_report(per_session=ps, measures=["nsdcg"], parameters={}, paired=paired)
    assert html.count("Paired comparison") == 2  # its navigation link and its heading
    assert "diff (a − b)" in html and "by searcher" not in html
