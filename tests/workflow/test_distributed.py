"""Partitions validated, scored and written by the workers (workflow/distributed.py).

The parts the workers write are the local tables' rows; the summary folded from
their counts is the local summary; a session in two files and a partition failing
validation are reported as the partitioned reader reports them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from sessionval.analysis.covariates import with_covariates
from sessionval.analysis.summary import summarize, summary_from_counts
from sessionval.errors import InputFormatError, ValidationFailed
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.io.formats import load_input
from sessionval.io.partitioned import prepare_partitions
from tests import builders

distributed = pytest.importorskip("distributed")

from sessionval.evaluation.dask_engine import DaskEngine, dask_engine  # noqa: E402
from sessionval.workflow.distributed import (  # noqa: E402
    PartitionJob,
    Reduction,
    ScoredPartition,
    part_name,
    run_partitions,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_logs"
QRELS = SAMPLE / "qrels.txt"


@pytest.fixture(scope="module")
def engine() -> Iterator[DaskEngine]:
    with dask_engine(workers=2, processes=False) as eng:
        yield eng


def _flat() -> pd.DataFrame:
    return pd.read_parquet(SAMPLE / "sessions.parquet")


def _split(flat: pd.DataFrame, folder: Path, n: int, by: str) -> list[Path]:
    """Partitions holding every n-th searcher or every n-th session (searchers across files)."""
    folder.mkdir(parents=True, exist_ok=True)
    codes = pd.factorize(flat[by].astype(str))[0]
    paths = []
    for i in range(n):
        p = folder / part_name(i)
        flat[codes % n == i].reset_index(drop=True).to_parquet(p, index=False)
        paths.append(p)
    return paths


def _count_sessions(part: ScoredPartition) -> int:
    return part.ev.frame.n_sessions


def _score(folder: Path, out: Path, engine: DaskEngine, **job: object):  # type: ignore[no-untyped-def]
    setup = prepare_partitions(folder, qrels=QRELS)
    spec = PartitionJob(
        load=setup.load,
        study=setup.study,
        judgments=setup.judgments,
        config=SessionConfig(),
        cg_config=None,
        measures=(),
        tables=out,
        reductions=(Reduction("n", _count_sessions, lambda a, b: a + b),),
        **job,  # type: ignore[arg-type]
    )
    return setup, run_partitions(setup.files, spec, engine, source=setup.path)


def _in_id_order(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    out = table.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype(str)
    return out.sort_values(keys, kind="stable").reset_index(drop=True)


@pytest.mark.parametrize("split", ["searcher", "session"])
def test_the_parts_are_the_local_tables(split, tmp_path, engine) -> None:
    flat = _flat()
    folder = tmp_path / "parts"
    # by session, searchers span files: only their session_order is counted per file
    _split(flat, folder, 3, "user_id" if split == "searcher" else "session_id")
    (folder / "study.json").write_bytes((SAMPLE / "study.json").read_bytes())
    setup, scores = _score(folder, tmp_path / "tables", engine)

    local = load_input(SAMPLE, qrels=QRELS)
    ev = evaluate(local.frame, local.judgments, SessionConfig())
    tables = {
        "per_session": (with_covariates(ev.per_session(), ev.frame), ["session_id"]),
        "per_query": (ev.per_query(), ["session_id", "query_pos"]),
        "per_position": (ev.per_position(), ["session_id", "query_pos", "position"]),
    }
    assert scores.n_partitions == 3 and scores.partials["n"] == local.frame.n_sessions
    assert scores.rows == {name: len(t) for name, (t, _) in tables.items()}
    assert sorted(p.name for p in (tmp_path / "tables" / "per_query").iterdir()) == [
        part_name(i) for i in range(3)
    ]
    for name, (table, keys) in tables.items():
        parts = pd.read_parquet(tmp_path / "tables" / name)
        assert list(parts.columns) == list(table.columns)
        got, want = _in_id_order(parts, keys), _in_id_order(table, keys)
        if split == "session" and name == "per_session":
            assert scores.searchers_span_files
            got, want = got.drop(columns="session_order"), want.drop(columns="session_order")
        pd.testing.assert_frame_equal(got, want, check_dtype=False)
        for c in want.columns:  # the values and their kinds, bit for bit
            assert got[c].dtype.kind == want[c].dtype.kind or want[c].dtype == object, c
    assert split == "session" or not scores.searchers_span_files
    assert scores.evaluation == ev.counts()
    summary = summary_from_counts(scores.counts, setup.judgments, scores.report.summary_line())
    assert summary.to_text() == summarize(local).to_text()


def test_a_session_in_two_files_is_named_with_both(tmp_path, engine) -> None:
    flat = _flat()
    folder = tmp_path / "parts"
    builders.write_partitions(flat, folder, 2)
    one = flat[flat["session_id"] == flat["session_id"].iloc[0]]
    second = pd.read_parquet(folder / part_name(1))
    pd.concat([second, one]).to_parquet(folder / part_name(1), index=False)
    with pytest.raises(InputFormatError, match=r"is in .*part-00000.* and .*part-00001.*1 session"):
        _score(folder, tmp_path / "tables", engine)


def test_partitions_failing_validation_are_reported_together(tmp_path, engine) -> None:
    flat = _flat()
    folder = tmp_path / "parts"
    paths = builders.write_partitions(flat, folder, 3)
    for p in (paths[0], paths[2]):
        bad = pd.read_parquet(p)
        bad.loc[0, "rank"] = 0
        bad.to_parquet(p, index=False)
    with pytest.raises(ValidationFailed) as info:
        _score(folder, tmp_path / "tables", engine)
    sources = {q.source for q in info.value.problems}
    assert any("part-00000" in s for s in sources) and any("part-00002" in s for s in sources)


def test_the_client_receives_no_session_row(tmp_path, engine) -> None:
    """What travels to the client does not grow with the sessions: twice the sessions in
    the same cells give outcomes of the same size."""
    import pickle

    from sessionval.workflow.distributed import score_and_write

    flat = _flat()
    folder = tmp_path / "one"
    builders.write_partitions(flat, folder, 1)
    doubled = pd.concat([flat, flat.assign(session_id=flat["session_id"].astype(str) + "-b")])
    builders.write_partitions(doubled, tmp_path / "two", 1)
    sizes = []
    for f in (folder, tmp_path / "two"):
        s = prepare_partitions(f, qrels=QRELS)
        job = PartitionJob(
            s.load, s.study, s.judgments, SessionConfig(), None, (), tmp_path / f.name
        )
        outcome, ids = score_and_write((0, s.files[0]), job)
        sizes.append(len(pickle.dumps(outcome)))
        assert sum(b.size for b in ids) == outcome.counts.n_sessions  # the ids stay on the worker
    assert sizes[1] < 1.1 * sizes[0]
