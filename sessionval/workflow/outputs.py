"""The run's output folder: what this run wrote, and the stale files of the last run removed.

Re-running overwrites cleanly: the files of the previous run (listed in
``DIR/.sessionval-run.json``) that this run does not write again are removed;
nothing else in ``DIR`` is touched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pandas as pd

__all__ = [
    "MANIFEST",
    "RunOutputs",
]

#: The manifest of the files a run wrote, relative to the output folder.
MANIFEST: Final = ".sessionval-run.json"


class RunOutputs:
    """Files written by this run, relative to ``root``; removes stale files of the last run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written: list[str] = []
        previous = root / MANIFEST
        self.previous: list[str] = []
        if previous.is_file():
            try:
                self.previous = list(json.loads(previous.read_text(encoding="utf-8"))["files"])
            except (ValueError, KeyError, TypeError):
                self.previous = []

    def path(self, rel: str) -> Path:
        """``root / rel``, its folder created."""
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def add(self, *paths: Path) -> None:
        """Record files written (absolute paths under ``root``)."""
        for p in paths:
            self.written.append(p.relative_to(self.root).as_posix())

    def write_text(self, rel: str, text: str) -> Path:
        """Write UTF-8 text to ``root / rel`` and record it."""
        p = self.path(rel)
        p.write_text(text, encoding="utf-8")
        self.add(p)
        return p

    def write_frame(self, rel: str, table: pd.DataFrame) -> Path:
        """Write a table as CSV or Parquet (by the suffix of ``rel``) and record it."""
        p = self.path(rel)
        if p.suffix == ".parquet":
            table.to_parquet(p, index=False)
        else:
            table.to_csv(p, index=False)
        self.add(p)
        return p

    def finish(self) -> list[str]:
        """Remove files of the previous run not written now; write the manifest."""
        keep = set(self.written)
        removed = []
        for rel in self.previous:
            if rel in keep or ".." in Path(rel).parts or Path(rel).is_absolute():
                continue
            p = self.root / rel
            if p.is_file():
                p.unlink()
                removed.append(rel)
        for d in sorted({(self.root / r).parent for r in removed}, reverse=True):
            if d != self.root and d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        (self.root / MANIFEST).write_text(
            json.dumps({"files": sorted(keep)}, indent=1) + "\n", encoding="utf-8"
        )
        return removed
