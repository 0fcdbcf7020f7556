"""One output-staging layer (issue 22, review §1.7): ``io/staging.py``.

The Python-API writers and the commands' output folders stage through the same core;
staging nests (a writer inside a command's staging writes plainly); no other module
renames files into place or makes temporary names of its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import sessionval
import sessionval.io.staging as staging
import sessionval.synth.write as synth_write
from sessionval.errors import OutputError
from sessionval.io.staging import STAGING_PREFIX, staged
from sessionval.io.streams import write_study_json
from sessionval.io.writers import write_flat, write_jsonl
from sessionval.models.study import Study
from sessionval.workflow.outputs import staged_outputs
from tests import builders

PACKAGE = Path(sessionval.__file__).resolve().parent
#: what a second atomic-write mechanism needs: a rename into place or a temporary name
SECOND_MECHANISM = re.compile(r"os\.replace\(|os\.rename\(|mkdtemp\(|\.part\b|\.tmp\b")


def test_no_module_but_the_staging_layer_renames_files_into_place() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "io" / "staging.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if SECOND_MECHANISM.search(line) and ">>>" not in line:
                found.append(f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}")
    assert found == []


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_staged_moves_the_files_in_when_complete(tmp_path: Path) -> None:
    out = tmp_path / "o"
    with staged(out, command="test") as stage:
        assert stage.root.parent == out and stage.root.name.startswith(STAGING_PREFIX)
        (stage.root / "a.txt").write_text("new")
        (stage.root / "sub").mkdir()
        (stage.root / "sub" / "b.txt").write_text("b")
        assert _left(out) == [stage.root.name]  # nothing in place before the end
    assert _left(out) == ["a.txt", "sub"]
    assert (out / "sub" / "b.txt").read_text() == "b"
    assert stage.final(stage.root / "sub" / "b.txt") == out / "sub" / "b.txt"


def test_staged_leaves_the_older_files_on_failure(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "a.txt").write_text("old")
    with pytest.raises(KeyboardInterrupt), staged(out, command="test") as stage:
        (stage.root / "a.txt").write_text("half")
        raise KeyboardInterrupt
    assert _left(out) == ["a.txt"] and (out / "a.txt").read_text() == "old"


def test_staged_refuses_a_link_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (tmp_path / "elsewhere").write_text("keep")
    (out / "a.txt").symlink_to(tmp_path / "elsewhere")
    ran = False
    with pytest.raises(OutputError, match=r"a\.txt: is a symbolic link"):
        with staged(out, command="test", targets=[out / "a.txt"]):
            ran = True
    assert not ran and (tmp_path / "elsewhere").read_text() == "keep"
    assert _left(out) == ["a.txt"]


def test_a_writer_inside_a_command_staging_is_not_staged_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Path] = []
    real = staging.make_staging

    def counted(folder: Path, *, command: str) -> Path:
        made.append(real(folder, command=command))
        return made[-1]

    monkeypatch.setattr(staging, "make_staging", counted)
    frame = builders.frame([("s1", "u", "T", "S", [["d1"]])])
    out = tmp_path / "o"
    with staged_outputs(out, command="convert") as outputs:
        written = write_jsonl(frame, outputs.root)
        write_flat(frame, outputs.root / "t.csv")
        assert written.sessions == outputs.root / "sessions.jsonl"
    assert made == [outputs.root]  # the command's staging only
    assert {"sessions.jsonl", "study.json", "t.csv", "t.study.json"} <= set(_left(out))
    write_jsonl(frame, tmp_path / "alone")  # from Python: staged by the writer itself
    assert len(made) == 2 and made[1].parent == tmp_path / "alone"


def test_write_study_is_atomic_from_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "synth"
    summary = synth_write.write_study(out, n_sessions=6, seed=1, formats="jsonl")
    assert all(f.parent == out for f in summary.files)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(synth_write, "simulate_chunk", interrupted)
    with pytest.raises(KeyboardInterrupt):
        synth_write.write_study(out, n_sessions=6, seed=2, formats="jsonl")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_one_study_json_writer(tmp_path: Path) -> None:
    session = {"session_id": "s1", "user_id": "u", "topic_id": "T", "system_id": "S"}
    query = {"position": 1, "text": "q"}
    study = Study.model_validate({"name": "x", "sessions": [{**session, "queries": [query]}]})
    plain = write_study_json(study, tmp_path / "study.json").read_text(encoding="utf-8")
    assert '"sessions"' not in plain and plain.endswith("}\n")
    full = write_study_json(study, tmp_path / "all.json", with_records=True)
    assert Study.model_validate_json(full.read_text(encoding="utf-8")) == study
