"""`run --engine dask` with the results left on the workers: the local run's outputs.

The study (a synthetic Latin-square study of 160 sessions, partitioned by searcher in
four files) is run locally and on a threaded cluster.  The workers' parts are the local
tables' rows; the summary, the report's scores, the comparisons, the figures' tables,
the correlations and the reformulation effects equal the local ones (counts exactly,
means and intervals to 1e-12); what the partial sums cannot give is said, not faked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sessionval.cli import main

distributed = pytest.importorskip("distributed")

from sessionval.evaluation.dask_engine import DaskEngine, dask_engine  # noqa: E402
from sessionval.workflow.job import run  # noqa: E402

KEYS = {
    "per_session": ["session_id"],
    "per_query": ["session_id", "query_pos"],
    "per_position": ["session_id", "query_pos", "position"],
    "reformulations": ["session_id", "from_pos"],
}


@pytest.fixture(scope="module")
def engine() -> Iterator[DaskEngine]:
    with dask_engine(workers=2, processes=False) as eng:
        yield eng


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """160 synthetic sessions in four Parquet files, each searcher's sessions in one."""
    root = tmp_path_factory.mktemp("synth")
    args = ["synth", "--sessions", "160", "--seed", "5", "--out", str(root)]
    assert main([*args, "--format", "parquet", "--no-progress"]) == 0
    flat = pd.read_parquet(root / "sessions.parquet")
    folder = root / "parts"
    (folder / "sessions").mkdir(parents=True)
    codes = pd.factorize(flat["user_id"].astype(str))[0]
    for i in range(4):
        part = flat[codes % 4 == i].reset_index(drop=True)
        part.to_parquet(folder / "sessions" / f"part-{i:05d}.parquet", index=False)
    for name in ("study.json", "qrels.txt"):
        (folder / name).write_bytes((root / name).read_bytes())
    return folder


@pytest.fixture(scope="module")
def outputs(study, engine, tmp_path_factory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("runs")
    qrels = study / "qrels.txt"
    local = run(study, qrels=qrels, out=out / "local", progress=False, table_formats=("parquet",))
    dist = run(study, qrels=qrels, out=out / "dist", progress=False, engine=engine)
    return out / "local", out / "dist", local, dist


def _plain(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    out = table.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype) or out[c].dtype == object:
            out[c] = out[c].astype(str)
    return out.sort_values(keys, kind="stable").reset_index(drop=True)


def test_the_workers_write_the_local_tables(outputs) -> None:
    local, dist, _, result = outputs
    assert result.per_session.empty  # on disk, not in this process
    for name, keys in KEYS.items():
        parts = sorted((dist / "tables" / name).glob("part-*.parquet"))
        assert [p.name for p in parts] == [f"part-{i:05d}.parquet" for i in range(4)], name
        want = pd.read_parquet(local / "tables" / f"{name}.parquet")
        got = pd.read_parquet(dist / "tables" / name)
        assert list(got.columns) == list(want.columns), name
        pd.testing.assert_frame_equal(_plain(got, keys), _plain(want, keys), check_dtype=False)
    manifest = (dist / ".sessionval-run.json").read_text()
    assert "tables/per_session/part-00003.parquet" in manifest


def test_the_summary_scores_and_statistics_are_the_local_ones(outputs) -> None:
    local, dist, local_result, result = outputs

    def summary(out: Path) -> str:
        return (out / "validation.txt").read_text().split("peak memory")[0]

    assert summary(dist) == summary(local)
    pd.testing.assert_frame_equal(
        result.score_table, local_result.score_table, check_exact=False, rtol=1e-12
    )
    for name in ("comparisons", "mixed_model"):
        assert (local / "tables" / f"{name}.csv").exists() or name == "comparisons"
    want = pd.read_csv(local / "tables" / "comparisons.csv")
    got = pd.read_csv(dist / "tables" / "comparisons.csv")
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-9, atol=1e-12)
    assert not (dist / "tables" / "mixed_model.csv").exists()  # needs every session's row
    report = (dist / "report.html").read_text()
    assert "mixed model" in report.lower() and "exports not written" in report
    assert not (dist / "exports").exists()


def test_the_figures_and_reformulations_are_the_local_ones(outputs) -> None:
    local, dist, _, _ = outputs
    tables = sorted(p.name for p in (local / "figures").glob("*.csv"))
    # the ratings' scatter has a point per session: not drawn from sums
    tables.remove("rating_correlations.csv")
    assert tables == sorted(p.name for p in (dist / "figures").glob("*.csv"))
    for name in tables:
        want, got = pd.read_csv(local / "figures" / name), pd.read_csv(dist / "figures" / name)
        assert list(got.columns) == list(want.columns), name
        num = [c for c in want.columns if want[c].dtype.kind == "f"]
        pd.testing.assert_frame_equal(got.drop(columns=num), want.drop(columns=num), obj=name)
        np.testing.assert_allclose(
            got[num].to_numpy(), want[num].to_numpy(), rtol=1e-9, atol=1e-7, err_msg=name
        )
    for name in ("reformulation_effects", "reformulation_transitions"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(dist / "tables" / f"{name}.parquet"),
            pd.read_parquet(local / "tables" / f"{name}.parquet"),
            check_exact=False,
            rtol=1e-12,
            check_dtype=False,
        )


def test_pearson_correlations_come_from_sums_and_the_rank_ones_are_said_missing(outputs) -> None:
    local, dist, _, _ = outputs
    want = pd.read_csv(local / "tables" / "rating_correlations.csv")
    got = pd.read_csv(dist / "tables" / "rating_correlations.csv")
    pearson = [c for c in want.columns if "pearson" in c]
    assert pearson and (got["n"] == want["n"]).all()
    np.testing.assert_allclose(got[pearson].to_numpy(), want[pearson].to_numpy(), rtol=1e-12)
    rank = [c for c in want.columns if "spearman" in c or "kendall" in c]
    assert rank and got[rank].isna().all().all()


def test_the_distributed_stages_read_only_what_earlier_stages_wrote(
    study, engine, tmp_path, monkeypatch
) -> None:
    import sessionval.workflow.job as job
    from sessionval.workflow.distributed_run import DISTRIBUTED_RESULT_READS, DISTRIBUTED_STAGES
    from tests.workflow.test_stages import Recording, assert_stage_discipline

    Recording.log = []
    monkeypatch.setattr(job, "RunState", Recording)
    result = run(study, qrels=study / "qrels.txt", out=tmp_path / "o", engine=engine)
    assert_stage_discipline(list(Recording.log), DISTRIBUTED_STAGES, result)
    released = {name for what, _, name in Recording.log if what == "release"}
    assert "scored" not in released and not released & DISTRIBUTED_RESULT_READS
