"""Large studies: vectorised, chunked, dictionary-encoded, and fast."""

from __future__ import annotations

import time

import numpy as np
import pyarrow.parquet as pq

from sessionval.synth import TABLE2_COUNTS, iter_flat_batches, write_study


def test_20k_sessions_parquet_is_fast_and_consistent(tmp_path):
    t0 = time.perf_counter()
    summary = write_study(tmp_path, n_sessions=20_000, seed=3, formats="parquet")
    elapsed = time.perf_counter() - t0
    assert elapsed < 30  # about 2 s on an idle 2-core machine
    assert not (tmp_path / "sessions.jsonl").exists()
    meta = pq.ParquetFile(tmp_path / "sessions.parquet").metadata
    assert meta.num_rows == summary.n_rows
    assert 3_000_000 < summary.n_rows < 6_000_000
    # doc ids are stored as a dictionary page plus integer codes, not as plain strings
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    doc = meta.row_group(0).column(names.index("doc_id"))
    assert doc.has_dictionary_page
    assert "RLE_DICTIONARY" in doc.encodings
    table = pq.read_table(
        tmp_path / "sessions.parquet", columns=["session_id", "system_id", "query_pos", "rank"]
    )
    sessions = (
        table.to_pandas()
        .groupby("session_id", observed=True)
        .agg(system=("system_id", "first"), n=("query_pos", "max"), rows=("rank", "size"))
    )
    assert len(sessions) == 20_000
    assert sessions["n"].sum() == summary.n_queries
    for system, counts in TABLE2_COUNTS.items():
        got = np.bincount(sessions.loc[sessions.system == system, "n"], minlength=12)[1:]
        share = np.asarray(counts) / 60
        assert np.all(np.abs(got / got.sum() - share) < 0.001)


def test_batches_cover_the_study_in_order():
    n = 33_000  # two chunks
    seen = []
    for batch in iter_flat_batches(n_sessions=n, seed=5):
        ids = batch.column("session_id").combine_chunks()
        seen.append(
            (
                ids.dictionary[ids.indices[0].as_py()].as_py(),
                ids.dictionary[ids.indices[-1].as_py()].as_py(),
            )
        )
    assert len(seen) == 2
    assert seen[0][0] == "s00001" and seen[1][1] == f"s{n:05d}"
    assert int(seen[1][0][1:]) == int(seen[0][1][1:]) + 1
