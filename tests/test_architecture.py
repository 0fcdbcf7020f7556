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


#: Hand-written discounts allowed outside ``kernels/discounts.py``: (file, function) -> why.
OWN_DISCOUNTS = {
    ("measures/cg_trec.py", "g_measure"): "trec_eval's G: discount by the gain still owed",
    ("measures/cg_trec.py", "bin_g"): "trec_eval's binG: discount by the non-relevant above",
}


def hand_written_discounts(path: Path, source: str | None = None) -> list[str]:
    """``log2(...)`` calls and geometric ``x ** (i - 1)`` weights, by enclosing function."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    rel = path.relative_to(PACKAGE).as_posix()
    found: list[str] = []

    def visit(node: ast.AST, func: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            func = node.name
        log2 = isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "log2"
        geometric = (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Pow)
            and not isinstance(node.left, ast.Constant)  # 2 ** (bits - 1) is no weight
            and isinstance(node.right, ast.BinOp)
            and isinstance(node.right.op, ast.Sub)
            and isinstance(node.right.right, ast.Constant)
            and node.right.right.value == 1
        )
        if (log2 or geometric) and (rel, func) not in OWN_DISCOUNTS:
            found.append(f"{rel}:{getattr(node, 'lineno', 0)} in {func}")
        for child in ast.iter_child_nodes(node):
            visit(child, func)

    visit(tree, "<module>")
    return found


def test_rank_discounts_come_only_from_the_discount_table() -> None:
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "kernels" / "discounts.py"
        for hit in hand_written_discounts(path)
    ]
    assert found == []


def test_the_discount_check_sees_log2_and_geometric_weights() -> None:
    probe = PACKAGE / "measures" / "probe.py"  # not written: its text is given
    source = "def f(r, p):\n    return 1 / np.log2(r + 1) + p ** (r - 1)\n"
    assert hand_written_discounts(probe, source) == [
        "measures/probe.py:2 in f",
        "measures/probe.py:2 in f",
    ]


def _is_call(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "attr", None) == name


def _shifted_repeat(node: ast.AST) -> bool:
    """``np.repeat(a - b, counts)``: the shift of a hand-written range gather."""
    return _is_call(node, "repeat") and isinstance(getattr(node, "args", [None])[0], ast.BinOp)


def hand_written_segments(path: Path, source: str | None = None) -> list[str]:
    """Segment offsets (``np.cumsum(counts, out=off[1:])``) and range gathers
    (``np.arange(n) + np.repeat(starts - new, counts)``) written outside the library."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    rel = path.relative_to(PACKAGE).as_posix()
    found = []
    for node in ast.walk(tree):
        offsets = _is_call(node, "cumsum") and any(
            k.arg == "out" for k in getattr(node, "keywords", [])
        )
        gather = (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and (_shifted_repeat(node.left) or _shifted_repeat(node.right))
        ) or (
            isinstance(node, ast.AugAssign)
            and isinstance(node.op, ast.Add)
            and _shifted_repeat(node.value)
        )
        if offsets or gather:
            found.append(f"{rel}:{getattr(node, 'lineno', 0)}")
    return found


def test_segment_primitives_come_only_from_the_segment_library() -> None:
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "kernels" / "segments.py"
        for hit in hand_written_segments(path)
    ]
    assert found == []


def test_the_segment_check_sees_offsets_and_gathers() -> None:
    probe = PACKAGE / "measures" / "probe.py"  # not written: its text is given
    source = (
        "off = np.zeros(n + 1)\nnp.cumsum(c, out=off[1:])\n"
        "i = np.arange(t) + np.repeat(s - o, c)\ni += np.repeat(s - o, c)\n"
    )
    assert sorted(hand_written_segments(probe, source)) == [
        "measures/probe.py:2",
        "measures/probe.py:3",
        "measures/probe.py:4",
    ]


#: public readers that return one table, not a study: each named with why
NOT_A_STUDY = {
    "read_qrels": "JudgmentFrame",  # one judgments file
    "load_judgments": "JudgmentFrame",  # judgments of the toolkit's layout (TREC or CSV)
    "read_run": "DataFrame",  # one run file, as a table (runs scored by evaluate_run)
}


def test_every_public_loader_returns_a_loaded_study() -> None:
    """One loader result type (issue 22): ``load_*``/``read_*`` and ``frame_from_flat``."""
    import inspect

    import sessionval
    from sessionval.frame import LoadedStudy

    names = [
        n for n in sessionval.__all__ if n.startswith(("load_", "read_")) or n == "frame_from_flat"
    ]
    assert "load_jsonl" in names and "frame_from_flat" in names
    wrong = {}
    for name in names:
        returned = inspect.signature(getattr(sessionval, name), eval_str=True).return_annotation
        shown = getattr(returned, "__name__", str(returned))
        if name in NOT_A_STUDY:
            if shown != NOT_A_STUDY[name]:
                wrong[name] = shown
        elif returned is not LoadedStudy:
            wrong[name] = shown
    assert not wrong, f"loaders that do not return LoadedStudy: {wrong}"


def test_every_format_reader_is_a_load_function_returning_a_loaded_study() -> None:
    """The readers of ``io.formats.FORMATS`` follow the rule too: ``load_<format>``."""
    import inspect

    from sessionval.frame import LoadedStudy
    from sessionval.io.formats import FORMATS

    for fmt in FORMATS.values():
        reader = fmt.reader
        assert reader.__name__.startswith("load_"), (fmt.name, reader.__name__)
        returned = inspect.signature(reader, eval_str=True).return_annotation
        assert returned is LoadedStudy, (fmt.name, returned)


def _problem_calls(source: str) -> int:
    """``Problem(...)`` calls (by name or as ``problems.Problem``) in one module's source."""
    return sum(
        isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "Problem")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "Problem")
        )
        for node in ast.walk(ast.parse(source))
    )


def test_readers_build_problems_through_the_one_collector() -> None:
    """One problem collector (issue 22, review §1.6): the readers of ``io/`` build no
    ``Problem`` by hand, and only ``validate/collect.py`` has a collector that raises."""
    by_hand = [
        str(p.relative_to(REPO))
        for p in sorted((PACKAGE / "io").rglob("*.py"))
        if _problem_calls(p.read_text(encoding="utf-8"))
    ]
    assert not by_hand, f"build problems with validate.collect.ProblemCollector: {by_hand}"
    collectors = [
        f"{p.relative_to(REPO)}:{node.name}"
        for p in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
        and any(isinstance(f, ast.FunctionDef) and f.name == "raise_if_any" for f in node.body)
    ]
    assert collectors == ["sessionval/validate/collect.py:ProblemCollector"], collectors


def test_the_problem_check_sees_both_spellings() -> None:
    assert _problem_calls("Problem('a', 'line 1', '', 'x')") == 1
    assert _problem_calls("problems.Problem('a', '', '', 'x')") == 1
    assert _problem_calls("ProblemCollector('a').add_at(1, '', 'x')") == 0
