"""The docs generated from the frame's declarations.

``docs/frame.md`` and the flat-layout section of ``docs/formats.md``; tests keep the
committed files equal to these.
"""

from __future__ import annotations

from .columns import (
    FLAT_COLUMNS,
    JUDGMENT_COLUMNS,
    QUERY_COLUMNS,
    RESULT_COLUMNS,
    SESSION_COLUMNS,
)

__all__ = ["flat_layout_markdown", "frame_schema_markdown"]


def frame_schema_markdown() -> str:
    """The schema of every frame table as Markdown (the text of ``docs/frame.md``).

    A test keeps the committed ``docs/frame.md`` equal to this, so the documented
    schema is the one the code checks.
    """
    parts = [
        "# The columnar frame",
        "",
        "Every loader ends in a `SessionFrame` (`sessionval/frame/tables.py`): linked tables,",
        "one row per session, per query and per result, with ids as categoricals (integer",
        "codes). Judgments are a separate `JudgmentFrame`. Results are sorted by `query_idx`,",
        "then `rank`, so query `i` owns the rows `offsets[i]:offsets[i + 1]` of",
        "`SessionFrame.query_offsets()`: the segment layout every measure kernel uses. Generated",
        "from the code by `sessionval.frame.frame_schema_markdown()`; do not edit by hand.",
    ]
    for title, columns in (
        ("sessions", SESSION_COLUMNS),
        ("queries", QUERY_COLUMNS),
        ("results", RESULT_COLUMNS),
        ("judgments (JudgmentFrame.table)", JUDGMENT_COLUMNS),
    ):
        parts += [
            "",
            f"## {title}",
            "",
            "| column | dtype | required | meaning |",
            "|---|---|---|---|",
        ]
        parts += [
            f"| `{c.name}` | `{c.dtype}` | {'yes' if c.required else 'no'} | {c.description} |"
            for c in columns
        ]
    parts += [
        "",
        "`sessions` may carry one `rating_<name>` float64 column per post-task rating; `users`,",
        "`topics` and `systems` hold one row per entity with its attributes from `study.json`.",
        "",
    ]
    return "\n".join(parts)


def flat_layout_markdown() -> str:
    """The flat layout as a Markdown table (the flat-table section of ``docs/formats.md``).

    Examples
    --------
    >>> flat_layout_markdown().splitlines()[2]
    '| `session_id` | id | session | yes | session identifier, on every row |'
    """
    rows = [
        "| column | type | level | required | meaning |",
        "|---|---|---|---|---|",
        *(
            f"| `{c.name}` | {c.kind} | {c.level} | {c.required} | {c.description} |"
            for c in FLAT_COLUMNS
        ),
        "| `rating_<name>` | float | session | no | a post-task rating, one column each |",
    ]
    return "\n".join(rows)
