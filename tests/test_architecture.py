"""The layering contracts cover the whole package (docs/architecture.md).

``lint-imports`` (run by the test command) checks the contracts; this test makes sure
no module escapes them: every top-level module and subpackage of ``sessionval`` sits
in exactly one layer, so a new stage cannot be added without deciding where it goes.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "sessionval"


def _layers() -> list[set[str]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layered,) = [c for c in contracts if c["type"] == "layers"]
    return [
        {name.strip() for name in layer.replace(":", "|").split("|")} for layer in layered["layers"]
    ]


def test_every_module_is_in_exactly_one_layer() -> None:
    top = {
        f"sessionval.{p.stem if p.is_file() else p.name}"
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
        or (p.is_dir() and (p / "__init__.py").is_file())
    }
    placed = [name for layer in _layers() for name in layer]
    assert sorted(set(placed)) == sorted(placed), "a module is in two layers"
    assert set(placed) == top, (
        f"not layered: {sorted(top - set(placed))}; unknown: {sorted(set(placed) - top)}"
    )


def test_data_flows_down_the_stages() -> None:
    order = [name for layer in _layers() for name in layer]
    flow = ["io", "judgments", "measures", "evaluation", "analysis", "output", "workflow"]
    positions = [order.index(f"sessionval.{stage}") for stage in flow]
    assert positions == sorted(positions, reverse=True)
