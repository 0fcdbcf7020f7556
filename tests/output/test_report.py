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
from scipy import stats

from sessionval.analysis.stats import paired_comparison, score_table
from sessionval.errors import SessionvalError
from sessionval.output.report import ReportFigure, render_report


def _png(color: str) -> tuple[bytes, bytes]:
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2, 3], [1, 4, 9], color=color)
    png, svg = io.BytesIO(), io.BytesIO()
    fig.savefig(png, format="png", dpi=50)
    fig.savefig(svg, format="svg")
    plt.close(fig)
    return png.getvalue(), svg.getvalue()


def _per_session() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    users = np.repeat([f"u{i}" for i in range(6)], 2)
    systems = np.tile(["S1", "S2"], 6)
    return pd.DataFrame(
        {
            "session_id": [f"s{i}" for i in range(12)],
            "user_id": users,
            "topic_id": np.tile(["A", "B", "B", "A"], 3),
            "system_id": systems,
            "nsdcg": rng.uniform(0, 1, 12),
            "sdcg": rng.uniform(0, 50, 12),
        }
    )


def test_analysis_score_table_matches_scipy():
    ps = _per_session()
    t = score_table(ps, measures=["nsdcg", "sdcg"], confidence=0.9)
    row = t[(t["system"] == "S2") & (t["measure"] == "sdcg")].iloc[0]
    x = ps.loc[ps["system_id"] == "S2", "sdcg"].to_numpy()
    lo, hi = stats.t.interval(0.9, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert row["n"] == 6
    assert row["mean"] == pytest.approx(x.mean())
    assert row["sd"] == pytest.approx(x.std(ddof=1))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi))
    with pytest.raises(SessionvalError, match="confidence"):
        score_table(ps, measures=["nsdcg"], confidence=1.5)
    with pytest.raises(SessionvalError, match="not in the per-session table"):
        score_table(ps, measures=["nope"])


def test_analysis_paired_comparison_matches_scipy():
    ps = _per_session()
    res = paired_comparison(ps, measures=["nsdcg"], a="S1", b="S2").iloc[0]
    a = ps[ps["system_id"] == "S1"].sort_values("user_id")["nsdcg"].to_numpy()
    b = ps[ps["system_id"] == "S2"].sort_values("user_id")["nsdcg"].to_numpy()
    assert res["n_pairs"] == 6
    assert res["p_t"] == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert res["p_wilcoxon"] == pytest.approx(stats.wilcoxon(a, b).pvalue)
    with pytest.raises(SessionvalError, match="system 'S9' not found"):
        paired_comparison(ps, measures=["nsdcg"], a="S1", b="S9")


def _report(tmp_path):
    p1, s1 = _png("#0072B2")
    p2, _ = _png("#D55E00")
    figs = [
        ReportFigure("Session curves <b>", p1, caption="b=2, bq=4", svg=s1),
        ReportFigure("Last vs non-last", p2, caption="x"),
    ]
    ps = _per_session()
    html = render_report(
        per_session=ps,
        measures=["nsdcg", "sdcg"],
        parameters={"b": 2.0, "bq": 4.0, "cutoff": 10, "gains": "0-1-10-100"},
        figures=figs,
        validation_line="12 records read = 12 sessions accepted + 0 rejected",
        paired=paired_comparison(ps, measures=["nsdcg"], a="S1", b="S2"),
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
