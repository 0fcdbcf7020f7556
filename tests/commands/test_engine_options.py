"""`--engine dask` on validate, run and evaluate: the local engine's output, on a LocalCluster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from sessionval.cli import main
from tests import builders

distributed = pytest.importorskip("distributed")

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_logs"
QRELS = "1 0 a 2\n1 0 b 0\n1 0 c 1\n2 0 a 1\n"
RUN = "1 Q0 b 1 3.0 t\n1 Q0 a 2 2.0 t\n1 Q0 c 3 2.0 t\n2 Q0 a 1 1 t\n"


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A running threaded cluster in this process: what --scheduler connects to."""
    with distributed.LocalCluster(
        n_workers=2, processes=False, threads_per_worker=1, dashboard_address=":0"
    ) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def parts(tmp_path_factory) -> Path:
    """A synthetic study of 40 sessions as four Parquet partitions."""
    root = tmp_path_factory.mktemp("synth")
    assert (
        main(
            [
                "synth",
                "--sessions",
                "40",
                "--seed",
                "11",
                "--out",
                str(root),
                "--format",
                "parquet",
                "--no-progress",
            ]
        )
        == 0
    )
    folder = root / "parts"
    builders.write_partitions(pd.read_parquet(root / "sessions.parquet"), folder / "sessions", 4)
    (folder / "study.json").write_bytes((root / "study.json").read_bytes())
    (folder / "qrels.txt").write_bytes((root / "qrels.txt").read_bytes())
    return folder


def test_validate_a_glob_on_a_cluster(parts, scheduler, capsys) -> None:
    qrels = str(parts / "qrels.txt")
    assert main(["validate", str(parts), "--qrels", qrels]) == 0
    local = capsys.readouterr().out
    pattern = str(parts / "sessions" / "part-*.parquet")
    assert (
        main(["validate", pattern, "--qrels", qrels, "--engine", "dask", "--scheduler", scheduler])
        == 0
    )
    assert capsys.readouterr().out == local
    assert local.startswith("40 records read = 40 sessions accepted + 0 rejected")


def test_validate_on_a_cluster_counts_the_partitions_validated(parts, scheduler, capsys) -> None:
    from tests.commands.test_progress import phases_at_totals

    pattern = str(parts / "sessions" / "part-*.parquet")
    args = ["validate", pattern, "--qrels", str(parts / "qrels.txt"), "--engine", "dask"]
    assert main([*args, "--scheduler", scheduler, "--progress"]) == 0
    assert phases_at_totals(capsys.readouterr().err)["validating 4 partitions"] == (4, 4)


def test_run_on_a_local_cluster_writes_the_local_tables(parts, tmp_path) -> None:
    """The multi-file study through `run --engine dask --workers 1 --results client` (a
    worker process: every chunk and partition is pickled) writes the local run's tables
    byte for byte."""
    qrels = str(parts / "qrels.txt")
    assert main(["run", str(parts), "--qrels", qrels, "--out", str(tmp_path / "local")]) == 0
    assert (
        main(
            [
                "run",
                str(parts),
                "--qrels",
                qrels,
                "--out",
                str(tmp_path / "dask"),
                "--engine",
                "dask",
                "--workers",
                "1",
                "--results",
                "client",
            ]
        )
        == 0
    )
    for name in ("per_position", "per_query", "per_session"):
        a = (tmp_path / "local" / "tables" / f"{name}.csv").read_bytes()
        assert a == (tmp_path / "dask" / "tables" / f"{name}.csv").read_bytes(), name
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "dask" / "tables" / f"{name}.parquet"),
            pd.read_parquet(tmp_path / "local" / "tables" / f"{name}.parquet"),
            check_exact=True,
        )
    # the figures' tables (from positions and gains gathered from the workers) and the summary
    # reformulations need every result row on the client: a study kept on the workers
    # has none (docs/reformulations.md), so their figures are the local run's only
    local_only = {"reformulation_gains.csv", "reformulation_transitions.csv"}
    figures = sorted(p.name for p in (tmp_path / "local" / "figures").glob("*.csv"))
    assert local_only <= set(figures)
    figures = [f for f in figures if f not in local_only]
    assert figures and figures == sorted(
        p.name for p in (tmp_path / "dask" / "figures").glob("*.csv")
    )
    for name in figures:
        a = (tmp_path / "local" / "figures" / name).read_bytes()
        assert a == (tmp_path / "dask" / "figures" / name).read_bytes(), name

    def summary(run: str) -> str:
        text = (tmp_path / run / "validation.txt").read_text()
        return text.split("peak memory")[0]

    assert summary("dask") == summary("local")


def test_run_without_row_outputs_scores_in_one_pass(
    parts, scheduler, tmp_path, monkeypatch
) -> None:
    """`run --no-figures --no-per-position --engine dask --results client`: each partition
    scored as it is validated (score_partitions), nothing kept on the workers; the local
    run's tables."""
    import sessionval.workflow.job as job

    calls = []

    def spy(*args, **kwargs):
        calls.append(args[0])
        return score_partitions(*args, **kwargs)

    score_partitions = job.score_partitions
    monkeypatch.setattr(job, "score_partitions", spy)
    qrels = str(parts / "qrels.txt")
    lean = ["--no-figures", "--no-per-position", "--tables", "parquet"]
    out = {"local": tmp_path / "local", "dask": tmp_path / "dask"}
    assert main(["run", str(parts), "--qrels", qrels, "--out", str(out["local"]), *lean]) == 0
    assert not calls
    args = ["run", str(parts), "--qrels", qrels, "--out", str(out["dask"]), *lean]
    assert main([*args, "--engine", "dask", "--scheduler", scheduler, "--results", "client"]) == 0
    assert len(calls) == 1 and len(calls[0].files) == 4
    for name in ("per_query", "per_session"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(out["dask"] / "tables" / f"{name}.parquet"),
            pd.read_parquet(out["local"] / "tables" / f"{name}.parquet"),
            check_exact=True,
        )
    for o in out.values():
        assert not (o / "figures").exists() and not (o / "tables" / "per_position.parquet").exists()
        report = (o / "report.html").read_text()
        assert "No figure in this run" in report and "--no-figures" in report
    assert (out["dask"] / "validation.txt").read_text().split("peak memory")[0] == (
        out["local"] / "validation.txt"
    ).read_text().split("peak memory")[0]


def test_evaluate_on_a_cluster_prints_the_local_values(tmp_path, scheduler, capsys) -> None:
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    args = ["evaluate", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-q"]
    assert main(args) == 0
    local = capsys.readouterr()
    assert main([*args, "--engine", "dask", "--scheduler", scheduler]) == 0
    on_cluster = capsys.readouterr()
    assert on_cluster.out == local.out and "nDCG@10\t1\t" in local.out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workers", "2"], "--scheduler and --workers need --engine dask"),
        (["--engine", "dask", "--workers", "2", "--scheduler", "tcp://x:1"], "not both"),
    ],
)
def test_engine_option_errors(extra, message, capsys) -> None:
    assert main(["validate", str(SAMPLE), *extra]) == 2
    assert message in capsys.readouterr().err


def test_a_glob_matching_nothing_is_a_usage_error(tmp_path, capsys) -> None:
    assert main(["validate", str(tmp_path / "part-*.parquet")]) == 2
    assert "no file matches this pattern" in capsys.readouterr().err
