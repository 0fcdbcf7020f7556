"""Resolve once, then run a plan: a request decided before any session is read."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from sessionval.errors import InputFormatError, SessionvalError
from sessionval.workflow.plan import RunRequest, resolve
from sessionval.workflow.settings import ConfigFileError
from sessionval.workflow.steps import load_step

PACKAGE = Path(__file__).resolve().parents[2] / "sessionval"


def _request(study: Path, tmp_path: Path, **changes) -> RunRequest:
    return RunRequest(logs=study, qrels=study / "qrels.txt", out=tmp_path / "out", **changes)


def test_a_request_resolves_to_a_plan(study_dir, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('preset = "jiang-allan-2016"\n[run]\nlenient = true\n', encoding="utf-8")
    plan = resolve(
        _request(study_dir, tmp_path, config_path=config, overrides={"b": 3.0}, figures=False)
    )
    assert plan.fmt == "jsonl" and plan.placement == "local" and not plan.own_judgments
    assert plan.mode == "lenient" and plan.table_formats == ("csv", "parquet")
    session = plan.settings.config
    assert (session.b, session.cutoff, session.gains.name) == (3.0, 9, "exp")
    assert not (tmp_path / "out").exists()  # nothing written, nothing read but the config


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"table_formats": ("csv", "xlsx")}, SessionvalError, "table formats ['xlsx'] unknown"),
        ({"overrides": {"preset": "nope"}}, ConfigFileError, "unknown session preset 'nope'"),
        ({"qrels": None}, InputFormatError, "no --qrels given"),
    ],
)
def test_a_bad_request_fails_before_any_session_is_read(
    study_dir, tmp_path, changes, error, message
):
    (study_dir / "sessions.jsonl").write_text("not json\n", encoding="utf-8")  # never read
    request = _request(study_dir, tmp_path)
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]")):
        resolve(RunRequest(**{**request.__dict__, **changes}))


def test_the_plan_settles_the_gains_once(study_dir, tmp_path):
    (study_dir / "study.json").unlink()
    (study_dir / "qrels.txt").write_text("A 0 d1 4\nB 0 d9 2\n", encoding="utf-8")
    plan = resolve(_request(study_dir, tmp_path))
    assert plan.settings.config.gains.name == "auto"
    loaded = load_step(study_dir, qrels=study_dir / "qrels.txt", mode=plan.mode)
    settled = plan.settled(loaded.judgments, loaded.frame)
    assert settled.settings.config.gains.name == "exp" and len(settled.settings.notes) == 1
    assert settled.settled(loaded.judgments, loaded.frame) is settled
    assert settled.request is plan.request and settled.placement == plan.placement


def test_config_toml_is_the_settled_plan(study_dir, tmp_path):
    from sessionval.workflow import run

    (study_dir / "study.json").unlink()
    (study_dir / "qrels.txt").write_text("A 0 d1 4\nB 0 d9 2\n", encoding="utf-8")
    out = tmp_path / "out"
    run(study_dir, qrels=study_dir / "qrels.txt", out=out, progress=False, figures=False,
        exports=False)  # fmt: skip
    again = resolve(_request(study_dir, tmp_path, config_path=out / "config.toml"))
    document = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert again.settings.config.gains.name == "exp"
    assert again.settings.config.model_dump(mode="json") == document["session"]


def test_only_the_plan_reads_the_configuration_file():
    """A second reader of TOML and flags would decide a run outside resolve()."""
    callers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
                name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
                if name in ("run_settings", "load_run_config"):
                    callers.add((str(path.relative_to(PACKAGE)), name))
    assert callers == {
        ("workflow/plan.py", "run_settings"),
        ("workflow/settings.py", "load_run_config"),
    }


def test_the_placement_is_decided_up_front(tmp_path):
    from sessionval.evaluation.dask_engine import DaskEngine
    from tests import builders

    parts = tmp_path / "parts"
    builders.write_partitions(builders.small_flat(), parts, 2)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("T 0 a 1\n", encoding="utf-8")
    dask = DaskEngine(client=None)  # never asked: nothing runs while resolving

    def plan(**changes):
        return resolve(RunRequest(logs=parts, qrels=qrels, out=tmp_path / "out", **changes))

    assert plan().placement == "local" and "mapper" not in plan().load_options
    # the results stay on the workers by default; --results client gathers them
    assert plan(engine=dask).placement == "distributed"
    assert plan(engine=dask, figures=False, per_position=False).placement == "distributed"
    assert plan(engine=dask, results="client").placement == "workers"
    one_pass = plan(engine=dask, figures=False, per_position=False, results="client")
    assert one_pass.placement == "one-pass" and "fmt" not in one_pass.load_options
    # the searchers' grades pool over the whole study: validated on the workers, gathered
    searcher = plan(engine=dask, overrides={"judgments": "searcher"})
    assert searcher.placement == "local"
    with pytest.raises(SessionvalError, match="results 'nowhere' unknown"):
        plan(engine=dask, results="nowhere")
    assert searcher.load_options["mapper"] == dask.map_items
