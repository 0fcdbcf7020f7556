"""Click options shared by several commands (one definition, one help text)."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = [
    "logs_argument",
    "qrels_option",
]

#: LOGS: a study folder (sessions.jsonl/.parquet/.csv and study.json) or one session file
logs_argument = click.argument("logs", type=click.Path(exists=True, path_type=Path))

#: --qrels: reference judgments, TREC qrels or CSV
qrels_option = click.option(
    "--qrels",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Reference judgments: TREC qrels or CSV (topic_id,doc_id,grade[,assessor]).",
)
