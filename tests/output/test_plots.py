"""Figures drawn headless (Agg) and inspected: lines, labels, legends, plotted values."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest

from sessionval.analysis import curves as ag
from sessionval.analysis.rank_curves import cg_curves
from sessionval.errors import SessionvalError
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.io.study import load_study
from sessionval.output import plots
from sessionval.synth import write_study


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    write_study(root, n_sessions=24, seed=11, formats="jsonl")
    loaded = load_study(root, qrels=root / "qrels.txt")
    return evaluate(loaded.frame, loaded.judgments, SessionConfig())


def _data_lines(ax):
    return [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


PARAMS = SessionConfig(gains="0-1-10-100").model_dump(mode="json")  # as evaluated: gains fitted


def test_analysis_fig1_query_curves(ev):
    table = ag.query_curves(ev, compare="last", ranks=100)
    ax = plots.plot_query_curves(table, params=PARAMS)
    lines = _data_lines(ax)
    systems = sorted(table["system_id"].astype(str).unique())
    assert len(lines) == 2 * len(systems)
    assert _legend(ax) == [f"{s} {g}" for s in systems for g in ("last", "non-last")]
    assert ax.get_xlabel() == "rank" and "sDCG" in ax.get_ylabel()
    assert "b=2" in ax.get_title() and "bq=4" in ax.get_title() and "X=10" in ax.get_title()
    assert "gains 0-1-10-100" in ax.get_title()
    sel = table[table["measure"] == "sdcg_q"]
    for line in lines:
        s, g = line.get_label().split(" ", 1)
        part = sel[(sel["system_id"].astype(str) == s) & (sel["group"] == g)].sort_values("rank")
        np.testing.assert_array_equal(line.get_xdata(), part["rank"].to_numpy(float))
        np.testing.assert_array_equal(line.get_ydata(), part["value"].to_numpy())
    # the colour-blind-safe palette, one colour per system
    assert {ln.get_color() for ln in lines} <= set(plots.PALETTE)
    assert len({ln.get_color() for ln in lines}) == len(systems)


def test_analysis_fig2_session_curves(ev):
    table = ag.session_curves(ev)
    ax = plots.plot_session_curves(table, cutoff=10, params=PARAMS)
    lines = _data_lines(ax)
    assert [ln.get_label() for ln in lines] == sorted(table["system_id"].astype(str).unique())
    assert _legend(ax) == [ln.get_label() for ln in lines]
    assert ax.get_ylabel() == "mean nsDCG"
    assert ax.get_xlabel() == "position in concatenated top-10 results"
    nsd = table[table["measure"] == "nsdcg"]
    for line in lines:
        part = nsd[nsd["system_id"].astype(str) == line.get_label()].sort_values("position")
        np.testing.assert_array_equal(line.get_ydata(), part["value"].to_numpy())
    n_q = int(np.ceil(table["position"].max() / 10))
    boundaries = [ln for ln in ax.get_lines() if ln.get_label() == "_query boundary"]
    assert len(boundaries) == n_q - 1
    top = ax.child_axes[0]
    assert [t.get_text() for t in top.get_xticklabels()] == [f"Q{q}" for q in range(1, n_q + 1)]


def test_analysis_fig3_subsets(ev):
    topic = ev.frame.sessions["topic_id"].astype(str).to_numpy()
    where = topic == "A"
    both = pd.concat(
        [
            ag.session_curves(ev, where=where).assign(subset="all"),
            ag.session_curves(ev, where=where, min_queries=2).assign(subset=">= 2 queries"),
        ],
        ignore_index=True,
    )
    ax = plots.plot_session_curves(both, cutoff=10, params=PARAMS, normalised=False, style="subset")
    lines = _data_lines(ax)
    expected = both[["system_id", "subset"]].astype(str).drop_duplicates()
    assert len(lines) == len(expected)
    assert ax.get_ylabel() == "mean sDCG"
    raw = both[both["measure"] == "sdcg"]
    for line in lines:
        s, sub = line.get_label().split(" ", 1)
        part = raw[(raw["system_id"].astype(str) == s) & (raw["subset"] == sub)]
        np.testing.assert_array_equal(line.get_ydata(), part.sort_values("position")["value"])
    styles = {ln.get_label().split(" ", 1)[1]: ln.get_linestyle() for ln in lines}
    assert styles["all"] != styles[">= 2 queries"]


def test_analysis_fig4_individual_sessions(ev):
    sessions = ev.frame.sessions
    where = (sessions["system_id"].astype(str) == "S1").to_numpy()
    table = ag.individual_curves(ev, where=where)
    ax = plots.plot_individual_sessions(table, cutoff=10, params=PARAMS)
    ids = sessions.loc[where, "session_id"].astype(str).tolist()
    session_lines = [ln for ln in ax.get_lines() if ln.get_label().startswith("_session ")]
    assert sorted(ln.get_label().removeprefix("_session ") for ln in session_lines) == sorted(ids)
    assert _legend(ax) == ["searcher stopped"]
    # stopping points: at the end of each session's last query, at its final sDCG
    stops = ax.collections[0].get_offsets()
    ps = ev.per_session().set_index(ev.per_session()["session_id"].astype(str))
    expected = sorted((float(ps.loc[s, "n_positions"]), float(ps.loc[s, "sdcg"])) for s in ids)
    got = sorted(map(tuple, np.asarray(stops, dtype=float).tolist()))
    np.testing.assert_allclose(np.array(got), np.array(expected))
    sdcg = table[table["measure"] == "sdcg"]
    for line in session_lines:
        sid = line.get_label().removeprefix("_session ")
        part = sdcg[sdcg["session_id"].astype(str) == sid].sort_values("position")
        np.testing.assert_array_equal(line.get_ydata(), part["value"].to_numpy())
        # held after stopping: constant to the longest session
        tail = part[part["stopped"]]["value"].to_numpy()
        np.testing.assert_allclose(tail, ps.loc[sid, "sdcg"], rtol=1e-12)


@pytest.mark.parametrize("measure", ["CG", "DCG", "nCG", "nDCG"])
def test_analysis_cg_figures(ev, measure):
    table = cg_curves(ev, ranks=30)
    part = table[table["measure"] == measure]
    ax = plots.plot_cg_curves(part, measure=measure, params={"b": 2.0, "gains": "0-1-10-100"})
    lines = _data_lines(ax)
    assert _legend(ax) == ["S1", "S2", "ideal"]
    assert ax.get_ylabel() == f"mean {measure}" and ax.get_xlabel() == "rank"
    assert "b=2" in ax.get_title() and "gains 0-1-10-100" in ax.get_title()
    for line in lines:
        rows = part[part["system_id"] == line.get_label()].sort_values("rank")
        np.testing.assert_array_equal(line.get_ydata(), rows["value"].to_numpy())
    ideal = lines[-1]
    assert ideal.get_linestyle() == "--" and ideal.get_color() == "#000000"


def test_analysis_cg_curves_against_loop(ev):
    """An independent per-query loop gives the same mean vectors (000, section 2)."""
    depth = 25
    table = cg_curves(ev, ranks=depth)
    frame = ev.frame
    res = frame.results
    rows_kept, gains = ev.row_gains()
    gain_of = dict(zip(rows_kept.tolist(), gains.tolist(), strict=True))
    qsys = frame.sessions["system_id"].astype(str).to_numpy()[ev.query_session]
    ideal, query_ideal = ev.ideal_source, ev.query_ideal
    disc = 1 + np.log(np.arange(1, depth + 1)) / np.log(2.0)  # jk2008, b = 2
    sums: dict[tuple[str, str], list[np.ndarray]] = {}
    for q in range(frame.n_queries):
        rows = np.flatnonzero(res["query_idx"].to_numpy() == q)
        g = np.zeros(depth)
        for r in rows:
            rank = int(res["rank"].iloc[r])
            if rank <= depth:
                g[rank - 1] = gain_of.get(int(r), 0.0)
        ig = ideal.dense([query_ideal[q]], depth=depth)[0]
        cg, dcg = np.cumsum(g), np.cumsum(g / disc)
        icg, idcg = np.cumsum(ig), np.cumsum(ig / disc)
        s = str(qsys[q])
        sums.setdefault((s, "CG"), []).append(cg)
        sums.setdefault((s, "DCG"), []).append(dcg)
        if icg[0] > 0:
            sums.setdefault((s, "nCG"), []).append(cg / icg)
            sums.setdefault((s, "nDCG"), []).append(dcg / idcg)
    for (s, m), vecs in sums.items():
        rows = table[(table["system_id"] == s) & (table["measure"] == m)].sort_values("rank")
        np.testing.assert_allclose(rows["value"].to_numpy(), np.mean(vecs, axis=0), rtol=1e-12)
        assert int(rows["n_queries"].iloc[0]) == len(vecs)


def test_analysis_save_figure_formats(ev, tmp_path):
    ax = plots.plot_session_curves(ag.session_curves(ev), cutoff=10, params=PARAMS)
    written = plots.save_figure(ax, tmp_path / "fig2")
    assert [p.suffix for p in written] == [".png", ".svg", ".pdf"]
    assert written[0].read_bytes().startswith(b"\x89PNG")
    assert b"<svg" in written[1].read_bytes()[:500]
    assert written[2].read_bytes().startswith(b"%PDF")
    # no creation date in the metadata (files of a re-run differ only where the data do)
    assert b"<dc:date>" not in written[1].read_bytes()
    # paper-column size when the function makes the figure
    w, h = ax.get_figure().get_size_inches()
    assert (w, h) == plots.COLUMN_FIGSIZE


def test_reduced_png_is_the_written_png_at_half_the_resolution(ev, tmp_path):
    """The report's PNG: the 300-dpi file reduced by 2 is the size of a 150-dpi drawing."""
    import io

    from PIL import Image

    ax = plots.plot_session_curves(ag.session_curves(ev), cutoff=10, params=PARAMS)
    (written,) = plots.save_figure(ax, tmp_path / "fig2", formats=("png",), dpi=300)
    small = plots.reduced_png(written.read_bytes(), 2)
    drawn = plots.figure_bytes(ax, "png", dpi=150)
    with Image.open(io.BytesIO(small)) as a, Image.open(io.BytesIO(drawn)) as b:
        assert a.size == b.size
        big = Image.open(written)
        assert (2 * a.size[0], 2 * a.size[1]) == big.size
        # each pixel the mean of its 2 x 2 square of the file
        x, y = a.size[0] // 2, a.size[1] // 2
        square = [big.getpixel((2 * x + i, 2 * y + j)) for i in (0, 1) for j in (0, 1)]
        mean = tuple(round(sum(p[k] for p in square) / 4) for k in range(4))
        assert all(abs(u - v) <= 1 for u, v in zip(a.getpixel((x, y)), mean, strict=True))
    assert plots.reduced_png(written.read_bytes(), 2) == small  # the same bytes every time
    with pytest.raises(SessionvalError, match="not PNG data"):
        plots.reduced_png(b"%PDF-1.4", 2)
    with pytest.raises(SessionvalError, match="factor must be >= 1"):
        plots.reduced_png(small, 0)


