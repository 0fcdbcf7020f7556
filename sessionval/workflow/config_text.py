"""The configuration as text: the TOML a run writes and the reference of ``docs/configuration.md``.

Both are rendered from the models of :mod:`sessionval.workflow.config_file`, so a new
key or table is documented and written without touching this module.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from ..errors import SessionvalError
from ..evaluation.config import PRESETS, SessionConfig
from .settings import RunConfig, RunSettings

__all__ = [
    "config_markdown",
    "config_tables",
    "to_toml",
]


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        return (
            "{ "
            + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items())
            + " }"
        )
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise SessionvalError(f"cannot write {v!r} ({type(v).__name__}) to TOML")


def to_toml(tables: Mapping[str, Mapping[str, Any]], *, header: str = "") -> str:
    """Write ``{"": top-level, "figures": {...}}`` as TOML (``None`` values are left out).

    Examples
    --------
    >>> t = {"": {"b": 2.0, "gains": "0-1-10-100", "x": None}, "figures": {"ranks": 100}}
    >>> print(to_toml(t))
    b = 2.0
    gains = "0-1-10-100"
    <BLANKLINE>
    [figures]
    ranks = 100
    <BLANKLINE>
    """
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    for name, table in tables.items():
        if name:
            lines += ["", f"[{name}]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in table.items() if v is not None]
    return "\n".join(lines) + "\n"


def config_tables(settings: RunSettings) -> dict[str, dict[str, Any]]:
    """The configuration a run used, as TOML tables (re-runnable with ``--config``).

    The session parameters are the ones actually used (a preset written as ``preset``
    with every parameter explicit, so reading it back gives the same configuration);
    every table of :class:`~sessionval.workflow.config_file.RunConfig` follows with the
    run's own values (``lenient``, ``csv_safe``, ``exports`` as the run used them).
    """
    params = settings.config.model_dump(mode="json")
    preset = params.pop("preset_name", None)
    top = {"preset": preset, **params}
    file = settings.file.model_copy(
        update={
            "figures": settings.figures,
            "run": settings.file.run.model_copy(
                update={
                    "lenient": settings.lenient,
                    "csv_safe": settings.csv_safe,
                    "exports": settings.exports,
                }
            ),
            "measures": settings.file.measures.model_copy(
                update={"session": settings.measures.session, "query": settings.measures.query}
            ),
        }
    )
    tables: dict[str, dict[str, Any]] = {"": top}
    for name in RunConfig.TABLES:
        section: BaseModel = getattr(file, name)
        table = {k: v for k, v in section.model_dump(mode="json").items() if v != []}
        if table:
            tables[name] = table
    return tables


# ---------------------------------------------------------------------------------------------
# the reference of docs/configuration.md


def _type_text(schema: Mapping[str, Any]) -> str:
    """What a key takes, from its JSON Schema, in words."""
    if "enum" in schema:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "anyOf" in schema:
        parts = [s for s in schema["anyOf"] if s.get("type") != "null"]
        text = " or ".join(_type_text(s) for s in parts)
        return text + (" (optional)" if len(parts) < len(schema["anyOf"]) else "")
    kind = schema.get("type")
    bounds = [
        f"{op} {schema[key]:g}"
        for key, op in (
            ("minimum", "≥"),
            ("exclusiveMinimum", ">"),
            ("maximum", "≤"),
            ("exclusiveMaximum", "<"),
        )
        if key in schema
    ]
    base = {
        "boolean": "`true` or `false`",
        "integer": "whole number",
        "number": "number",
        "string": "text",
        "object": "table",
    }.get(str(kind), str(kind))
    if kind == "array":
        base = "list of " + _type_text(schema.get("items", {}))
    if "pattern" in schema:
        base += f" (`{schema['pattern']}`)"
    return base + (" " + ", ".join(bounds) if bounds else "")


def _default_text(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    try:
        return f"`{_toml_value(value)}`"
    except SessionvalError:
        return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _rows(model: type[BaseModel], *, skip: tuple[str, ...] = ()) -> list[str]:
    schema = model.model_json_schema(mode="validation")
    props = schema.get("properties", {})
    rows = []
    instance_defaults = model.model_construct()
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        default = getattr(instance_defaults, name, info.default)
        if isinstance(info.json_schema_extra, Mapping) and "default" in info.json_schema_extra:
            default = info.json_schema_extra["default"]
        rows.append(
            f"| `{name}` | {_cell(_type_text(props.get(name, {})))} | "
            f"{_cell(_default_text(default))} | {_cell(info.description or '')} |"
        )
    return rows


def config_markdown() -> str:
    """The reference of every key of the configuration file (``docs/configuration.md``).

    Examples
    --------
    >>> text = config_markdown()
    >>> "| `lenient` | `true` or `false` | `false` |" in text, "## `[figures]`" in text
    (True, True)
    """
    head = ["| key | value | default | meaning |", "|---|---|---|---|"]
    preset = (
        f"| `preset` | one of {', '.join(f'`{json.dumps(p)}`' for p in PRESETS)} | unset | "
        "a named published variant (table in docs/sessions.md); the other keys override its "
        "parameters |"
    )
    lines = [
        "## Top level: the session parameters",
        "",
        *head,
        preset,
        *_rows(SessionConfig, skip=("preset_name",)),
    ]
    for name in RunConfig.TABLES:
        model = RunConfig.model_fields[name].annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise SessionvalError(f"RunConfig.{name} is not a table model")
        doc = (model.__doc__ or "").strip().split("\n\n")[0].split(": ", 1)[-1]
        lines += ["", f"## `[{name}]`", "", _cell(doc[:1].upper() + doc[1:]), "", *head]
        lines += _rows(model)
    return "\n".join(lines) + "\n"
