"""Partitions kept on the workers (evaluation/remote.py): the local engine's tables, bit for bit."""

from __future__ import annotations

import gc
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.analysis.summary import summarize
from sessionval.errors import SessionvalError, ValidationFailed
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.io.formats import load_input

distributed = pytest.importorskip("distributed")

from sessionval.evaluation.dask_engine import DaskEngine, dask_engine  # noqa: E402
from sessionval.evaluation.remote import (  # noqa: E402
    RemoteEvaluation,
    RemoteStudy,
    evaluate_remote,
    load_remote,
    score_remote,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_logs"
QRELS = SAMPLE / "qrels.txt"
POSITIONAL = ["esNDCG@5", "sRBP@5", "nCT@5", "EU@5"]


@pytest.fixture(scope="module")
def engine() -> Iterator[DaskEngine]:
    """Two threaded workers in this process: small and quick."""
    with dask_engine(workers=2, processes=False) as eng:
        yield eng


def write_interleaved(folder: Path, n_parts: int = 3, *, bad: bool = False) -> list[Path]:
    """The sample study as partitions holding every n-th session (in reverse), the first with
    digit ids.

    The study's id order (code points: the ids are not all digits) then interleaves
    the partitions, and differs from the first partition's own order (numeric).
    With ``bad``, a result row of one session of the last partition has rank 0.
    """
    flat = pd.read_parquet(SAMPLE / "sessions.parquet")
    codes = pd.factorize(flat["session_id"].astype(str))[0]
    part_of = codes % n_parts
    ids = flat["session_id"].astype(str).to_numpy(dtype=object)
    digits = part_of == 0
    ids[digits] = [str(c) for c in codes[digits]]  # "9" < "12" numerically only
    own = sorted(set(ids[digits]))
    assert own != sorted(own, key=int)  # the first partition's own order is not the study's
    flat["session_id"] = ids
    if bad:
        row = int(np.flatnonzero((part_of == n_parts - 1) & (flat["rank"] == 2))[0])
        flat.loc[row, "rank"] = 0
    folder.mkdir(parents=True)
    shutil.copy(SAMPLE / "study.json", folder / "study.json")
    files = []
    for i in range(n_parts):
        files.append(folder / f"part-{i:05d}.parquet")
        rows = np.flatnonzero(part_of == i)
        rows = rows[np.argsort(-codes[rows], kind="stable")]  # sessions in reverse: not id order
        flat.iloc[rows].reset_index(drop=True).to_parquet(files[-1], index=False)
    return files


@pytest.fixture(scope="module")
def parts(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("remote") / "parts"
    write_interleaved(folder)
    return folder


def tables(ev) -> list[pd.DataFrame]:
    return [ev.per_session(), ev.per_query(), ev.per_position()]


CONFIGS = [
    SessionConfig(),
    SessionConfig(duplicates="drop", ideal="no-repeat", unjudged="condense", cutoff=4),
]


def test_the_client_holds_no_result_row(engine, parts) -> None:
    here = load_input(parts, qrels=QRELS)
    there = load_remote(parts, engine, qrels=QRELS)
    assert isinstance(there, RemoteStudy) and there.frame.n_results == 0
    assert there.n_results == here.frame.n_results > 0
    assert there.frame.n_sessions == here.frame.n_sessions == 120
    pd.testing.assert_frame_equal(there.frame.sessions, here.frame.sessions, check_exact=True)
    pd.testing.assert_frame_equal(there.frame.queries, here.frame.queries, check_exact=True)
    assert there.report.summary_line() == here.report.summary_line()
    # the summary (coverage counted on the workers) is the local one
    assert summarize(there).to_text() == summarize(here).to_text()


@pytest.mark.parametrize("config", CONFIGS)
def test_scored_on_the_workers_gives_the_local_tables(engine, parts, config) -> None:
    measures = ["nsDCG(b=4)@5", "last(AP)", "nDCG@5", *POSITIONAL]
    here = load_input(parts, qrels=QRELS)
    ref = evaluate(here.frame, here.judgments, config, measures=measures)
    ev = evaluate_remote(load_remote(parts, engine, qrels=QRELS), config, measures=measures)
    assert isinstance(ev, RemoteEvaluation)
    for x, y in zip(tables(ev), tables(ref), strict=True):
        pd.testing.assert_frame_equal(x, y, check_exact=True)
    assert ev.counts() == ref.counts()
    pd.testing.assert_frame_equal(ev.summary(), ref.summary(), check_exact=True)
    for a, b in [(ev.ranked_gains(), ref.ranked_gains()), (ev.row_gains(), ref.row_gains())]:
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    # by chunks of queries (the figures' curves): the same rows, here and on the workers
    n_q = ref.query_session.size
    chunks = [(0, 0), (0, 7), (7, n_q // 2), (n_q // 2, n_q + 5)]
    for k in range(3):
        whole = ref.ranked_gains()[k]
        parts_k = [ref.ranked_gains(queries=c)[k] for c in chunks]
        np.testing.assert_array_equal(np.concatenate(parts_k), whole)
        for c, part in zip(chunks, parts_k, strict=True):
            np.testing.assert_array_equal(ev.ranked_gains(queries=c)[k], part)
    p, q = ev.positions(), ref.positions()
    for name in ("session", "query", "slot", "frame_row", "grade", "gain", "sdcg", "ideal"):
        np.testing.assert_array_equal(getattr(p, name), getattr(q, name), err_msg=name)


def test_searchers_grades_pool_the_whole_study(engine, parts) -> None:
    """The searcher ideal depends on every partition: the frames are gathered for it."""
    config = SessionConfig(judgments="searcher")
    here = load_input(parts, qrels=QRELS)
    ref = evaluate(here.frame, here.judgments, config)
    ev = evaluate_remote(load_remote(parts, engine, qrels=QRELS), config)
    for x, y in zip(tables(ev), tables(ref), strict=True):
        pd.testing.assert_frame_equal(x, y, check_exact=True)


def test_books_add_up_and_problems_name_their_file(engine, tmp_path) -> None:
    files = write_interleaved(tmp_path / "bad", bad=True)
    with pytest.raises(ValidationFailed) as failed:
        load_remote(tmp_path / "bad", engine, qrels=QRELS)
    assert all(files[-1].name in str(p) for p in failed.value.problems)
    here = load_input(tmp_path / "bad", qrels=QRELS, mode="lenient")
    there = load_remote(tmp_path / "bad", engine, qrels=QRELS, mode="lenient")
    r = there.report
    assert r.sessions_rejected == 1 and r.records_read == r.sessions_accepted + 1 == 120
    assert r.summary_line() == here.report.summary_line()
    pd.testing.assert_frame_equal(r.rejects, here.report.rejects)
    ref = evaluate(here.frame, here.judgments)
    for x, y in zip(tables(evaluate_remote(there)), tables(ref), strict=True):
        pd.testing.assert_frame_equal(x, y, check_exact=True)


def test_a_partition_left_without_sessions(engine, tmp_path) -> None:
    """Lenient mode rejects every session of a file: the other files' tables are the local ones."""
    files = write_interleaved(tmp_path / "p")
    flat = pd.read_parquet(files[-1])
    flat["rank"] = 0
    flat.to_parquet(files[-1], index=False)
    here = load_input(tmp_path / "p", qrels=QRELS, mode="lenient")
    there = load_remote(tmp_path / "p", engine, qrels=QRELS, mode="lenient")
    assert there.part_sessions == (40, 40, 0) and there.report.sessions_rejected == 40
    measures = ["nDCG@5", "last(AP)", "esNDCG@5"]
    ref = evaluate(here.frame, here.judgments, measures=measures)
    for x, y in zip(tables(evaluate_remote(there, measures=measures)), tables(ref), strict=True):
        pd.testing.assert_frame_equal(x, y, check_exact=True)


@pytest.mark.parametrize("config", CONFIGS)
def test_one_pass_gives_the_local_tables_and_keeps_no_rows(engine, parts, config) -> None:
    """score_remote: validated and scored in one pass, nothing left on the workers."""
    measures = ["nsDCG(b=4)@5", "last(AP)", "nDCG@5", *POSITIONAL]
    here = load_input(parts, qrels=QRELS)
    ref = evaluate(here.frame, here.judgments, config, measures=measures)
    before = held_by_workers(engine)
    study, ev = score_remote(parts, engine, config, measures=measures, qrels=QRELS)
    assert isinstance(study, RemoteStudy) and study.parts == () and study.n_results > 0
    assert study.report.summary_line() == here.report.summary_line()
    for x, y in zip([ev.per_session(), ev.per_query()], tables(ref)[:2], strict=True):
        pd.testing.assert_frame_equal(x, y, check_exact=True)
    assert ev.counts() == ref.counts()
    pd.testing.assert_frame_equal(ev.summary(), ref.summary(), check_exact=True)
    for needs_rows in (ev.positions, ev.per_position, ev.row_gains):
        with pytest.raises(SessionvalError, match="kept no result rows"):
            needs_rows()
    with pytest.raises(SessionvalError, match="not kept on the workers"):
        evaluate_remote(study, config)
    del study, ev
    assert held_by_workers(engine) <= before  # every task's result released


def held_by_workers(engine: DaskEngine, wait: float = 10.0) -> set[str]:
    """The keys the workers hold once the released ones are gone (releasing is asynchronous)."""
    gc.collect()
    deadline = time.monotonic() + wait
    held: set[str] = set()
    while True:
        held = {str(k) for keys in engine.client.has_what().values() for k in keys}
        if not any(k.startswith(("_apply", "_scores_of_load", "without_results")) for k in held):
            return held
        if time.monotonic() > deadline:
            return held
        time.sleep(0.05)


def test_validate_keeps_nothing_on_the_workers(engine, parts) -> None:
    kept = load_remote(parts, engine, qrels=QRELS)
    dropped = load_remote(parts, engine, qrels=QRELS, keep=False)
    assert dropped.parts == () and len(kept.parts) == len(dropped.part_sessions) == 3
    assert dropped.report.summary_line() == kept.report.summary_line()
    assert summarize(dropped).to_text() == summarize(kept).to_text()
    with pytest.raises(SessionvalError, match="not kept on the workers"):
        evaluate_remote(dropped)


def test_one_pass_books_and_problems(engine, tmp_path) -> None:
    files = write_interleaved(tmp_path / "bad", bad=True)
    with pytest.raises(ValidationFailed) as failed:
        score_remote(tmp_path / "bad", engine, qrels=QRELS)
    assert all(files[-1].name in str(p) for p in failed.value.problems)
    here = load_input(tmp_path / "bad", qrels=QRELS, mode="lenient")
    study, ev = score_remote(tmp_path / "bad", engine, qrels=QRELS, mode="lenient")
    assert study.report.sessions_rejected == 1
    pd.testing.assert_frame_equal(study.report.rejects, here.report.rejects)
    ref = evaluate(here.frame, here.judgments)
    pd.testing.assert_frame_equal(ev.per_session(), ref.per_session(), check_exact=True)


def test_one_pass_with_searchers_grades_keeps_the_study(engine, parts) -> None:
    """The searcher ideal pools every partition: score_remote keeps and gathers them."""
    config = SessionConfig(judgments="searcher")
    here = load_input(parts, qrels=QRELS)
    ref = evaluate(here.frame, here.judgments, config)
    study, ev = score_remote(parts, engine, config, qrels=QRELS)
    assert len(study.parts) == 3
    for x, y in zip(tables(ev), tables(ref), strict=True):
        pd.testing.assert_frame_equal(x, y, check_exact=True)
