"""The run as a tuple of stages on a resolved plan (issue 22 §2.3, issue 26 item 1).

Each stage reads only what an earlier stage wrote and writes its own fields once; a
field lives until the last stage that reads it; ``config.toml`` is written from the
settled plan; each stage's out-of-memory advice names only what would help it.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

import sessionval.workflow.job as job
import sessionval.workflow.run_report as run_report
from sessionval.cli import main
from sessionval.progress import stages
from sessionval.workflow.advice import MemoryAdvice
from sessionval.workflow.outputs import RunOutputs
from sessionval.workflow.plan import RunRequest, resolve
from sessionval.workflow.steps import write_config_toml

FAST = '[figures]\nformats = ["png"]\n[run]\nformats = ["csv"]\n'


class Recording(job.RunState):
    """A run state that logs each read, write and release of a stage's field, by stage."""

    log: ClassVar[list[tuple[str, str, str]]] = []

    def __getattribute__(self, name: str) -> object:
        if name in job.STATE_FIELDS:
            stage = object.__getattribute__(self, "__dict__").get("stage")
            if stage:
                Recording.log.append(("read", stage, name))
        return super().__getattribute__(name)

    def __setattr__(self, name: str, value: object) -> None:
        if name in job.STATE_FIELDS and self.__dict__.get("stage"):
            Recording.log.append(("write", self.__dict__["stage"], name))
        super().__setattr__(name, value)

    def release(self, name: str) -> None:
        Recording.log.append(("release", self.__dict__["stage"], name))
        super().release(name)


@pytest.fixture
def recorded(study_dir, tmp_path, monkeypatch):
    """The run of the sample study with every figure, its log of stage fields and its result."""
    Recording.log = []
    monkeypatch.setattr(job, "RunState", Recording)
    config = tmp_path / "fast.toml"
    config.write_text(FAST, encoding="utf-8")
    result = job.run(
        study_dir, qrels=study_dir / "qrels.txt", out=tmp_path / "o", config_path=config
    )
    return list(Recording.log), result


def assert_stage_discipline(log, stages, result) -> None:  # type: ignore[no-untyped-def]
    """The stages ran in order, each read only what it declares and an earlier stage wrote."""
    names = [s.name for s in stages]
    seen = list(dict.fromkeys(stage for _, stage, _ in log))
    assert seen == names  # every stage touched the state, in the declared order
    positions = [names.index(stage) for _, stage, _ in log]
    assert positions == sorted(positions)  # no stage ran again after the next began
    declared = {s.name: s for s in stages}
    writer: dict[str, str] = {}
    for what, stage, name in log:
        if what == "write":
            assert name not in writer, f"{name} written by {writer.get(name)} and {stage}"
            assert name in declared[stage].writes
            writer[name] = stage
        elif what == "read":
            # a stage reads what it declares, written by itself or an earlier stage
            assert name in declared[stage].reads or name in declared[stage].writes, (stage, name)
            assert name in writer, f"{stage} read {name} before any stage wrote it"
    # every declared field was written, by its one stage
    assert writer == {name: s.name for s in stages for name in s.writes}
    # and the declarations themselves: each read is an earlier stage's write
    for i, stage in enumerate(stages):
        earlier = {name for s in stages[:i] for name in s.writes}
        assert set(stage.reads) <= earlier, stage.name
    assert [p.name for p in result.stages] == names
    assert all(p.seconds >= 0 and p.peak_mb > 0 for p in result.stages)


def test_the_stages_run_in_order_and_read_only_what_earlier_stages_wrote(recorded):
    log, result = recorded
    assert_stage_discipline(log, job.STAGES, result)


def test_the_result_rows_are_dropped_after_their_last_stage(recorded):
    """The study's frame and the evaluation do not live into the statistics and exports."""
    log, _ = recorded
    released = {name: stage for what, stage, name in log if what == "release"}
    assert released["loaded"] == released["evaluation"] == "reformulations"
    assert released["one_pass"] == "evaluate"
    names = [s.name for s in job.STAGES]
    late = [(stage, name) for what, stage, name in log if what == "read" and name in released]
    assert all(names.index(stage) <= names.index(released[name]) for stage, name in late)
    # what the result reads is never dropped
    assert not set(released) & job.RESULT_READS


def _state(study_dir, out):
    plan = resolve(RunRequest(logs=study_dir, qrels=study_dir / "qrels.txt", out=out))
    bar = stages(["x"], disable=True).__enter__()
    return job.RunState(plan, RunOutputs(out), bar, MemoryAdvice(plan), engine=None)


