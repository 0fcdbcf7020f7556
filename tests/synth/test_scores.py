"""simulate_scores: per-session score tables of known truth, in the layout run writes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.analysis.by_design import compare_per_session
from sessionval.analysis.design import detect_design
from sessionval.errors import SessionvalError
from sessionval.synth import simulate_scores

ID_COLUMNS = ["session_id", "user_id", "topic_id", "system_id", "session_order"]


@pytest.mark.parametrize(
    ("kwargs", "design", "block", "topics", "latin"),
    [
        ({}, "within", "searcher+topic", "nested", True),
        ({"topics": "crossed"}, "within", "searcher", "crossed", False),
        ({"n_systems": 3, "n_topics": 6}, "within", "searcher+topic", "nested", True),
        ({"design": "between"}, "between", "none", "", False),
        ({"design": "by_topic", "n_topics": 25}, "by_topic", "topic", "", False),
    ],
)
def test_each_design_is_detected_as_asked(kwargs, design, block, topics, latin):
    t = simulate_scores(seed=1, **kwargs)
    assert t.columns.tolist() == [*ID_COLUMNS, "nsdcg"]
    assert t["session_id"].is_unique
    d = detect_design(t)
    assert (d.design, d.block, d.topics, d.latin_square) == (design, block, topics, latin)


def test_latin_square_is_balanced_over_topics_and_positions():
    t = simulate_scores(n_searchers=30, n_topics=4, seed=2)
    # every searcher sees every topic once, and uses both systems twice
    assert (t.groupby("user_id")["topic_id"].nunique() == 4).all()
    assert (t.groupby(["user_id", "system_id"]).size() == 2).all()
    # every topic and every order position carries each system equally often
    assert set(t.groupby(["topic_id", "system_id"]).size()) == {15}
    assert set(t.groupby(["session_order", "system_id"]).size()) == {15}
    assert sorted(t["session_order"].unique().tolist()) == [1, 2, 3, 4]


def test_crossed_and_between_layouts():
    crossed = simulate_scores(topics="crossed", n_searchers=4, n_topics=3, seed=0)
    assert len(crossed) == 4 * 3 * 2  # each searcher: every topic with both systems
    assert (crossed.groupby(["user_id", "topic_id"])["system_id"].nunique() == 2).all()
    between = simulate_scores(design="between", n_searchers=6, seed=0)
    assert set(between.groupby("user_id")["system_id"].nunique()) == {1}
    assert between.groupby("system_id")["user_id"].nunique().tolist() == [3, 3]
    by_topic = simulate_scores(design="by_topic", n_topics=5, n_systems=3, seed=0)
    assert len(by_topic) == 15
    assert (by_topic["user_id"] == by_topic["system_id"]).all()


def test_the_truth_is_linear_and_recovered():
    # no random effects and no noise: scores are exactly mean + system effect
    t = simulate_scores(
        system_effect=[0.0, 0.25, -0.1],
        n_systems=3,
        n_topics=3,
        searcher_sd=0,
        topic_sd=0,
        noise_sd=0,
        mean=0.4,
        seed=0,
    )
    means = t.groupby("system_id")["nsdcg"].mean()
    np.testing.assert_allclose(means.to_numpy(), [0.4, 0.65, 0.3])
    assert t.attrs["system_effect"] == {"S1": 0.0, "S2": 0.25, "S3": -0.1}
    # with every variance: the blocks model recovers the difference within its noise
    r = simulate_scores(system_effect=0.1, replicates=40, seed=4)
    cmp = compare_per_session(r, measures=r.attrs["measures"])
    assert (cmp["a"] + cmp["b"]).eq("S1S2").all()
    # a - b = S1 - S2 = -0.1; the mean of 40 estimates has SD about 0.02 / sqrt(40)
    assert cmp["diff"].mean() == pytest.approx(-0.1, abs=0.01)


def test_searcher_and_topic_effects_have_the_asked_spread():
    t = simulate_scores(
        n_searchers=400, n_topics=200, sessions_per_searcher=2, noise_sd=0, topic_sd=0.3, seed=5
    )
    # each topic mean averages ~4 sessions: its spread is the topic SD, blurred a little by the
    # searchers (SD 0.1 / 2)
    by_topic = t.groupby("topic_id")["nsdcg"].mean() - t["nsdcg"].mean()
    assert by_topic.std() == pytest.approx(0.3, rel=0.25)


def test_replicates_are_independent_studies_of_one_layout():
    t = simulate_scores(replicates=12, seed=3)
    assert t.attrs["measures"] == [f"nsdcg_{r:02d}" for r in range(1, 13)]
    y = t[t.attrs["measures"]].to_numpy()
    corr = np.corrcoef(y.T)[np.triu_indices(12, 1)]
    assert np.abs(corr).max() < 0.5
    # the same seed gives the same table, another seed another
    pd.testing.assert_frame_equal(t, simulate_scores(replicates=12, seed=3))
    assert not np.allclose(y, simulate_scores(replicates=12, seed=4)[t.attrs["measures"]])


def test_by_topic_draws_no_searcher_effect():
    t = simulate_scores(design="by_topic", searcher_sd=5.0, topic_sd=0, noise_sd=0, seed=0)
    assert t["nsdcg"].tolist() == pytest.approx([0.3] * len(t))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"design": "latin"}, r"'latin' is not a design; allowed: within, between, by_topic"),
        ({"topics": "nest"}, r"'nest' is not a topic layout; allowed: nested, crossed"),
        ({"n_searchers": 1}, r"n_searchers = 1 .* integer >= 2"),
        ({"noise_sd": -0.1}, r"noise_sd = -0.1 .* finite number >= 0"),
        ({"mean": float("nan")}, r"mean = nan .* finite number"),
        ({"sessions_per_searcher": 5}, r"would repeat a scenario; give at most 4, or crossed"),
        ({"system_effect": [0.1]}, r"or 2 numbers"),
        ({"replicates": 0}, r"replicates = 0"),
    ],
)
def test_bad_options_are_refused_with_the_allowed_values(kwargs, match):
    with pytest.raises(SessionvalError, match=match):
        simulate_scores(**kwargs)
