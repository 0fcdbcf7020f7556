"""JSON Schemas generated from the models, and the drift check that keeps them current.

The committed files in ``schemas/`` are what other tools (and people writing
logs by hand) validate against; ``sessionval schema --check`` fails when a model
changed and the files were not regenerated.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Final

from pydantic import BaseModel

from .models import Judgment, Session, Study

__all__ = [
    "SCHEMAS",
    "check_schemas",
    "render_schemas",
    "write_schemas",
]

#: file stem -> model; ``<stem>.schema.json`` in ``schemas/``.
SCHEMAS: Final[dict[str, type[BaseModel]]] = {
    "session": Session,
    "study": Study,
    "judgment": Judgment,
}


def render_schemas() -> dict[str, str]:
    """Each schema as the exact text written to disk (sorted keys, indent 2, final newline)."""
    out: dict[str, str] = {}
    for stem, model in SCHEMAS.items():
        schema = model.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"https://sessionval.org/schemas/{stem}.schema.json"
        out[f"{stem}.schema.json"] = (
            json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        )
    return out


def write_schemas(directory: str | os.PathLike[str]) -> list[Path]:
    """Write every schema into ``directory``; returns the paths written."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in render_schemas().items():
        (d / name).write_text(text, encoding="utf-8")
        written.append(d / name)
    return written


def check_schemas(directory: str | os.PathLike[str]) -> list[str]:
    """Names of schema files in ``directory`` that are missing or differ from the models."""
    d = Path(directory)
    stale = []
    for name, text in render_schemas().items():
        f = d / name
        if not f.exists() or f.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale
