"""One preset resolver: every road that names a preset goes through ``resolve_preset``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sessionval.cli import main
from sessionval.errors import MeasureSpecError
from sessionval.evaluation.config import PRESETS, SessionConfig, resolve_preset
from sessionval.workflow.settings import (
    ConfigFileError,
    MeasureSelection,
    load_run_config,
    measure_settings,
)

PACKAGE = Path(__file__).resolve().parents[2] / "sessionval"
RENAMED = "session preset 'trec-dd-no-repeat' was renamed"
UNKNOWN = "unknown session preset 'nope'; known: jarvelin-2008"


def test_a_preset_resolves_to_its_record() -> None:
    preset = resolve_preset("trec-session-2011")
    assert preset.params["gains"] == "exp" and preset.measures == ("last(nDCG(gain=exp)@10)",)
    assert preset.citation == "kanoulas2011session" and "negative" in preset.sources


@pytest.mark.parametrize(("name", "message"), [("trec-dd-no-repeat", RENAMED), ("nope", UNKNOWN)])
def test_python_road(name: str, message: str) -> None:
    with pytest.raises(MeasureSpecError, match=message):
        SessionConfig.preset(name)


@pytest.mark.parametrize(("name", "message"), [("trec-dd-no-repeat", RENAMED), ("nope", UNKNOWN)])
def test_toml_road_gives_the_same_message(tmp_path: Path, name: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f'preset = "{name}"\n', encoding="utf-8")
    with pytest.raises(ConfigFileError, match=message) as err:
        load_run_config(path)
    assert "documents-once" in str(err.value) or name == "nope"


@pytest.mark.parametrize(("name", "message"), [("trec-dd-no-repeat", RENAMED), ("nope", UNKNOWN)])
def test_command_line_road_gives_the_same_message(tmp_path: Path, capsys, name, message) -> None:
    logs = tmp_path / "logs.jsonl"
    logs.write_text("", encoding="utf-8")
    code = main(["run", str(logs), "--preset", name, "--out", str(tmp_path / "out")])
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_presets_own_measures_come_from_the_resolver() -> None:
    chosen = measure_settings(MeasureSelection(), preset="trec-session-2011")
    assert chosen.session == ("last(nDCG(gain=exp)@10)",)
    with pytest.raises(MeasureSpecError, match=RENAMED):
        measure_settings(MeasureSelection(), preset="trec-dd-no-repeat")


def _readers_of_presets(tree: ast.AST) -> list[str]:
    """Functions that subscript or ``.get`` the PRESETS table (reading a preset's entry)."""
    found = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            target = None
            if isinstance(node, ast.Subscript):
                target = node.value
            elif isinstance(node, ast.Attribute) and node.attr in ("get", "items", "values"):
                target = node.value
            if isinstance(target, ast.Name) and target.id in ("PRESETS", "RENAMED_PRESETS"):
                found.append(func.name)
    return found


def test_only_resolve_preset_reads_a_presets_entry() -> None:
    readers = {}
    for path in PACKAGE.rglob("*.py"):
        names = _readers_of_presets(ast.parse(path.read_text(encoding="utf-8")))
        if names:
            readers[str(path.relative_to(PACKAGE))] = sorted(set(names))
    assert readers == {"evaluation/config.py": ["resolve_preset"]}
    assert set(PRESETS)  # the table itself stays public (names, docs)
