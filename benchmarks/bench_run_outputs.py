"""The main job at scale: ``sessionval run`` against ``validate`` of the same study; its outputs.

Not a test.  Each command runs in its own process (one after the other); the report
gives its wall time, CPU time and peak resident memory (the larger of ``ru_maxrss`` of
that child, from ``os.wait4``, and the sum over the child and the processes it started,
sampled: the run's second process for the figures counts), and for ``run`` the bytes
written per kind of output (``tables/``, ``figures/``, ``exports/``, ``report.html``,
the rest), the largest file of each kind and the largest figure file, and each stage of
the run (:data:`sessionval.workflow.job.STAGES`): its wall time, the process's peak
resident memory after it (the stage that raises it is the one that sets the run's
peak) and the memory still resident after it.  Issue 26's targets: run at most 2x
the wall time and 1.5x the peak memory of validate, all outputs under 1 GB, no figure
file over 5 MB.

    sessionval synth --sessions 200000 --format parquet --out /tmp/big
    python benchmarks/bench_run_outputs.py --study /tmp/big --out /tmp/big-run

The run is :func:`sessionval.workflow.run` with the defaults of ``sessionval run``
(options after ``--``: ``--config FILE``, ``--no-per-position``, ``--tables parquet``,
``--no-figures``, ``--no-exports``).

``--csv N`` instead compares the CSV writers on a long score table of N rows (ids, a
categorical measure, a float value with missing values): pandas' ``to_csv`` against
:func:`sessionval.output.csv_writer.write_csv` (Arrow, in pieces), with their sizes
and whether both read back to the same table.

    python benchmarks/bench_run_outputs.py --csv 5000000 --out /tmp/csvbench
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

KINDS = ("tables", "figures", "exports", "report.html")


def timed(argv: list[str]) -> dict[str, float]:
    """Wall time (s), peak memory (MB) and CPU time (s) of one command in its own process.

    The peak is the larger of the child's ``ru_maxrss`` and the resident memory of the
    child and every process it started, summed, sampled every 50 ms (``psutil``): a run
    that renders its figures in a second process is charged for both.
    """
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err_file:  # a file: the child never blocks on stderr
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err_file)
        assert proc.stdout is not None
        tree = _TreeMemory(proc.pid)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)  # ru_maxrss of this child (and its children)
        tree.stop()
        err_file.seek(0)
        err = err_file.read()
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{' '.join(argv)} ended with {code}: {err.decode(errors='replace')[-2000:]}")
    notes = [ln for ln in err.decode(errors="replace").splitlines() if ln.startswith("note:")]
    result = {
        "wall_s": wall,
        "peak_mb": max(usage.ru_maxrss / 1024, tree.peak_mb),
        "process_peak_mb": usage.ru_maxrss / 1024,
        "tree_peak_mb": round(tree.peak_mb),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "notes": notes,
    }
    for line in out.decode(errors="replace").splitlines():
        if line.startswith(_STAGES_LINE):  # the run's own profile of its stages
            result.update(json.loads(line[len(_STAGES_LINE) :]))
    return result  # type: ignore[return-value]


class _TreeMemory:
    """The largest sum of resident memory of a process and its descendants, sampled."""

    def __init__(self, pid: int, every: float = 0.05) -> None:
        import threading

        import psutil

        self.peak_mb = 0.0
        self._root = psutil.Process(pid)
        self._done = threading.Event()
        self._every = every
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        import psutil

        while not self._done.wait(self._every):
            try:
                procs = [self._root, *self._root.children(recursive=True)]
                total = 0
                for p in procs:
                    try:
                        total += p.memory_info().rss
                    except psutil.Error:
                        pass
            except psutil.Error:
                return
            self.peak_mb = max(self.peak_mb, total / 2**20)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


_STAGES_LINE = "stages: "

#: The child that runs ``sessionval run``: the workflow's ``run`` with the command's
#: defaults, printing its notes and its stages' profile.
_RUN_CHILD = """
import json, sys
from pathlib import Path
from sessionval.workflow import run
study, qrels, out, config, per_position, tables, figures, exports = json.loads(sys.argv[1])
res = run(
    Path(study), qrels=Path(qrels), out=Path(out), progress=False,
    config_path=Path(config) if config else None, per_position=per_position,
    table_formats=tables, figures=figures, exports=exports,
)
for note in res.notes:
    print("note:", note, file=sys.stderr)
stages = [dict(name=s.name, s=round(s.seconds, 1), peak_mb=round(s.peak_mb),
               rss_mb=round(s.rss_mb)) for s in res.stages]
