"""``sessionval.stats``: the statistics users call, from one namespace."""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest

from sessionval import stats

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", stats.__all__)
def test_each_name_is_the_implementation_not_a_copy(name: str) -> None:
    obj = getattr(stats, name)
    home = getattr(obj, "__module__", None)
    if home is None:  # a constant: the implementing module holds the same object
        return
    assert home != "sessionval.stats"
    assert getattr(importlib.import_module(home), name) is obj


def test_every_name_is_in_the_api_reference() -> None:
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [n for n in stats.__all__ if f"::: sessionval.stats.{n}" not in api]
    assert missing == []


def test_the_notebook_takes_its_statistics_from_the_namespace() -> None:
    nb = json.loads((ROOT / "notebooks" / "meta_evaluation.ipynb").read_text(encoding="utf-8"))
    deep = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse("".join(cell["source"]))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and (
                    node.module.startswith("sessionval.analysis")
                    or node.module.startswith("sessionval.workflow.meta")
                )
            ):
                deep.append(node.module)
    assert deep == []
