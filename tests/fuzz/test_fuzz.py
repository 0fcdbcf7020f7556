"""The fuzz suite (issue 10, item 8): mutated inputs of every format, strict and lenient, and the
command line; no exception but the toolkit's own, no hang, balanced books, evaluable studies.

Bounded for CI: ``SESSIONVAL_FUZZ_EXAMPLES`` inputs per target (default 16) and a quarter as
many command lines; ``SESSIONVAL_FUZZ_SEED`` moves to other inputs.  The offline campaign
(thousands of inputs per format, a report of every finding) is ``python -m
tests.fuzz.campaign`` (``docs/reliability.md``, "Fuzz suite").
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sessionval.errors import ParseError, SessionvalError
from sessionval.frame import LoadedStudy

from .corpus import TARGETS, Target, build_seeds
from .harness import (
    Finding,
    Hang,
    base_seed,
    bounded,
    check_cli,
    check_reader,
    examples,
    make_input,
)
from .known import KNOWN_FINDINGS, Known, match_known

READERS = [t for t in TARGETS if t.load is not None]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> Path:
    return build_seeds(tmp_path_factory.mktemp("seeds"), seed=base_seed())


def _report(findings: list[Finding]) -> str:
    return "\n".join(f.line() for f in findings)


@pytest.mark.parametrize("target", READERS, ids=lambda t: t.name)
def test_mutated_inputs_give_a_study_or_a_located_error(target: Target, seeds, tmp_path):
    n = examples(16)
    found: list[Finding] = []
    outcomes = set()
    for i in range(n):
        seed = base_seed() * 1_000_003 + i
        folder, ops = make_input(target, seeds, tmp_path, seed)
        outcome = check_reader(target, folder, seed, ops)
        outcomes.update(outcome.steps.values())
        found += outcome.findings
    new = [f for f in found if f.known is None]
    assert not new, f"{len(new)} finding(s) in {n} inputs:\n{_report(new)}"
    assert outcomes, "no input was read at all"


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_mutated_inputs_on_the_command_line(target: Target, seeds, tmp_path):
    n = max(2, examples(16) // 4)
    found: list[Finding] = []
    for i in range(n):
        seed = base_seed() * 1_000_003 + 500_000 + i
        folder, ops = make_input(target, seeds, tmp_path, seed)
        extra = ("--lenient",) if target.argv[0] == "validate" and i % 2 else ()
        found += check_cli(target, folder, seed, ops, extra).findings
    new = [f for f in found if f.known is None]
    assert not new, f"{len(new)} finding(s):\n{_report(new)}"


# ------------------------------------------------------------------ the harness can fail


def _fake(load) -> Target:
    return Target("fake", "study", {"sessions.jsonl": "json"}, load, ("validate", "{dir}"))


def test_the_harness_reports_a_foreign_exception(seeds):
    def load(folder: Path, mode: str) -> LoadedStudy:
        raise KeyError("rank")

    out = check_reader(_fake(load), seeds / "study", 0, [])
    assert [f.kind for f in out.findings] == ["exception", "exception"]
    assert "KeyError" in out.findings[0].detail


def test_the_harness_accepts_the_toolkits_errors(seeds):
    def load(folder: Path, mode: str) -> LoadedStudy:
        raise ParseError("x.jsonl:1: not JSON")

    out = check_reader(_fake(load), seeds / "study", 0, [])
    assert out.findings == [] and out.steps == {"strict": "error", "lenient": "error"}


def test_the_harness_reports_unbalanced_books(seeds):
    from sessionval.io.study import load_study

    def load(folder: Path, mode: str) -> LoadedStudy:
        loaded = load_study(folder, mode=mode)
        loaded.report.records_read += 1  # one record lost without a word
        return loaded

    out = check_reader(_fake(load), seeds / "study", 0, [])
    assert [f.kind for f in out.findings] == ["books"]


def test_the_time_bound_stops_a_hang():
    t0 = time.perf_counter()
    with pytest.raises(Hang), bounded(0.2):
        while True:
            pass
    assert time.perf_counter() - t0 < 5


def test_known_findings_match_by_target_kind_and_detail(monkeypatch):
    monkeypatch.setitem(
        KNOWN_FINDINGS,
        "TEST-1",
        Known(("jsonl",), ("exception",), r"RecursionError", "nobody", "a test entry"),
    )
    hit = Finding("jsonl", 0, "strict", "exception", "RecursionError: deep", [])
    miss = Finding("csv", 0, "strict", "exception", "RecursionError: deep", [])
    assert match_known(hit) == "TEST-1"
    assert match_known(miss) is None


def test_every_known_finding_names_its_owner_and_repro():
    for fid, k in KNOWN_FINDINGS.items():
        assert k.owner and k.repro and k.kinds and k.targets, fid


def test_a_valid_seed_of_every_target_is_read(seeds):
    for target in READERS:
        loaded = target.load(seeds / target.folder, "strict")
        assert loaded.report.sessions_accepted == loaded.frame.n_sessions > 0
    for target in TARGETS:
        folder = seeds / target.folder
        assert check_cli(target, folder, 0, []).steps["cli"] == "0", target.name


def test_toolkit_errors_are_value_errors():
    # the CLI maps the family to exit code 2; anything else escaping is a finding
    assert issubclass(SessionvalError, ValueError)


# ------------------------------------------------------------------ argument vectors

_VALUES = ("", "0", "-1", "99999999999999999999", "abc", "nan", "--lenient", "-", "@x", "é",
           "$\\frac{1}$", "a\u2028b", "/nonexistent/file")  # fmt: skip
_OPTIONS = {
    "validate": ("--from", "--map", "--year", "--text", "--depth", "--max-problems",
                 "--topics", "--topic-map", "--header", "--qrels", "--engine", "--workers"),
    "convert": ("--from", "--to", "--map", "--year", "--depth", "--qrels", "--text"),
    "evaluate": ("-m", "--format", "--ties", "--empty", "--negative", "--unjudged", "--engine"),
    "measures": ("--format", "--family"),
}  # fmt: skip


def _argv(rng, folder: Path, out: Path) -> list[str]:
    """A command line of a random command, with options and values good and bad."""
    cmd = rng.choice(sorted(_OPTIONS))
    args = [cmd]
    if cmd in ("validate", "convert"):
        args.append(str(folder / rng.choice(["", "sessions.jsonl", "qrels.txt", "study.json"])))
    if cmd == "convert":
        args += ["--out", str(out / f"o{rng.randrange(1000)}")]
    if cmd == "evaluate":
        args += [str(folder / "qrels.txt"), str(folder / rng.choice(["qrels.txt", "study.json"]))]
    for _ in range(rng.randint(0, 3)):
        args += [rng.choice(_OPTIONS[cmd]), rng.choice(_VALUES)]
    if rng.random() < 0.3:
        args.append(rng.choice(["--lenient", "--bogus", "-q", "--help"]))
    return args


def test_random_command_lines_end_with_an_exit_code(seeds, tmp_path):
    import random

    rng = random.Random(base_seed())
    found: list[Finding] = []
    for i in range(max(4, examples(16))):
        argv = _argv(rng, seeds / "study", tmp_path)
        target = Target("argv", "study", {}, None, tuple(argv))
        found += check_cli(target, seeds / "study", i, [" ".join(argv)]).findings
    new = [f for f in found if f.known is None]
    assert not new, f"{len(new)} finding(s):\n{_report(new)}"
