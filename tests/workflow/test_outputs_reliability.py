"""Issue 10 items 5 (figures) and 6: figures independent of input order; outputs atomic, confined.

Each test builds its study itself; none reads a shared folder.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pandas as pd
import pytest

import sessionval.workflow.job as job
from sessionval.cli import main
from sessionval.workflow import MANIFEST
from sessionval.workflow.outputs import RunOutputs
from tests import builders

CONFIG = '[figures]\nformats = ["svg"]\nmax_sessions = 2\n[run]\nformats = ["csv"]\n'
DOCS = ["d1", "d2", "d3", "d4", "d5"]


def _study(folder: Path, *, seed: int | None = None) -> Path:
    """Three systems, two topics, 12 sessions; ``seed`` shuffles the lines."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    sessions = []
    for k in range(12):
        queries = [rng.sample(DOCS, 3) for _ in range(1 + k % 3)]
        sessions.append(
            builders.make_session(
                f"s{k:02d}",
                user=f"u{k % 4}",
                topic="AB"[k % 2],
                system=["S3", "S1", "_S2"][k % 3],  # first appearance is not sorted order
                queries=queries,
            )
        )
    if seed is not None:
        random.Random(seed).shuffle(sessions)
    builders.write_jsonl(folder / "sessions.jsonl", sessions)
    grades = dict(zip(DOCS, [3, 0, 1, 2, 0], strict=True))
    (folder / "qrels.txt").write_text(
        "".join(f"{t} 0 {d} {grades[d]}\n" for t in "AB" for d in DOCS)
    )
    return folder


def _run(study: Path, out: Path, config: Path, *extra: str) -> int:
    args = ["run", str(study), "--qrels", str(study / "qrels.txt"), "--out", str(out)]
    return main([*args, "--config", str(config), "--no-progress", *extra])


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def test_shuffled_sessions_give_the_same_figures(tmp_path, config):
    """Item 5: colours, legend order and Figure 4's sessions follow the ids, not the input order."""
    outs = []
    for seed in (None, 1, 2):
        out = tmp_path / f"out{seed}"
        assert _run(_study(tmp_path / f"study{seed}", seed=seed), out, config) == 0
        outs.append(out)
    svgs = sorted(p.relative_to(outs[0]) for p in (outs[0] / "figures").glob("*.svg"))
    assert len(svgs) == 11  # 9, and the two reformulation figures (issue 27)
    for other in outs[1:]:
        for rel in svgs:
            assert (other / rel).read_bytes() == (outs[0] / rel).read_bytes(), rel
    # the tables behind the figures list their rows in id order too (the values may still
    # differ in the last bits: summation order is item 5's, not the figures')
    for table in (outs[0] / "figures").glob("*.csv"):
        first = pd.read_csv(table)
        for other in outs[1:]:
            again = pd.read_csv(other / "figures" / table.name)
            pd.testing.assert_frame_equal(again, first, check_exact=False, rtol=1e-9, atol=1e-5)
    # the legend of Figure 2 lists the systems sorted, "_S2" included
    fig2 = (outs[0] / "figures" / "fig2_session_nsdcg.svg").read_text()
    assert fig2.index("_S2") > 0 and fig2.index("<!-- S1 -->") < fig2.index("<!-- S3 -->")


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def test_each_output_is_staged_then_renamed_and_the_manifest_comes_last(tmp_path, monkeypatch):
    """Item 6: nothing is written in place; the manifest is the last file moved in."""
    out = tmp_path / "out"
    outputs = RunOutputs(out)
    outputs.write_text("report.html", "new")
    outputs.write_text("tables/a.csv", "x\n1\n")
    assert outputs.root.parent == out and outputs.root.name.startswith(".sessionval-staging-")
    assert not (out / "report.html").exists()  # written under a temporary name only
    moved: list[str] = []
    real = os.replace

    def spy(src: str | Path, dst: str | Path) -> None:
        moved.append(Path(dst).relative_to(out).as_posix())
        real(src, dst)

    monkeypatch.setattr("sessionval.io.staging.os.replace", spy)  # the one staging layer
    outputs.finish()
    assert moved[-1] == MANIFEST and set(moved[:-1]) == {"report.html", "tables/a.csv"}
    assert json.loads((out / MANIFEST).read_text())["files"] == ["report.html", "tables/a.csv"]
    assert not [p for p in out.iterdir() if p.name.startswith(".sessionval-staging")]


