"""Run one fuzzed input through a reader and the command line, and judge what happened.

The properties every input must have (issue 10, item 8):

* **no exception but the toolkit's own**: a reader either returns a study or raises
  a :class:`~sessionval.errors.SessionvalError`; the command line returns an exit code
  (0, 1 validation failed, 2 input or usage error) and prints no traceback;
* **no hang**: each call finishes within a time bound (``SESSIONVAL_FUZZ_TIMEOUT``
  seconds, default 20);
* **balanced books in lenient mode**: ``records read = accepted + rejected``, the
  frame holds exactly the accepted sessions, and a problem listed rejects a record
  (a row dropped without being counted breaks this: FL-2);
* a study a reader accepts can be evaluated (again: no exception but the toolkit's);
* **a TSV table stays a table**: the TSV that ``evaluate`` and ``compare`` print has as
  many fields on every line as in its header, whatever the ids and run names.

An outcome that breaks a property is a *finding*.  A finding that matches an entry of
:data:`tests.fuzz.known.KNOWN_FINDINGS` (a reader defect being fixed elsewhere) is
counted under that entry's id instead of failing the test.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import shutil
import signal
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sessionval.cli import main
from sessionval.errors import SessionvalError
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.frame import LoadedStudy

from .corpus import Target
from .known import match_known
from .mutations import mutate

EXIT_CODES = frozenset({0, 1, 2})
"""Exit codes of the command line for an input: success, validation failed, input error."""


TSV_COMMANDS = frozenset({"evaluate", "compare"})
"""Commands whose standard output is a TSV table by default (a header, then rows)."""


def tsv_problem(text: str) -> str | None:
    """What breaks a TSV table (a row with more or fewer fields than its header), or None."""
    lines = text.rstrip("\n").split("\n")
    width = lines[0].count("\t")
    for n, line in enumerate(lines[1:], start=2):
        if line.count("\t") != width:
            return (
                f"TSV line {n} has {line.count(chr(9)) + 1} fields, the header {width + 1}: "
                f"{line[:60]!r}"
            )
    return None


def examples(default: int) -> int:
    """Inputs per target: ``SESSIONVAL_FUZZ_EXAMPLES`` or ``default``."""
    return int(os.environ.get("SESSIONVAL_FUZZ_EXAMPLES", default))


def base_seed() -> int:
    """Seed of the run: ``SESSIONVAL_FUZZ_SEED`` or 0 (each input adds its number)."""
    return int(os.environ.get("SESSIONVAL_FUZZ_SEED", 0))


def time_bound() -> float:
    """Seconds one call may take: ``SESSIONVAL_FUZZ_TIMEOUT`` or 20 (a loaded CI machine)."""
    return float(os.environ.get("SESSIONVAL_FUZZ_TIMEOUT", 20))


class Hang(BaseException):
    """A call ran past the time bound."""


@contextlib.contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in this (main) thread when the body runs longer than ``seconds``."""

    def alarm(signum: int, frame: object) -> None:
        raise Hang(f"no answer within {seconds:g} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Finding:
    """A broken property: where (target, step), what (kind, detail), and the input's seed."""

    target: str
    seed: int
    step: str  # "strict", "lenient", "evaluate", "cli"
    kind: str  # "exception", "hang", "books", "exit-code", "traceback", "output"
    detail: str
    mutations: list[str]
    known: str | None = None  # id of the matching KNOWN_FINDINGS entry

    def line(self) -> str:
        """One line for a report."""
        tag = f"[{self.known}] " if self.known else ""
        return (
            f"{tag}{self.target} seed={self.seed} {self.step} {self.kind}: {self.detail} "
            f"(mutations: {', '.join(self.mutations)})"
        )


@dataclass
class Outcome:
    """What one input did: per step ``ok`` / ``error`` (a located SessionvalError) and findings."""

    steps: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)


