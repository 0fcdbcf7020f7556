"""The layering contracts cover the whole package (docs/architecture.md).

``lint-imports`` (run by the test command) checks the contracts; this test makes sure
no module escapes them: every top-level module and subpackage of ``sessionval`` sits
in exactly one layer, so a new stage cannot be added without deciding where it goes.
"""

from __future__ import annotations

import ast
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


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_module(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(path: Path, source: str | None = None) -> list[str]:
    """``from X import _name`` and ``X._name`` (X a sessionval module) in one file."""
    module = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    found: list[str] = []
    modules: set[str] = set()  # local names bound to sessionval modules
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _imported_module(node, module, path.name == "__init__.py")
            if not target.startswith("sessionval"):
                continue
            for alias in node.names:
                if _private(alias.name) and target != module:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {target}.{alias.name}")
                elif (
                    (PACKAGE.parent / (target + "." + alias.name).replace(".", "/"))
                    .with_suffix(".py")
                    .is_file()
                ):
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("sessionval") and alias.asname:
                    modules.add(alias.asname)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    # what two modules share is named (public, in __all__), so the next split says so
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in private_imports(path)]
    assert found == []


def test_the_private_import_check_sees_both_spellings() -> None:
    probe = PACKAGE / "measures" / "probe.py"  # not written: its text is given
    source = "from .lists import _hidden\nfrom . import precision\nprecision._secret\n"
    hits = private_imports(probe, source)
    assert [h.split(": ")[1] for h in hits] == [
        "sessionval.measures.lists._hidden",
        "precision._secret",
    ]