def test_an_exception_mid_write_keeps_the_previous_outputs(tmp_path, config, monkeypatch, capsys):
    """Item 6: a run interrupted while writing (here in the exports) changes nothing in --out."""
    study = _study(tmp_path / "study")
    out = tmp_path / "out"
    assert _run(study, out, config) == 0
    before = _files(out)

    def fail(outputs: RunOutputs, *args: object, **kwargs: object) -> None:
        outputs.write_text("exports/half.csv", "a,b\n1,")  # a half-written file ...
        raise OSError(28, "No space left on device")  # ... then the disk is full

    monkeypatch.setattr(job, "write_exports_step", fail)
    assert _run(study, out, config) == 2  # the system's refusal, not a bug: one error line
    assert capsys.readouterr().err.endswith("error: No space left on device\n")
    assert _files(out) == before
    assert not [p for p in out.iterdir() if p.name.startswith(".sessionval-staging")]
    monkeypatch.setattr(job, "write_exports_step", _interrupt)
    assert _run(study, out, config) == 130
    assert _files(out) == before


def _interrupt(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


def test_planted_manifest_entries_never_reach_outside(tmp_path, config):
    """Item 6: ``../victim``, an absolute path and a link inside --out are never followed."""
    study = _study(tmp_path / "study")
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = {
        "rel": tmp_path / "victim.txt",
        "abs": outside / "abs.txt",
        "link": outside / "via_link.txt",
        "file_link": outside / "target.txt",
    }
    for v in victims.values():
        v.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "escape").symlink_to(outside, target_is_directory=True)
    (out / "report.html").symlink_to(victims["file_link"])  # where the run writes
    planted = ["../victim.txt", str(victims["abs"]), "escape/via_link.txt", "report.html"]
    (out / MANIFEST).write_text(json.dumps({"files": planted}))
    assert _run(study, out, config, "--force") == 2  # the link where report.html goes: refused
    assert all(v.read_text() == "keep me" for v in victims.values())
    (out / "report.html").unlink()
    assert _run(study, out, config, "--force") == 0
    assert all(v.read_text() == "keep me" for v in victims.values())
    assert (out / "escape").is_symlink() and sorted(p.name for p in outside.iterdir()) == [
        "abs.txt",
        "target.txt",
        "via_link.txt",
    ]
    # the new manifest lists only what this run wrote, all inside --out
    files = json.loads((out / MANIFEST).read_text())["files"]
    assert all(not f.startswith(("/", "..")) and "escape" not in f for f in files)


def test_a_linked_output_folder_is_not_written_through(tmp_path, config):
    """Item 6: ``out/figures`` linked to a folder outside: refused, that folder untouched."""
    study = _study(tmp_path / "study")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "figures").symlink_to(outside, target_is_directory=True)
    assert _run(study, out, config, "--force") == 2
    assert list(outside.iterdir()) == []


def test_inputs_inside_out_are_never_overwritten(tmp_path, config, capsys):
    """An --out holding an input (logs, qrels, config) is refused before any work, even --force."""
    study = _study(tmp_path / "study")
    out = tmp_path / "out"
    assert _run(study, out, config) == 0
    # qrels and logs copied into the output folder, and run from there
    (out / "qrels.txt").write_bytes((study / "qrels.txt").read_bytes())
    (out / "sessions.jsonl").write_bytes((study / "sessions.jsonl").read_bytes())
    before = _files(out)
    capsys.readouterr()
    args = ["run", str(out / "sessions.jsonl"), "--qrels", str(out / "qrels.txt")]
    assert main([*args, "--out", str(out), "--config", str(config), "--force"]) == 2
    err = capsys.readouterr().err
    assert f"--out {out} contains the input {out / 'sessions.jsonl'}" in err
    assert "--force never overwrites an input" in err
    (out / "config.toml").write_text(CONFIG)  # the config the run wrote, given back to it
    assert _run(study, out, out / "config.toml", "--force") == 2
    assert f"contains the input {out / 'config.toml'}" in capsys.readouterr().err
    assert _files(out) == {**before, "config.toml": CONFIG.encode()}


def test_a_foreign_folder_is_refused_without_force(tmp_path, config, capsys):
    study = _study(tmp_path / "study")
    out = tmp_path / "out"
    (out / "tables").mkdir(parents=True)
    (out / "tables" / "per_session.csv").write_text("mine")
    assert _run(study, out, config) == 2
    assert "no earlier sessionval run wrote it" in capsys.readouterr().err
    assert (out / "tables" / "per_session.csv").read_text() == "mine"
    assert not (out / MANIFEST).exists()


@pytest.mark.parametrize("where", [".", "results", "../study/results"])
def test_a_study_folder_is_never_an_output(tmp_path, config, capsys, where):
    """``run STUDY --out STUDY`` (or a folder inside it) is refused: the study is an input."""
    study = _study(tmp_path / "study")
    inputs = _files(study)
    out = study / where
    assert _run(study, out, config, "--force") == 2
    how = "is the input" if where == "." else "lies inside the input folder"
    assert f"--out {out} {how} {study}" in capsys.readouterr().err
    assert _files(study) == inputs
    assert sorted(p.name for p in study.iterdir()) == ["qrels.txt", "sessions.jsonl"]
