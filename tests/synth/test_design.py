"""The design of Järvelin et al. (2008), section 3.1: Tables 1 and 2, Latin square."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionval.errors import SessionvalError
from sessionval.models import Session
from sessionval.synth import TABLE2_COUNTS, generate_study, study_header, write_study
from sessionval.synth.design import (
    N_CAT,
    SCENARIOS,
    design_study,
    judgments_of,
    session_ids,
    user_ids,
)


def _sessions(study):
    cols = ["session_id", "user_id", "topic_id", "system_id", "query_pos"]
    df = study.flat.select(cols).to_pandas()
    for c in cols[:4]:
        df[c] = df[c].astype(str)
    return df.groupby("session_id", sort=False).agg(
        user=("user_id", "first"),
        topic=("topic_id", "first"),
        system=("system_id", "first"),
        n_queries=("query_pos", "max"),
    )


def test_table2_exact_per_system_at_120(sample_study):
    s = _sessions(sample_study)
    assert len(s) == 120
    for system, expected in TABLE2_COUNTS.items():
        nq = s.loc[s.system == system, "n_queries"].to_numpy()
        assert len(nq) == 60
        assert np.bincount(nq, minlength=12)[1:].tolist() == list(expected)
    assert round(s.loc[s.system == "S1", "n_queries"].mean(), 2) == 2.53
    assert round(s.loc[s.system == "S2", "n_queries"].mean(), 2) == 3.18
    assert s.n_queries.sum() == 343


def test_latin_square_at_120(sample_study):
    s = _sessions(sample_study)
    assert s.user.nunique() == 30
    for _, g in s.groupby("user"):
        assert len(g) == 4
        assert sorted(g.topic) == ["A", "B", "C", "D"]
        assert collections.Counter(g.system) == {"S1": 2, "S2": 2}
        # the two sessions of a system are consecutive (system blocks)
        systems = g.system.tolist()
        assert systems[0] == systems[1] and systems[2] == systems[3]
    cells = s.groupby(["topic", "system"]).size()
    assert len(cells) == 8 and set(cells) == {15}
    # counterbalanced: as many searchers start with S1 as with S2, each scenario opens equally
    firsts = s.groupby("user").first()
    assert collections.Counter(firsts.system) == {"S1": 15, "S2": 15}
    assert sorted(collections.Counter(firsts.topic).values()) == [7, 7, 8, 8]
    # every scenario is searched in each of the four positions about equally often
    slots = s.groupby("user").cumcount()
    per_slot = s.assign(slot=slots).groupby(["topic", "slot"]).size()
    assert per_slot.min() >= 7 and per_slot.max() <= 8


def test_searchers_look_like_table1():
    users = study_header().users
    assert len(users) == 30
    want = {  # Table 1: mean, SD
        "internet_search_years": (7.2, 2.8),
        "portal_years": (2.4, 1.4),
        "search_skill": (2.4, 0.9),
        "professional_years": (21.4, 7.6),
    }
    for name, (mean, sd) in want.items():
        x = np.array([u.attributes[name] for u in users], dtype=float)
        assert abs(x.mean() - mean) < 0.15 * sd + 0.1, name
        assert abs(x.std(ddof=1) - sd) < 0.15 * sd + 0.1, name
    skills = {u.attributes["search_skill"] for u in users}
    assert skills <= {1, 2, 3, 4, 5}
    assert {u.attributes["gender"] for u in users} == {"female", "male"}


def test_larger_study_scales_design():
    s = _sessions(generate_study(n_sessions=2400, seed=7, jsonl=False))
    assert s.user.nunique() == 600
    for system, counts in TABLE2_COUNTS.items():
        nq = s.loc[s.system == system, "n_queries"].to_numpy()
        got = np.bincount(nq, minlength=12)[1:]
        expected = np.asarray(counts) * len(nq) / 60
        assert np.all(np.abs(got - expected) <= 1), (system, got, expected)
    cells = s.groupby(["topic", "system"]).size()
    assert cells.max() - cells.min() <= 10


@settings(deadline=None, max_examples=12)
@given(n=st.integers(1, 80), seed=st.integers(0, 2**32))
def test_any_size_keeps_per_searcher_rules(n, seed):
    study = generate_study(n_sessions=n, seed=seed)
    assert [Session.model_validate_json(line).session_id for line in study.jsonl] == [
        f"s{i:03d}" for i in range(1, n + 1)
    ]
    s = _sessions(study)
    assert len(s) == n
    assert s.user.nunique() == -(-n // 4)
    for _, g in s.groupby("user"):
        assert g.topic.is_unique
        assert collections.Counter(g.system).most_common(1)[0][1] <= 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_sessions": 0}, "n_sessions must be an integer >= 1, got 0"),
        ({"n_sessions": 2.5}, "n_sessions must be an integer >= 1, got 2.5"),
        ({"seed": -1}, "seed must be an integer >= 0, got -1"),
    ],
)
def test_bad_options_raise(kwargs, message, tmp_path):
    with pytest.raises(SessionvalError, match=message):
        generate_study(**kwargs)
    with pytest.raises(SessionvalError, match=message):
        write_study(tmp_path, **kwargs)


def test_bad_format_raises(tmp_path):
    with pytest.raises(
        SessionvalError, match="formats must be 'jsonl', 'parquet' or 'both', got 'csv'"
    ):
        write_study(tmp_path, formats="csv")  # type: ignore[arg-type]


def test_design_lays_out_table2_and_the_latin_square_directly():
    d = design_study(120, 2008)
    assert d.n_users == 30 and int(d.query_offsets[-1]) == 343
    assert np.array_equal(np.diff(d.query_offsets), d.n_queries)
    assert np.bincount(d.session_user).tolist() == [4] * 30
    for k, expected in enumerate(TABLE2_COUNTS.values()):
        nq = d.n_queries[d.session_system == k]
        assert np.bincount(nq, minlength=12)[1:].tolist() == list(expected)
    # the searchers' sessions start on working days of the study, a few a day
    days = d.user_start // 86_400
    assert np.all(np.isin((days + 3) % 7, [0, 1, 2, 3, 4]))  # 1970-01-01 was a Thursday


def test_pools_are_disjoint_and_are_the_reference_judgments():
    d = design_study(12, 1)
    p = d.pools
    assert len(np.unique(p.docs)) == len(p.docs)  # no document in two pools
    for t, sc in enumerate(SCENARIOS):
        assert p.size[t, 1:].tolist() == [sc.n_judged_zero, *sc.n_relevant]
        # every stride walks the whole pool: coprime with its size
        assert all(np.gcd(p.strides[t, c], p.size[t, c]).max() == 1 for c in range(N_CAT))
    j = judgments_of(d)
    counts = j.groupby(["topic_id", "grade"]).size()
    for sc in SCENARIOS:
        assert counts[sc.topic_id].tolist() == [sc.n_judged_zero, *sc.n_relevant]
    assert list(j["assessor"].unique()) == ["expert"]


def test_identifiers_are_zero_padded_to_the_study_size():
    assert session_ids(0, 3, 120) == ["s001", "s002", "s003"]
    assert session_ids(9_998, 2, 10_000) == ["s09999", "s10000"]
    assert user_ids(0, 2, 30) == ["u01", "u02"]
    assert user_ids(249, 1, 250) == ["u250"]