def test_a_field_is_written_once_and_read_only_after_it_is_written(study_dir, tmp_path):
    state = _state(study_dir, tmp_path / "o1")
    with pytest.raises(RuntimeError, match="read 'evaluation' before a stage wrote it"):
        job.execute(state, [s for s in job.STAGES if s.name == "tables"])
    twice = job.Stage("again", job.load_stage, (), ("loaded",))
    state = _state(study_dir, tmp_path / "o2")
    with pytest.raises(RuntimeError, match="wrote 'loaded', already written by stage 'load"):
        job.execute(state, [job.STAGES[0], twice])


def test_what_existed_before_the_run_is_left_out_of_its_collections_and_freed_after(
    study_dir, tmp_path
):
    import gc

    seen = []
    probe = job.Stage("probe", lambda state: seen.append(gc.get_freeze_count()), (), ())
    boom = job.Stage("boom", lambda state: 1 / 0, (), ())
    job.execute(_state(study_dir, tmp_path / "o1"), [probe])
    assert seen[0] > 0  # frozen during the run (the modules imported, the caller's objects)
    assert gc.get_freeze_count() == 0  # and unfrozen after: nothing of the caller's is kept
    with pytest.raises(ZeroDivisionError):
        job.execute(_state(study_dir, tmp_path / "o2"), [boom])
    assert gc.get_freeze_count() == 0  # also when a stage fails


def test_config_toml_is_written_from_the_settled_plan_before_scoring(study_dir, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('preset = "jiang-allan-2016"\nb = 3\n', encoding="utf-8")
    request = RunRequest(
        logs=study_dir,
        qrels=study_dir / "qrels.txt",
        out=tmp_path / "o",
        config_path=config,
        overrides={"cutoff": 5},
    )
    plan = resolve(request)
    bar = stages(["x"], disable=True).__enter__()
    outputs = RunOutputs(tmp_path / "o")
    state = job.RunState(plan, outputs, bar, MemoryAdvice(plan), engine=None)
    job.execute(state, job.STAGES[:2], keep={"settled"})  # load and settle: nothing scored
    assert "config.toml" in outputs.written and not any("tables/" in f for f in outputs.written)
    settled = state.settled
    assert settled is not None and settled.settings.config.cutoff == 5
    expected = RunOutputs(tmp_path / "expected")
    write_config_toml(expected, settled.settings)
    written = (outputs.root / "config.toml").read_text()
    assert written == (expected.root / "config.toml").read_text()
    assert "cutoff = 5" in written and "b = 3.0" in written


def _run(study, tmp_path, *extra: str) -> int:
    config = tmp_path / "fast.toml"
    config.write_text(FAST, encoding="utf-8")
    args = ["run", str(study), "--qrels", str(study / "qrels.txt"), "--out", str(tmp_path / "o")]
    return main([*args, "--config", str(config), "--no-progress", *extra])


def _no_memory(*args: object, **kwargs: object) -> None:
    raise MemoryError("Unable to allocate 194. GiB")


@pytest.mark.parametrize(
    ("step", "flags", "phase", "named", "not_named"),
    [
        (
            "statistics_step",
            (),
            "comparing the systems over 2 sessions",
            ('[statistics] block = "searcher"', "[statistics] mixed_model = false"),
            ("--no-figures", "--no-exports", "--no-per-position", "--tables"),
        ),
        (
            "reformulation_step",
            (),
            "comparing the reformulations of 5 queries",
            (),
            ("--no-figures", "--no-exports", "--no-per-position", "--tables", "--engine"),
        ),
        (
            "correlation_step",
            ("--no-figures",),
            "correlating the ratings of 2 sessions",
            (),
            ("--no-figures", "--no-exports", "--no-per-position"),
        ),
        (
            "write_report_step",
            (),
            "writing the report of 2 sessions",
            (),
            ("--no-figures", "--no-exports", "--no-per-position", "--tables", "--engine"),
        ),
    ],
)
def test_out_of_memory_advice_names_only_what_helps_the_stage(
    study_dir, tmp_path, monkeypatch, capsys, step, flags, phase, named, not_named
):
    # the report's writer is called from run_report, the one report stage of both runs
    monkeypatch.setattr(run_report if step == "write_report_step" else job, step, _no_memory)
    assert _run(study_dir, tmp_path, *flags) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"error: sessionval run: out of memory while {phase}; "), err
    for hint in named:
        assert hint in err
    for flag in not_named:
        assert flag not in err


def test_statistics_advice_leaves_out_the_settings_in_force(
    study_dir, tmp_path, monkeypatch, capsys
):
    config = tmp_path / "lean.toml"
    config.write_text(
        FAST + '[statistics]\nblock = "searcher"\nmixed_model = false\nmeasures = ["nsdcg"]\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(job, "statistics_step", _no_memory)
    args = ["run", str(study_dir), "--qrels", str(study_dir / "qrels.txt")]
    assert main([*args, "--out", str(tmp_path / "o"), "--config", str(config)]) == 3
    err = capsys.readouterr().err
    assert "out of memory while comparing the systems" in err
    assert "[statistics]" not in err and "--no-" not in err
