from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fx() -> Path:
    return FIXTURES


def plain(table: pd.DataFrame, columns: list[str] | None = None) -> pd.DataFrame:
    """Categoricals as strings, for comparing tables whose category order may differ."""
    out = table[columns] if columns is not None else table.copy()
    out = out.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype(str)
    return out.reset_index(drop=True)


@pytest.fixture(scope="session")
def same_frame():
    def check(a, b, *, ratings: bool = True) -> None:
        s_cols = [
            "session_id",
            "user_id",
            "topic_id",
            "system_id",
            "start_time",
            "end_time",
            "n_queries",
        ]
        if ratings:
            # an all-missing rating has no trace in JSON-lines (ratings are a dict per session)
            s_cols += [
                c
                for c in a.sessions.columns
                if str(c).startswith("rating_") and a.sessions[c].notna().any()
            ]
        pd.testing.assert_frame_equal(plain(a.sessions, s_cols), plain(b.sessions, s_cols))
        pd.testing.assert_frame_equal(plain(a.queries), plain(b.queries[list(a.queries.columns)]))
        cols = list(a.results.columns)
        pd.testing.assert_frame_equal(plain(a.results), plain(b.results[cols]))

    return check