def _describe(exc: BaseException) -> str:
    """Exception type, first message line and the innermost frame of the package."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "sessionval" in f.filename and "/tests/" not in f.filename]
    where = ""
    if ours:
        f = ours[-1]
        where = f" at {f.filename.split('sessionval/', 1)[-1]}:{f.lineno} in {f.name}"
    msg = str(exc).splitlines()[0][:160] if str(exc) else ""
    return f"{type(exc).__name__}: {msg}{where}"


def _books(loaded: LoadedStudy) -> str | None:
    """What is wrong with the lenient books, or None."""
    r = loaded.report
    if r.records_read != r.sessions_accepted + r.sessions_rejected:
        return (
            f"read {r.records_read} != accepted {r.sessions_accepted}"
            f" + rejected {r.sessions_rejected}"
        )
    if r.problems and not r.sessions_rejected:  # problems belong to rejected records only
        return f"{len(r.problems)} problem(s) but no record rejected (read {r.records_read})"
    if r.sessions_accepted != loaded.frame.n_sessions:
        return (
            f"accepted {r.sessions_accepted} but the frame has {loaded.frame.n_sessions} sessions"
        )
    return None


def make_input(target: Target, seeds: Path, work: Path, seed: int) -> tuple[Path, list[str]]:
    """Copy the target's seed folder to ``work`` and mutate one of its files."""
    rng = random.Random(seed)
    dest = work / f"{target.name}-{seed}"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(seeds / target.folder, dest)
    names = list(target.files)
    name = names[0] if rng.random() < 0.75 else rng.choice(names)
    path = dest / name
    data, ops = mutate(path.read_bytes(), target.files[name], rng)
    path.write_bytes(data)
    names = [f"{name}:{op}" for op in ops]
    if target.reshape and rng.random() < 0.4:  # several files at once, or a file's name
        done = rng.choice(target.reshape)(dest, name, rng)
        if done:
            names.append(done)
    return dest, names


def check_reader(
    target: Target, folder: Path, seed: int, ops: list[str], *, evaluate_it: bool = True
) -> Outcome:
    """Read the input strict and lenient, check the books, evaluate what lenient accepted."""
    out = Outcome()
    if target.load is None:
        return out
    limit = time_bound()

    def finding(step: str, kind: str, detail: str) -> None:
        f = Finding(target.name, seed, step, kind, detail, ops)
        f.known = match_known(f)
        out.findings.append(f)

    for mode in ("strict", "lenient"):
        loaded = None
        try:
            with bounded(limit):
                loaded = target.load(folder, mode)  # type: ignore[arg-type]
            out.steps[mode] = "ok"
        except SessionvalError:
            out.steps[mode] = "error"
        except Hang as exc:
            finding(mode, "hang", str(exc))
        except Exception as exc:
            finding(mode, "exception", _describe(exc))
        if loaded is None:
            continue
        if mode == "strict":
            continue
        problem = _books(loaded)
        if problem:
            finding(mode, "books", problem)
        if not evaluate_it:
            continue
        try:
            with bounded(limit):
                cfg = SessionConfig() if loaded.judgments is not None else None
                if cfg is None:
                    cfg = SessionConfig(judgments="searcher")
                evaluate(loaded.frame, loaded.judgments, cfg).per_session()
        except SessionvalError:
            pass
        except Hang as exc:
            finding("evaluate", "hang", str(exc))
        except Exception as exc:
            finding("evaluate", "exception", _describe(exc))
    return out


def check_cli(
    target: Target, folder: Path, seed: int, ops: list[str], extra: tuple[str, ...] = ()
) -> Outcome:
    """Run the target's command line on the input: an exit code, never a traceback."""
    out = Outcome()
    argv = [a.replace("{dir}", str(folder)) for a in target.argv] + list(extra)
    if "{runs}" in argv:  # every run file of the input, whatever its (fuzzed) name
        at = argv.index("{runs}")
        argv[at : at + 1] = sorted(str(p) for p in folder.rglob("*.run"))
    if argv[0] == "run":
        argv.append("--no-progress")
    stdout, stderr = io.StringIO(), io.StringIO()

    def finding(kind: str, detail: str) -> None:
        f = Finding(target.name, seed, "cli", kind, detail, ops)
        f.known = match_known(f)
        out.findings.append(f)

    try:
        with (
            bounded(time_bound()),
            contextlib.redirect_stdout(stdout),
            contextlib.redirect_stderr(stderr),
        ):
            code = main(argv)
        out.steps["cli"] = str(code)
        if code not in EXIT_CODES:
            finding("exit-code", f"exit code {code}: {stderr.getvalue().strip()[:160]}")
        elif "Traceback (most recent call last)" in stderr.getvalue():
            finding("traceback", stderr.getvalue().strip().splitlines()[-1][:160])
        elif code == 0 and argv[0] in TSV_COMMANDS and "--format" not in argv:
            broken = tsv_problem(stdout.getvalue())
            if broken:
                finding("output", broken)
    except Hang as exc:
        finding("hang", str(exc))
    except SystemExit as exc:
        finding("exit-code", f"SystemExit({exc.code}) escaped main()")
    except Exception as exc:
        finding("exception", _describe(exc))
    return out
