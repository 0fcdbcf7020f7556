"""The codebook: every exported column, its labels, units and parameters."""

from __future__ import annotations

import pandas as pd

from sessionval.evaluation.config import SessionConfig
from sessionval.output.codebook import codebook, codebook_markdown


def test_codebook_types_and_markdown():
    t = pd.DataFrame(
        {
            "system_id": pd.Categorical(["B", "A"]),
            "is_last": [True, False],
            "n_queries": [1, 2],
            "at": pd.to_datetime(["2020-01-01", "2020-01-02"], utc=True),
            "note": ["x|y", "z"],
        }
    )
    cfg = SessionConfig()
    book = codebook({"per_query_wide": t}, parameters=cfg.model_dump())
    assert book["type"].tolist() == [
        "coded (integer with value labels)",
        "0/1",
        "integer",
        "datetime (UTC)",
        "coded (integer with value labels)",
    ]
    md = codebook_markdown(book, cfg.model_dump())
    assert "- `cutoff` = `10`: X: the top X ranks" in md
    assert "x\\|y" in md  # pipes in cells are escaped
