"""The columnar frame: the one in-memory layout every measure runs on.

The package's parts: :mod:`~sessionval.frame.columns` (the column declarations, of the
frame tables and of the flat layout), :mod:`~sessionval.frame.tables`
(:class:`SessionFrame`, :class:`JudgmentFrame`, :class:`LoadedStudy`; the schema in its
docstring), :mod:`~sessionval.frame.order` (the canonical id order) and
:mod:`~sessionval.frame.markdown` (``docs/frame.md`` and the flat section of
``docs/formats.md``, generated from the declarations).  Every name is importable from
``sessionval.frame``.
"""

from __future__ import annotations

from .columns import (
    FLAT_COLUMNS,
    FLAT_OPTIONAL,
    FLAT_REQUIRED,
    JUDGMENT_COLUMNS,
    QUERY_COLUMNS,
    RESULT_COLUMNS,
    SESSION_COLUMNS,
    Column,
    FlatColumn,
    check_columns,
)
from .markdown import flat_layout_markdown, frame_schema_markdown
from .order import ENTITY_IDS, id_order, ratings_last
from .tables import JudgmentFrame, LoadedStudy, QrelsKey, SessionFrame

__all__ = [
    "ENTITY_IDS",
    "FLAT_COLUMNS",
    "FLAT_OPTIONAL",
    "FLAT_REQUIRED",
    "JUDGMENT_COLUMNS",
    "QUERY_COLUMNS",
    "RESULT_COLUMNS",
    "SESSION_COLUMNS",
    "Column",
    "FlatColumn",
    "JudgmentFrame",
    "LoadedStudy",
    "QrelsKey",
    "SessionFrame",
    "check_columns",
    "flat_layout_markdown",
    "frame_schema_markdown",
    "id_order",
    "ratings_last",
]
