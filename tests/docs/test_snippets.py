"""Every ```python block of README.md and docs/*.md runs as written (issue 11, issue 12 item 9),
and every command of a ```console block (issue 25 item 6: the tutorial runs in the tests).

The blocks of one page run in order in one namespace (a later block may use an earlier
one's names, or the files an earlier command wrote), in a temporary directory holding a
copy of ``sample_logs/``.  A ```console block's lines that start with ``$ sessionval`` are
commands, run through ``sessionval.cli.main`` and expected to succeed (exit code 0); its
other lines are the output shown to the reader.  Each page starts with these names, which
the docs use without defining them:

* ``sv`` (``import sessionval as sv``), ``pd``, ``np``;
* ``study`` (``sv.load_study("sample_logs/", qrels="sample_logs/qrels.txt")``),
  ``frame`` and ``judgments`` (its frame and judgments), ``config`` (``sv.SessionConfig()``).

A block that cannot run here (it needs files that are not bundled) is marked on the line
before its fence, in words a reader can follow::

    <!-- snippet: skip: needs the TREC Session 2013 track files (docs/real-world.md) -->
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"^```(python|console)[^\n]*\n(.*?)^```", re.S | re.M)
#: the prompt of a command in a ```console block (only sessionval commands are run)
PROMPT = "$ "
SKIP = re.compile(r"<!--\s*snippet:\s*skip:\s*(.*?)\s*-->\s*$")


def blocks(page: Path, lang: str = "python") -> list[tuple[int, str, str | None]]:
    """``(line, code, skip reason or None)`` of every ``lang`` block of ``page``."""
    return [(line, code, skip) for line, kind, code, skip in all_blocks(page) if kind == lang]


def all_blocks(page: Path) -> list[tuple[int, str, str, str | None]]:
    """``(line, language, code, skip reason or None)`` of the python and console blocks."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = [ln for ln in text[: m.start()].splitlines() if ln.strip()]
        skip = SKIP.search(before[-1]) if before else None
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, m.group(1), m.group(2), skip.group(1) if skip else None))
    return out


def commands(code: str) -> list[list[str]]:
    """The argument lists of the ``$ sessionval ...`` lines of a console block.

    Raises
    ------
    AssertionError
        A prompt line that is not a sessionval command (the docs show only runnable ones).
    """
    out = []
    for line in code.splitlines():
        if not line.startswith(PROMPT):
            continue
        args = shlex.split(line[len(PROMPT) :])
        assert args[:1] == ["sessionval"], f"not a sessionval command: {line!r}"
        out.append(args[1:])
    return out


def test_the_pages_have_snippets_and_every_skip_gives_a_reason() -> None:
    found = {p.name: blocks(p) for p in PAGES}
    assert sum(len(b) for b in found.values()) >= 8
    assert any(code for code in found["README.md"])
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"<!--\s*snippet:(.*?)-->", text):
            marker = m.group(1).strip()
            assert marker.startswith("skip:") and len(marker) > len("skip:") + 10, (
                f"{page.name}: a snippet marker must read 'skip: <reason>', got {marker!r}"
            )
        n_markers = len(re.findall(r"<!--\s*snippet:", text))
        n_skipped = sum(1 for *_, reason in all_blocks(page) if reason)
        assert n_markers == n_skipped, f"{page.name}: a skip marker not right above a block"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A folder of the page's own (the files one page writes never meet another's)."""
    shutil.copytree(ROOT / "sample_logs", tmp_path / "sample_logs")
    return tmp_path


def _namespace() -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    import sessionval as sv

    study = sv.load_study("sample_logs/", qrels="sample_logs/qrels.txt")
    return {
        "__name__": "__snippet__",
        "sv": sv,
        "pd": pd,
        "np": np,
        "study": study,
        "frame": study.frame,
        "judgments": study.judgments,
        "config": sv.SessionConfig(),
    }


def _run_commands(page: Path, line: int, code: str) -> None:
    from sessionval.cli import main

    for args in commands(code):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = main(args)
        assert status == 0, (
            f"{page.relative_to(ROOT)}, console block at line {line}: "
            f"sessionval {shlex.join(args)} exits {status}: {err.getvalue()[-2000:]}"
        )


@pytest.mark.parametrize("page", [p for p in PAGES if all_blocks(p)], ids=lambda p: p.name)
def test_snippets_run(page: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("matplotlib").use("Agg")
    monkeypatch.chdir(workdir)
    ns = _namespace()
    ran = 0
    for line, kind, code, skip in all_blocks(page):
        if skip:
            continue
        if kind == "console":
            _run_commands(page, line, code)
            ran += 1
            continue
        try:
            exec(compile(code, f"{page.name}:{line}", "exec"), ns)
        except Exception as exc:  # the message names the page and line of the block
            raise AssertionError(
                f"{page.relative_to(ROOT)}, python block at line {line} fails: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        ran += 1
    assert ran or all(skip for *_, skip in all_blocks(page))


def test_the_tutorial_and_the_side_by_side_page_run_commands_and_python() -> None:
    for name in ("tutorial.md", "coming-from.md"):
        page = ROOT / "docs" / name
        kinds = [kind for _, kind, _, skip in all_blocks(page) if not skip]
        assert "console" in kinds and "python" in kinds, name
    run = [a for _, c, _ in blocks(ROOT / "docs" / "tutorial.md", "console") for a in commands(c)]
    assert [a[0] for a in run] == ["validate", "run"]


def test_a_console_line_that_is_not_sessionval_is_refused() -> None:
    assert commands("$ sessionval validate x --lenient\nok\n") == [["validate", "x", "--lenient"]]
    with pytest.raises(AssertionError, match="not a sessionval command"):
        commands("$ trec_eval qrels run\n")