def test_a_best_legend_is_searched_once_and_drawn_where_each_format_alone_puts_it(
    ev, tmp_path, monkeypatch
):
    from matplotlib.legend import Legend

    def drawn():
        return plots.plot_query_curves(ag.query_curves(ev, ranks=20), params=PARAMS)

    # each format saved alone: the legend's own search in that format
    alone = {
        fmt: plots.save_figure(drawn(), tmp_path / f"alone_{fmt}", formats=(fmt,))[0].read_bytes()
        for fmt in ("svg", "pdf")
    }
    searches = []
    search = Legend._find_best_position

    def counted(self, *args):
        searches.append(self)
        return search(self, *args)

    monkeypatch.setattr(Legend, "_find_best_position", counted)
    plots.save_figure(drawn(), tmp_path / "png", formats=("png",))
    png_alone = len(searches)
    searches.clear()
    ax = drawn()
    written = plots.save_figure(ax, tmp_path / "all", formats=("png", "svg", "pdf"))
    assert [p.read_bytes() for p in written[1:]] == [alone["svg"], alone["pdf"]]
    # the PNG's search only; the SVG and the PDF draw it where it was found
    assert len(searches) == png_alone > 0
    searches.clear()
    plots.figure_bytes(ax, "svg")  # after saving, the legend is "best" again
    assert ax.get_legend()._loc == 0 and searches


