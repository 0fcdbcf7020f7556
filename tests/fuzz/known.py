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
# Reliability round 3: found by the families of tests/fuzz/families.py while other slices
# of the round fix them; keyed by the row of the round's table.
KNOWN_FINDINGS: dict[str, Known] = {
    "CFG-1": Known(
        ("config",),
        ("exception", "exit-code"),
        r"RecursionError",
        "reliability round 3, row CFG-1 (deep TOML)",
        "a run --config file with `x = [[[...1...]]]` nested 500 deep: tomllib raises "
        "RecursionError in workflow/settings.py load_run_config (exit 70)",
    ),
    "CV-1": Known(
        ("roundtrip-jsonl",),
        ("exception",),
        r"ArrowInvalid: Array arguments must all be the same length",
        "reliability round 3, row CV-1 (JSON-lines with ratings on some sessions)",
        "write_jsonl (convert --to jsonl) of a study where only some sessions have a "
        "rating: ArrowInvalid in io/jsonl_text.py _join (exit 70)",
    ),
    "ST-2": Known(
        ("compare", "run"),
        ("output",),
        r"^TSV line \d+ has \d+ fields",
        "reliability round 3, row ST-2 (odd run names)",
        "compare QRELS 'tab<TAB>name.run' plain.run: the run name's tab or newline is "
        "written raw into the TSV (rows of 3 to 19 fields under a header of 18)",
    ),
}
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
