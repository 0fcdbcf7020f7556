"""Known findings of the fuzz suite: defects found but not fixed yet.

Each entry of :data:`KNOWN_FINDINGS` is keyed by a finding id and says which targets,
steps and outcome it covers (a regular expression on the finding's one-line detail),
which slice (of issue 10, or row of reliability round 3) owns the fix and a minimal
reproduction.  A finding that matches an entry is counted under its id and does not
fail the suite; any other finding does.  **When the fix is merged, delete the entry**:
the suite then asserts the property for those inputs too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .harness import Finding


@dataclass(frozen=True)
class Known:
    """A known finding: what it matches, who fixes it, how to reproduce it."""

    targets: tuple[str, ...]  # fuzz targets ("*": any)
    kinds: tuple[str, ...]  # "exception", "hang", "books", "exit-code", "traceback", "output"
    detail: str  # regular expression searched in Finding.detail
    owner: str  # the helper slice of issue 10 that fixes it
    repro: str  # minimal reproduction


_TEXT = ("qrels", "judgments-csv", "run", "cast", "trec-session", "trec-session-2013")

# The first campaign's findings FZ01-FZ18 are fixed and asserted (docs/reliability.md).
# Reliability round 3's findings (CFG-1, CV-1, ST-2 found again by tests/fuzz/families.py)
# are fixed and asserted too; a new open finding is listed here by its row id until fixed.
KNOWN_FINDINGS: dict[str, Known] = {}
"""Finding id -> :class:`Known`.  Remove an entry once its fix is merged."""


def match_known(finding: Finding) -> str | None:
    """The id of the known finding ``finding`` matches, or None."""
    for fid, k in KNOWN_FINDINGS.items():
        if "*" not in k.targets and finding.target not in k.targets:
            continue
        if finding.kind not in k.kinds:
            continue
        if re.search(k.detail, finding.detail):
            return fid
    return None