def test_analysis_plot_errors():
    with pytest.raises(SessionvalError, match="not in the table"):
        plots.plot_query_curves(pd.DataFrame({"rank": [1], "value": [1.0]}))
    empty = pd.DataFrame({"position": [], "value": [], "system_id": []})
    with pytest.raises(SessionvalError, match="empty"):
        plots.plot_session_curves(empty, cutoff=10)
    t = pd.DataFrame({"position": [1], "value": [1.0], "system_id": ["S"], "measure": ["x"]})
    with pytest.raises(SessionvalError, match="no rows with measure 'nsdcg'"):
        plots.plot_session_curves(t, cutoff=10)
    with pytest.raises(SessionvalError, match="unknown image format"):
        plots.figure_bytes(plots.plot_session_curves(t, cutoff=10, measure="x"), "gif")


def test_analysis_existing_axes_used():
    from matplotlib.figure import Figure

    fig = Figure()
    target = fig.add_subplot()
    t = pd.DataFrame(
        {"rank": [1, 2], "value": [1.0, 3.0], "system_id": ["S", "S"], "group": ["last", "last"]}
    )
    assert plots.plot_query_curves(t, ax=target) is target


def test_analysis_saved_layout_keeps_text_inside(ev, tmp_path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    ax = plots.plot_session_curves(ag.session_curves(ev), cutoff=10, params=PARAMS)
    plots.save_figure(ax, tmp_path / "f", formats=("png",))
    fig = ax.get_figure()
    fig.set_layout_engine("none")  # inspect the layout the file was saved with
    renderer = FigureCanvasAgg(fig).get_renderer()
    box = fig.bbox
    for text in (ax.title, ax.xaxis.label, ax.yaxis.label, *ax.child_axes[0].get_xticklabels()):
        ext = text.get_window_extent(renderer)
        assert ext.x0 >= box.x0 - 1 and ext.x1 <= box.x1 + 1, text.get_text()
        assert ext.y0 >= box.y0 - 1 and ext.y1 <= box.y1 + 1, text.get_text()


def test_saving_lays_out_once_and_draws_once_per_format(ev, tmp_path, monkeypatch):
    """The layout engine runs once, not in a whole draw of its own: one draw per format.

    (With any layout engine left on the figure, even ``"none"``'s placeholder,
    matplotlib draws it once more without rendering before each format.)
    """
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    ax = plots.plot_session_curves(ag.session_curves(ev), cutoff=10, params=PARAMS)
    calls: list[str] = []
    draw, execute = Figure.draw, ConstrainedLayoutEngine.execute
    monkeypatch.setattr(Figure, "draw", lambda self, r: (calls.append("draw"), draw(self, r))[1])
    monkeypatch.setattr(
        ConstrainedLayoutEngine,
        "execute",
        lambda self, fig: (calls.append("layout"), execute(self, fig))[1],
    )
    plots.save_figure(ax, tmp_path / "f", formats=("png", "svg", "pdf"))
    assert calls == ["layout", "draw", "draw", "draw"]
    assert isinstance(ax.get_figure().get_layout_engine(), ConstrainedLayoutEngine)  # restored


def test_rating_scatter_draws_every_pair_with_its_points_and_means():
    from sessionval.analysis.correlations import rating_correlations

    ps = pd.DataFrame(
        {
            "nsdcg": [0.1, 0.5, 0.3, np.nan, 0.9],
            "sdcg": [1.0, 5.0, 2.0, 4.0, 9.0],
            "rating_satisfaction": [1.0, 3.0, 3.0, 4.0, 5.0],
            "rating_difficulty": [5.0, 2.0, np.nan, 2.0, 1.0],
        }
    )
    corr = rating_correlations(ps)
    fig = plots.plot_rating_scatter(
        ps,
        measures=["nsdcg", "sdcg"],
        ratings=["rating_satisfaction", "rating_difficulty"],
        correlations=corr,
        params=PARAMS,
    )
    axes = np.array(fig.axes).reshape(2, 2)
    nsdcg_sat = axes[0, 0]
    points = nsdcg_sat.collections[0].get_offsets()
    # sessions with both values, drawn as they are (no jitter): the NaN score is left out
    assert points.tolist() == [[1.0, 0.1], [3.0, 0.5], [3.0, 0.3], [5.0, 0.9]]
    (means,) = nsdcg_sat.get_lines()
    assert means.get_xdata().tolist() == [1.0, 3.0, 5.0]
    assert means.get_ydata() == pytest.approx([0.1, 0.4, 0.9])
    rho = corr.set_index(["measure", "rating"]).loc[("sdcg", "rating_difficulty"), "spearman_rho"]
    assert axes[1, 1].get_title().startswith(f"rho={rho:.3f}")
    assert axes[1, 0].get_xlabel() == "satisfaction" and axes[0, 0].get_ylabel() == "nsdcg"
    with pytest.raises(SessionvalError, match="not in the table"):
        plots.plot_rating_scatter(ps, measures=["nope"], ratings=["rating_difficulty"])


# ---------------------------------------------------------------------------------------------
# issue 10 (F10/T6, determinism) and issue 12 (item 8): ids, colours, legends, query labels


def _curves(systems: list[str], *, order: list[str] | None = None) -> pd.DataFrame:
    rows = [(s, p, 0.1 * i + p) for i, s in enumerate(systems) for p in range(1, 21)]
    table = pd.DataFrame(rows, columns=["system_id", "position", "value"])
    table["system_id"] = pd.Categorical(table["system_id"], categories=order or systems)
    return table


def test_colours_and_legend_order_follow_the_system_ids():
    first = plots.plot_session_curves(_curves(["S2", "S1"]), cutoff=10, measure=None)
    second = plots.plot_session_curves(_curves(["S1", "S2"]), cutoff=10, measure=None)
    for ax in (first, second):
        assert _legend(ax) == ["S1", "S2"]
        colours = {ln.get_label(): ln.get_color() for ln in _data_lines(ax)}
        assert colours == {"S1": plots.PALETTE[0], "S2": plots.PALETTE[1]}
    # a figure showing some systems colours them as the full set does
    some = _curves(["S3"], order=["S1", "S2", "S3"])
    (line,) = _data_lines(plots.plot_session_curves(some, cutoff=10, measure=None))
    assert line.get_color() == plots.PALETTE[2]


@pytest.mark.parametrize("system", [r"$\frac{1}$", "$x^2$", "_hidden", "a_b"])
def test_ids_are_plain_text_in_legends_and_titles(system, tmp_path):
    table = _curves([system, "S1"])
    ax = plots.plot_session_curves(table, cutoff=10, measure=None, title=f"Scenario {system}")
    assert sorted(_legend(ax)) == sorted([system, "S1"])  # "_hidden" is not dropped
    texts = [*ax.get_legend().get_texts(), ax.title]
    assert all(not t.get_parse_math() and not t.get_usetex() for t in texts)
    plots.save_figure(ax, tmp_path / "f")  # mathtext would raise here on "$\frac{1}$"
    assert (tmp_path / "f.pdf").read_bytes().startswith(b"%PDF")


def test_many_series_put_the_legend_outside_and_widen_the_figure():
    systems = [f"system_{k}" for k in range(6)]
    ax = plots.plot_session_curves(_curves(systems), cutoff=10, measure=None)
    legend = ax.get_legend()
    assert legend.get_bbox_to_anchor().x0 > ax.bbox.x1 - 1  # anchored right of the axes
    assert ax.get_figure().get_size_inches()[0] > plots.COLUMN_FIGSIZE[0]
    few = plots.plot_session_curves(_curves(["S1", "S2"]), cutoff=10, measure=None)
    assert tuple(few.get_figure().get_size_inches()) == plots.COLUMN_FIGSIZE
    # beyond the seven colours of the palette, series differ by line style
    many = [f"s{k:02d}" for k in range(9)]
    lines = _data_lines(plots.plot_session_curves(_curves(many), cutoff=10, measure=None))
    looks = {(ln.get_color(), ln.get_linestyle()) for ln in lines}
    assert len(looks) == len(many)


def test_query_labels_thin_out_when_they_would_overlap():
    rows = [("S1", p, float(p)) for p in range(1, 30 * 10 + 1)]
    table = pd.DataFrame(rows, columns=["system_id", "position", "value"])
    ax = plots.plot_session_curves(table, cutoff=10, measure=None)
    labels = [t.get_text() for t in ax.child_axes[0].get_xticklabels()]
    assert labels[0] == "Q1" and 1 < len(labels) < 30
    step = int(labels[1][1:]) - 1
    assert labels == [f"Q{q}" for q in range(1, 31, step)]
