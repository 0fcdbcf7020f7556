"""Confidence bands on the curves, the meta-evaluation figures, the comparison LaTeX (Agg)."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest

from sessionval.analysis.curves import cg_curves, query_curves, session_curves
from sessionval.errors import SessionvalError
from sessionval.evaluation.session import evaluate
from sessionval.io.study import load_study
from sessionval.output import meta_plots, plots
from sessionval.output.comparison import (
    comparison_jsonl,
    comparison_latex,
    comparison_tsv,
    latex_escape,
    tsv_field,
    tsv_text,
)
from sessionval.synth import write_study


@pytest.fixture(scope="module")
def ev(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    write_study(root, n_sessions=24, seed=11, formats="jsonl")
    loaded = load_study(root, qrels=root / "qrels.txt")
    return evaluate(loaded.frame, loaded.judgments)


def _bands(ax):
    return [c for c in ax.collections if str(c.get_label()).startswith("_band")]


def test_bands_are_drawn_from_the_table_and_kept_out_of_the_legend(ev):
    table = session_curves(ev, confidence=0.95)
    ax = plots.plot_session_curves(table, cutoff=10, bands=True)
    shaded = _bands(ax)
    assert len(shaded) == 2  # one per system
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert not any(t.startswith("_") for t in legend)
    # the band spans ci_low..ci_high of the nsDCG rows of the first system
    rows = table[(table.measure == "nsdcg") & (table.system_id == "S1")].sort_values("position")
    verts = shaded[0].get_paths()[0].vertices
    assert np.nanmax(verts[:, 1]) == pytest.approx(rows["ci_high"].max())
    assert _bands(plots.plot_session_curves(table, cutoff=10)) == []  # off by default


def test_query_and_cg_curve_bands(ev):
    q = query_curves(ev, ranks=20, confidence=0.95)
    assert len(_bands(plots.plot_query_curves(q, bands=True))) == 4  # 2 systems x 2 groups
    cg = cg_curves(ev, ranks=20, confidence=0.95)
    nd = cg[cg.measure == "nDCG"]
    assert len(_bands(plots.plot_cg_curves(nd, measure="nDCG", bands=True))) == 2  # no ideal
    with pytest.raises(SessionvalError, match="ci_low"):
        plots.plot_cg_curves(cg_curves(ev, ranks=20), measure="nDCG", bands=True)


def test_meta_figures_draw_the_tables():
    bins = pd.DataFrame({"measure": ["AP"] * 3, "low": [0, 0.01, 0.02],
                         "swap_rate": [0.4, 0.1, 0.0]})  # fmt: skip
    ax = meta_plots.plot_swap_rates(bins)
    assert ax.get_lines()[0].get_ydata().tolist() == [0.4, 0.1, 0.0]
    pairs = pd.DataFrame({"measure": ["AP"] * 3, "asl": [0.3, 0.01, 0.2]})
    ax = meta_plots.plot_asl_curves(pairs, alpha=0.05)
    assert ax.get_lines()[0].get_ydata().tolist() == [0.01, 0.2, 0.3]
    tau = pd.DataFrame({"measure": ["AP", "AP"], "fraction": [0.1, 1.0], "tau": [0.6, 1.0]})
    assert meta_plots.plot_tau_vs_fraction(tau).get_lines()[0].get_ydata().tolist() == [0.6, 1.0]
    heat = pd.DataFrame({"setting": ["b=2", "b=4"], "tau_systems": [1.0, 0.8],
                         "tau_sessions": [1.0, 0.7]})  # fmt: skip
    ax = meta_plots.plot_sensitivity_heatmap(heat)
    assert ax.get_images()[0].get_array().tolist() == [[1.0, 1.0], [0.8, 0.7]]


def test_latex_escapes_names_and_marks_only_significant_improvements():
    comp = pd.DataFrame(
        {
            "measure": ["AP", "AP", "AP"],
            "a": ["x_1", "x_1", "y%"],
            "b": ["y%", "z", "z"],
            "diff": [0.1, -0.2, -0.3],
            "p_adjusted": [0.01, 0.01, 0.5],
            "significant": [True, True, False],
        }
    )
    means = pd.DataFrame({"system": ["x_1", "y%", "z"], "measure": "AP", "n": 10,
                          "mean": [0.3, 0.2, 0.5]})  # fmt: skip
    tex = comparison_latex(comp, means, test="randomisation", correction="tukey-hsd")
    lines = tex.splitlines()
    assert r"a & x\_1 & 0.3000$^{b}$ \\" in lines  # x_1 beats y%
    assert r"c & z & \textbf{0.5000}$^{a}$ \\" in lines  # z beats x_1, not y% (n.s.)
    assert "randomised Tukey HSD" in tex
    assert latex_escape("a_b&c") == r"a\_b\&c"
    assert '"p_adjusted": 0.01' in comparison_jsonl(comp)


ODD = ["plain", "tab\tname", "two\n\npar", 'say "hi"', "line\u2028sep"]


def test_tsv_of_any_name_reads_back_as_written():
    # ST-2: a tab or line break in a name split a row into 0-19 fields
    t = pd.DataFrame({"a": ODD, "p": [0.5, np.nan, 1 / 3, 2.0, 0.0], "s": [True] * 5})
    for digits in (6, None):
        text = tsv_text(t, digits=digits)
        back = pd.read_csv(io.StringIO(text), sep="\t", keep_default_na=True)
        assert back["a"].tolist() == ODD and back["s"].tolist() == [True] * 5
    back = pd.read_csv(io.StringIO(tsv_text(t, digits=None)), sep="\t")
    np.testing.assert_array_equal(back["p"].to_numpy(), t["p"].to_numpy())  # exact floats
    assert comparison_tsv(t) == tsv_text(t)
    assert tsv_field("tab\tname") == '"tab\tname"' and tsv_field("plain") == "plain"


def test_latex_shows_control_characters_instead_of_breaking_the_table():
    means = pd.DataFrame({"system": ODD, "measure": "AP", "n": 3, "mean": 0.1})
    comp = pd.DataFrame(columns=["measure", "a", "b", "diff", "significant"])
    tex = comparison_latex(comp, means, test="paired-t", correction="holm")
    rows = [line for line in tex.splitlines() if line.endswith(r"\\")][1:]
    assert len(rows) == len(ODD) and "" not in tex.splitlines()  # no blank line, no split row
    assert r"c & two\textbackslash{}n\textbackslash{}npar & " in tex
    assert latex_escape("a\tb") == r"a\textbackslash{}tb"
    assert latex_escape("l\u2028s") == r"l\textbackslash{}u2028s"
