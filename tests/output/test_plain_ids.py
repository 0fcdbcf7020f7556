"""Issue 10 F10/T6 and item 5: ids drawn as plain text everywhere; order from the ids.

Complements ``test_plots.py`` (legends and titles of the curve figures) with the texts
those tests do not reach: rating names on the scatter's axes, setting names on the
heat map's ticks, and Figure 4's sessions (colours and stopping marks by session id).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from sessionval.output import meta_plots, plots

MARKUP = [r"$\frac{1}$", "$x^2$", "_hidden", r"\textbf{b}"]


def _all_plain(texts) -> bool:
    return all(not t.get_parse_math() and not t.get_usetex() for t in texts)


@pytest.mark.parametrize("name", MARKUP)
def test_rating_and_measure_names_on_the_scatter_are_plain(name, tmp_path):
    ps = pd.DataFrame({f"rating_{name}": [1, 2, 3], name: [0.1, 0.2, 0.4]})
    fig = plots.plot_rating_scatter(ps, measures=[name], ratings=[f"rating_{name}"])
    (ax,) = fig.axes
    assert ax.get_xlabel() == name and ax.get_ylabel() == name
    assert _all_plain([ax.xaxis.label, ax.yaxis.label])
    plots.save_figure(fig, tmp_path / "f")  # mathtext would raise on "$\frac{1}$"


@pytest.mark.parametrize("name", MARKUP)
def test_setting_names_on_the_heat_map_are_plain(name, tmp_path):
    table = pd.DataFrame(
        {"setting": [name, "b=3"], "tau_systems": [1.0, 0.8], "tau_sessions": [0.9, 0.7]}
    )
    ax = meta_plots.plot_sensitivity_heatmap(table)
    ticks = ax.get_yticklabels()
    assert [t.get_text() for t in ticks] == [name, "b=3"]
    assert _all_plain(ticks)
    plots.save_figure(ax, tmp_path / "f", formats=["png"])


def _individual(order: list[str]) -> pd.DataFrame:
    rows = []
    for sid in order:
        k = int(sid[1:])
        for p in range(1, 11):
            rows.append((sid, p, float(min(p, k + 2) * (k + 1)), p > k + 2))
    table = pd.DataFrame(rows, columns=["session_id", "position", "value", "stopped"])
    table["session_id"] = pd.Categorical(table["session_id"], categories=order)
    return table


def test_individual_sessions_are_coloured_and_marked_by_session_id():
    first = plots.plot_individual_sessions(_individual(["s3", "s1", "s2"]), cutoff=5)
    second = plots.plot_individual_sessions(_individual(["s1", "s2", "s3"]), cutoff=5)
    looks = []
    for ax in (first, second):
        lines = [ln for ln in ax.get_lines() if ln.get_label().startswith("_session")]
        looks.append([(ln.get_label(), ln.get_color(), ln.get_linestyle()) for ln in lines])
        assert [ln.get_label() for ln in lines] == ["_session s1", "_session s2", "_session s3"]
    assert looks[0] == looks[1]
    stops = [ax.collections[0].get_offsets().tolist() for ax in (first, second)]
    assert stops[0] == stops[1] == [[3.0, 6.0], [4.0, 12.0], [5.0, 20.0]]