print("stages: " + json.dumps({"stages": stages}))
"""


def run_child(study: Path, qrels: Path, out: Path, extra: list[str]) -> list[str]:
    """The argv of the run's child process, from ``sessionval run``'s options in ``extra``."""
    ap = argparse.ArgumentParser(prog="sessionval run (benchmark)")
    ap.add_argument("--config", default=None)
    ap.add_argument("--per-position", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--tables", choices=["both", "csv", "parquet"], default="both")
    ap.add_argument("--figures", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--exports", action=argparse.BooleanOptionalAction, default=None)
    opts = ap.parse_args(extra)
    tables = ["csv", "parquet"] if opts.tables == "both" else [opts.tables]
    given = [str(study), str(qrels), str(out), opts.config, opts.per_position, tables,
             opts.figures, opts.exports]  # fmt: skip
    return [sys.executable, "-c", _RUN_CHILD, json.dumps(given)]


def output_sizes(out: Path) -> dict[str, object]:
    """Bytes per kind of output, the largest file of each kind, the largest figure file."""
    total: dict[str, int] = defaultdict(int)
    largest: dict[str, tuple[int, str]] = {}
    image = (0, "")
    for path in out.rglob("*"):
        if not path.is_file():
            continue
        rel = path.relative_to(out)
        kind = rel.parts[0] if rel.parts[0] in KINDS else "other"
        size = path.stat().st_size
        total[kind] += size
        if size > largest.get(kind, (-1, ""))[0]:
            largest[kind] = (size, rel.as_posix())
        if path.suffix in (".png", ".svg", ".pdf") and size > image[0]:
            image = (size, rel.as_posix())
    mb = {k: round(v / 1e6, 1) for k, v in sorted(total.items())}
    return {
        "total_mb": round(sum(total.values()) / 1e6, 1),
        "mb_by_kind": mb,
        "largest": {k: f"{v[1]} ({v[0] / 1e6:.1f} MB)" for k, v in sorted(largest.items())},
        "largest_image": f"{image[1]} ({image[0] / 1e6:.2f} MB)",
    }


def bench_run(study: Path, qrels: Path, out: Path, extra: list[str]) -> dict[str, object]:
    cli = [sys.executable, "-c", "import sys; from sessionval.cli import main; sys.exit(main())"]
    validate = timed([*cli, "validate", str(study), "--qrels", str(qrels)])
    if out.exists():
        shutil.rmtree(out)
    run = timed(run_child(study, qrels, out, extra))
    sizes = output_sizes(out)
    return {
        "validate": validate,
        "run": run,
        "outputs": sizes,
        "ratios": {
            "wall": round(run["wall_s"] / validate["wall_s"], 2),
            "peak_memory": round(run["peak_mb"] / validate["peak_mb"], 2),
        },
    }


def bench_csv(n: int, out: Path) -> dict[str, object]:
    import numpy as np
    import pandas as pd

    from sessionval.output.csv_writer import write_csv

    rng = np.random.default_rng(1)
    per, m = max(n // 20, 1), 20
    table = pd.DataFrame(
        {
            "session_id": np.repeat(np.array([f"s{i:07d}" for i in range(per)], dtype=object), m),
            "user_id": pd.Categorical(np.repeat(rng.integers(0, 5000, per), m).astype(str)),
            "topic_id": pd.Categorical(np.repeat(rng.integers(0, 30, per), m).astype(str)),
            "system_id": pd.Categorical(np.repeat(rng.integers(0, 2, per), m).astype(str)),
            "measure": pd.Categorical(np.tile([f"m{j}" for j in range(m)], per)),
            "value": rng.random(per * m),
        }
    )
    table.loc[::17, "value"] = np.nan
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, object] = {"rows": len(table)}
    for name, write in (
        ("pandas_to_csv", lambda p: table.to_csv(p, index=False)),
        ("write_csv", lambda p: write_csv(table, p)),
    ):
        path = out / f"{name}.csv"
        t0 = time.perf_counter()
        write(path)
        secs = time.perf_counter() - t0
        size = path.stat().st_size
        result[name] = {
            "s": round(secs, 1),
            "mb": round(size / 1e6),
            "mb_per_s": round(size / 1e6 / secs, 1),
        }
    back = [pd.read_csv(out / f"{name}.csv") for name in ("pandas_to_csv", "write_csv")]
    result["same_values_read_back"] = bool(back[0].equals(back[1]))
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--study", type=Path, help="a study folder (sessionval synth --out)")
    ap.add_argument("--qrels", type=Path, help="default: STUDY/qrels.txt")
    ap.add_argument("--out", type=Path, required=True, help="the run's output folder (replaced)")
    ap.add_argument("--csv", type=int, default=0, help="compare the CSV writers on N rows instead")
    ap.add_argument("extra", nargs="*", help="further options of sessionval run (after --)")
    args = ap.parse_args()
    if args.csv:
        report = bench_csv(args.csv, args.out)
    else:
        if args.study is None:
            ap.error("--study is required (or --csv N)")
        qrels = args.qrels or args.study / "qrels.txt"
        report = bench_run(args.study, qrels, args.out, args.extra)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
