"""Score tables shared by the analysis and output tests (searchers, systems, topics, scores)."""

from __future__ import annotations

import numpy as np
import pandas as pd

PARAMS = {"b": 2.0, "bq": 4.0, "cutoff": 10, "gains": "0-1-10-100", "duplicates": "every"}


def per_session_table() -> pd.DataFrame:
    """Eight sessions with ids, scores, a nullable integer and a rating."""
    # 4 searchers x 2 systems (Latin square: each searcher used both systems on two topics)
    users = ["u1", "u1", "u2", "u2", "u3", "u3", "u4", "u4"]
    systems = ["Sys 1", "Sys 2", "Sys 2", "Sys 1", "Sys 1", "Sys 2", "Sys 2", "Sys 1"]
    topics = ["A", "B", "A", "B", "C", "D", "C", "D"]
    return pd.DataFrame(
        {
            "session_id": pd.Categorical([f"s{i}" for i in range(8)]),
            "user_id": pd.Categorical(users),
            "topic_id": pd.Categorical(topics),
            "system_id": pd.Categorical(systems),
            "n_queries": np.array([1, 3, 2, 2, 5, 1, 4, 2], dtype=np.int16),
            "sdcg": [10.5, 20.25, 3.0, 0.0, 55.5, 1.0, 12.0, 7.5],
            "nsdcg": [0.1, 0.2, 0.05, 0.0, 0.9, np.nan, 0.3, 0.15],
            "first_rel_query": pd.array([1, 2, None, None, 1, None, 3, 2], dtype="Int16"),
            "rating_satisfaction": [3.0, 4.0, 2.0, 1.0, 5.0, 2.0, 3.0, 4.0],
        }
    )


def per_query_table(ps: pd.DataFrame) -> pd.DataFrame:
    """The queries of ``ps`` with DCG, sDCG_q and the last-query flag."""
    n = ps["n_queries"].to_numpy(dtype=np.int64)
    idx = np.repeat(np.arange(len(ps)), n)
    pos = np.concatenate([np.arange(1, k + 1) for k in n])
    out = ps.loc[idx, ["session_id", "user_id", "topic_id", "system_id"]].reset_index(drop=True)
    out["query_pos"] = pos.astype(np.int16)
    out["dcg"] = np.linspace(0.0, 30.0, len(out))
    out["sdcg_q"] = out["dcg"] / (1 + np.log(pos) / np.log(4.0))
    out["is_last"] = pos == n[idx]
    return out


def two_system_sessions() -> pd.DataFrame:
    """Twelve sessions: six searchers, each with one session on S1 and one on S2."""
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
