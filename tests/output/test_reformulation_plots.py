"""The reformulation figures draw exactly the numbers of their tables."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest

from sessionval.errors import SessionvalError
from sessionval.output.reformulation_plots import (
    plot_reformulation_gains,
    plot_transition_heatmap,
)

EFFECTS = pd.DataFrame(
    {
        "level": "group",
        "category": ["specialisation", "specialisation", "new", "new"],
        "system_id": ["S1", "S2", "S1", "S2"],
        "outcome": "delta_dcg",
        "mean": [3.0, 5.0, -1.0, 0.5],
        "ci_low": [1.0, 4.0, -2.0, np.nan],
        "ci_high": [5.0, 6.0, 0.0, np.nan],
    }
)


def test_gains_one_point_per_system_and_category_with_its_interval():
    ax = plot_reformulation_gains(EFFECTS, params={"b": 2})
    points = {c.get_label(): c for c in ax.containers}
    assert sorted(points) == ["S1", "S2"]
    x = points["S1"].lines[0].get_xdata()
    np.testing.assert_allclose(x, [3.0, -1.0])
    segments = points["S1"].lines[2][0].get_segments()
    np.testing.assert_allclose([s[:, 0] for s in segments], [[1.0, 5.0], [-2.0, 0.0]])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["specialisation", "new"]
    assert "b=2" in ax.get_title()


def test_gains_without_rows_of_the_outcome_says_so():
    with pytest.raises(SessionvalError, match="new_relevant"):
        plot_reformulation_gains(EFFECTS, outcome="new_relevant")


def test_heatmap_shows_the_row_shares_with_end_last():
    tr = pd.DataFrame(
        {
            "from_type": ["add_words", "add_words", "new"],
            "to_type": ["end", "new", "end"],
            "n": [1, 3, 2],
            "share": [0.25, 0.75, 1.0],
        }
    )
    ax = plot_transition_heatmap(tr)
    image = ax.get_images()[0].get_array()
    cols = [t.get_text() for t in ax.get_xticklabels()]
    assert cols == ["add words", "new", "end"]
    np.testing.assert_allclose(np.asarray(image), [[0.0, 0.75, 0.25], [0.0, 0.0, 1.0]])
    assert sorted(t.get_text() for t in ax.texts) == ["0.25", "0.75", "1.00"]
