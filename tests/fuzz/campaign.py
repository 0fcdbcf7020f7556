"""The offline fuzz campaign: many inputs per target, a table of outcomes and findings.

``python -m tests.fuzz.campaign --examples 2000 --seed 0 --out fuzz-report`` runs the
same checks as the test suite (:mod:`tests.fuzz.harness`) on ``--examples`` inputs
per target, prints per target how many inputs were read, rejected with a located
error, or ended in a finding, and writes every finding (with the input that caused
it) under ``--out``.  ``--cli-every N`` also runs the command line on every N-th input.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from .corpus import TARGETS, build_seeds
from .harness import check_cli, check_reader, make_input


def signature(detail: str) -> str:
    """A finding's class: exception type and where it was raised (not the message's values)."""
    kind = detail.split(":", 1)[0]
    where = detail.rsplit(" at ", 1)[-1] if " at " in detail else detail[:80]
    return f"{kind} at {where}"


def run(
    examples: int,
    seed: int,
    out: Path,
    cli_every: int,
    targets: list[str] | None,
    evaluate_every: int = 1,
) -> dict[str, object]:
    """Run the campaign; return the summary written to ``out/summary.json``."""
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="sessionval-fuzz-"))
    seeds = build_seeds(work / "seeds", seed=seed)
    summary: dict[str, object] = {"examples": examples, "seed": seed, "targets": {}}
    for target in TARGETS:
        if targets and target.name not in targets:
            continue
        counts: Counter[str] = Counter()
        found: Counter[str] = Counter()
        t0 = time.perf_counter()
        for i in range(examples):
            s = seed * 1_000_003 + i
            folder, ops = make_input(target, seeds, work / "inputs", s)
            outcome = check_reader(target, folder, s, ops, evaluate_it=i % evaluate_every == 0)
            if target.load is None or (cli_every and i % cli_every == 0):
                extra = ("--lenient",) if target.argv[0] == "validate" and i % 2 else ()
                cli = check_cli(target, folder, s, ops, extra)
                outcome.steps.update(cli.steps)
                outcome.findings += cli.findings
            for step, result in outcome.steps.items():
                counts[f"{step}:{result}"] += 1
            if outcome.findings:
                counts["inputs with a finding"] += 1
            for f in outcome.findings:
                key = f.known or f"NEW {f.kind}: {signature(f.detail)}"
                found[key] += 1
                if found[key] <= 3:  # keep a few inputs of each finding
                    dest = out / "inputs" / f"{target.name}-{s}"
                    shutil.copytree(folder, dest, dirs_exist_ok=True)
                    with (out / "findings.txt").open("a", encoding="utf-8") as fh:
                        fh.write(f.line() + f"  input: {dest}\n")
            shutil.rmtree(folder, ignore_errors=True)
        secs = time.perf_counter() - t0
        summary["targets"][target.name] = {  # type: ignore[index]
            "inputs": examples,
            "seconds": round(secs, 1),
            "outcomes": dict(sorted(counts.items())),
            "findings": dict(found.most_common()),
        }
        print(f"{target.name}: {examples} inputs, {secs:.0f} s, {dict(sorted(counts.items()))}")
        for key, n in found.most_common():
            print(f"    {n:5d}  {key}")
        sys.stdout.flush()
        (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)
    return summary


def main() -> None:
    """Command line of the campaign."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--examples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("fuzz-report"))
    ap.add_argument("--cli-every", type=int, default=10)
    ap.add_argument("--evaluate-every", type=int, default=1)
    ap.add_argument("--target", action="append")
    args = ap.parse_args()
    run(args.examples, args.seed, args.out, args.cli_every, args.target, args.evaluate_every)


if __name__ == "__main__":
    main()
