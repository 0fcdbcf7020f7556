"""Session covariates: times, the order in the searcher's sequence, searcher attributes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from sessionval.analysis.covariates import covariate_columns, session_covariates, with_covariates
from sessionval.io.study import load_study
from tests import builders


def _study(tmp_path, header_users, sessions):
    (tmp_path / "study.json").write_text(json.dumps({"users": header_users}), encoding="utf-8")
    builders.write_jsonl(tmp_path / "sessions.jsonl", sessions)
    return load_study(tmp_path)


def test_order_duration_and_attributes(tmp_path):
    users = [
        {"user_id": "u1", "attributes": {"age": 41, "gender": "f", "years": 2.5}},
        {"user_id": "u2", "attributes": {"age": 30, "gender": "m"}},
    ]
    t = "2008-03-01T09:{:02d}:00Z"
    sessions = [
        builders.make_session("a", user="u1", start_time=t.format(30), end_time=t.format(34)),
        builders.make_session("b", user="u1", start_time=t.format(10), end_time=t.format(12)),
        builders.make_session("c", user="u2"),  # no times: after the timed ones, input order
        builders.make_session("d", user="u2", start_time=t.format(50)),
        builders.make_session("e", user="u1"),
    ]
    loaded = _study(tmp_path, users, sessions)
    cov = session_covariates(loaded.frame)
    assert cov["session_order"].tolist() == [2, 1, 2, 1, 3]
    np.testing.assert_allclose(cov["duration_s"].to_numpy()[:2], [240.0, 120.0])
    assert cov["duration_s"].isna().tolist() == [False, False, True, True, True]
    assert cov["user_age"].tolist() == [41, 41, 30, 30, 41]
    assert cov["user_gender"].tolist() == ["f", "f", "m", "m", "f"]
    assert pd.isna(cov["user_years"].iloc[2]) and cov["user_years"].iloc[0] == 2.5
    assert covariate_columns(["user_id", *cov.columns, "nsdcg"]) == list(cov.columns)


def test_rating_columns_in_a_fixed_order(tmp_path):
    sessions = [builders.make_session("a", ratings={"z_last": 1, "a_first": 2})]
    loaded = _study(tmp_path, [], sessions)
    per_session = pd.DataFrame(
        {"session_id": ["a"], "nsdcg": [0.5], "rating_z_last": [1.0], "rating_a_first": [2.0]}
    )
    out = with_covariates(per_session, loaded.frame)
    assert list(out.columns[:4]) == ["session_id", "nsdcg", "rating_a_first", "rating_z_last"]
    assert out["rating_a_first"].tolist() == [2.0]
    assert out.columns[4] == "session_start"
