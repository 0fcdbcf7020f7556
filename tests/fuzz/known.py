"""Known findings of the fuzz suite: reader defects being fixed in other branches of issue 10.

Each entry of :data:`KNOWN_FINDINGS` is keyed by a finding id and says which targets,
steps and outcome it covers (a regular expression on the finding's one-line detail),
which slice of issue 10 owns the fix and a minimal reproduction.  A finding that
matches an entry is counted under its id and does not fail the suite; any other
finding does.  **When the fix is merged, delete the entry**: the suite then asserts
the property for those inputs too.
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
    kinds: tuple[str, ...]  # "exception", "hang", "books", "exit-code", "traceback"
    detail: str  # regular expression searched in Finding.detail
    owner: str  # the helper slice of issue 10 that fixes it
    repro: str  # minimal reproduction


_TEXT = ("qrels", "judgments-csv", "run", "cast", "trec-session", "trec-session-2013")

KNOWN_FINDINGS: dict[str, Known] = {
    "FZ01-jsonl-deep-nesting": Known(
        ("jsonl", "study-json"),
        ("exception",),
        r"^RecursionError:.* at io/jsonl\.py:\d+ in iter_sessions",
        "h1 (JSON-lines reader)",
        "sessions.jsonl line 1 = '{\"session_id\": ' + '[' * 100000 + ']' * 100000 + '}' "
        "(also in lenient mode; repro F2)",
    ),
    "FZ02-text-non-utf8": Known(
        _TEXT,
        ("exception",),
        r"^UnicodeDecodeError:.* at io/trec\.py:\d+ in (_read_ws|read_judgments_csv)",
        "h1 (qrels/run text readers: io/text.py's decoding path not used yet)",
        "qrels.txt (or a run, a CAsT run, judgments.csv) gzip-compressed, or with byte 0xff in "
        "a document id; repro F1/T1",
    ),
    "FZ03-parquet-nested-id": Known(
        ("parquet", "parquet-parts"),
        ("exception",),
        r"^TypeError: unhashable type.* at validate/fields\.py:\d+ in as_category",
        "h2 (Parquet columns)",
        "sessions.parquet whose doc_id (or any id) column is list<string> or struct; repro F3/T10",
    ),
    "FZ04-parquet-duplicate-column": Known(
        ("parquet", "parquet-parts"),
        ("exception",),
        r"^KeyError: .Column \w+ does not exist in schema. at validate/sources\.py",
        "h2 (Parquet columns)",
        "sessions.parquet with the column query_id written twice "
        "(table.append_column('query_id', table['query_id'])); repro F3",
    ),
    "FZ05-parquet-time-out-of-range": Known(
        ("parquet", "parquet-parts"),
        ("exception",),
        r"^(NotImplementedError: toordinal|OutOfBounds\w+:)",
        "h2 (times outside the representable range)",
        "sessions.parquet whose query_time is timestamp[us, UTC] 2**62 us (year ~148,000); "
        "repro F4",
    ),
    "FZ06-parquet-binary-not-utf8": Known(
        ("parquet", "parquet-parts"),
        ("exception",),
        r"^UnicodeDecodeError:.* at validate/fields\.py:\d+ in (parse_numbers|parse_times)",
        "h2 (Parquet columns)",
        "sessions.parquet whose rank (or query_time) column is binary: b'\\xff\\xfe'; repro T11",
    ),
    "FZ07-parquet-corrupt-dictionary": Known(
        ("parquet", "parquet-parts"),
        ("exception",),
        r"^IndexError:.* at validate/sources\.py:\d+ in dictionary_to_categorical",
        "h2 (corrupt Parquet pages)",
        "sessions.parquet with one bit flipped in a dictionary-encoded id column's indices "
        "(an index beyond the dictionary); repro F3 r3c.parquet",
    ),
    "FZ14-parquet-column-types": Known(
        ("parquet", "parquet-parts"),
        ("exception",),
        r"^(NotImplementedError|UnicodeDecodeError|ArrowException|ArrowInvalid|TypeError|"
        r"OutOfBounds\w+):.* at validate/(fields|sources|assemble)\.py:\d+ in "
        r"(as_category|parse_numbers|parse_times|_results_table|_queries_table|"
        r"dictionary_to_categorical|__init__)",
        "h2 (Parquet columns)",
        "sessions.parquet with an id or text column retyped: binary b'\\xff' in doc_id or "
        "query_text, timestamp[us] 2**62 in a time column, a struct id; repro F3/T10/T11",
    ),
    "FZ15-text-short-line": Known(
        _TEXT,
        ("exception",),
        r"^IndexError:.* at io/trec\.py:\d+ in (_read_ws|_numeric)",
        "h1 (qrels/run text readers)",
        "qrels.txt (or judgments.csv) with CR-only or vertical-tab line ends and a line cut "
        "short: the file becomes one long line of the wrong field count; repro T2/F7",
    ),
    "FZ16-lab-tables": Known(
        ("lab-tables",),
        ("exception",),
        r"^(IndexError|TypeError|ValueError|KeyError):.* at io/lab_tables\.py:\d+ in "
        r"(_flat_from_lab|load_lab_tables)",
        "h2 (lab tables)",
        "a session table with only its header line (or CR-only line ends, so one line), or a "
        "SessionID column mixing numbers and text; repro T4",
    ),
    "FZ17-trec-session-times": Known(
        ("trec-session", "trec-session-2013"),
        ("exception",),
        r"^(OutOfBounds\w+|OverflowError|ValueError):.* at io/trec_session(_log)?\.py:\d+",
        "h3 (TREC Session XML)",
        'ts2012.xml with <interaction num="1" starttime="-inf"> (or "1e30", "inf"), or a num '
        'attribute "99999999999999999999"; repro F5',
    ),
    "FZ18-csv-one-long-line": Known(
        ("csv", "tsv"),
        ("hang",),
        r"no answer within",
        "h2 (flat CSV reader)",
        "sessions.csv (115 kB, 800 rows) with every newline replaced by a form feed (or a "
        "vertical tab): one data line of ~17,000 fields; pandas.read_csv takes 8-12 s on an idle "
        "core and passed the campaign's 60 s bound under load (ends in 'no rows')",
    ),
    "FZ19-cast-runs-and-topics": Known(
        ("cast",),
        ("exception",),
        r"^(ValueError|OverflowError|ValidationError):.* at io/(cast|header)\.py:\d+ in "
        r"(_run_with_lines|read_cast_topics|<genexpr>)",
        "h3 (CAsT)",
        "runA.run with CR-only or vertical-tab line ends ('All arrays must be of the same "
        "length'); topics.json with a turn number 1e309 ('cannot convert float infinity'); a "
        "topic title that is not text (pydantic ValidationError from io/header.py); repro F7",
    ),
    "FZ08-time-out-of-range": Known(
        ("jsonl", "csv", "tsv", "lab-tables"),
        ("exception",),
        r"^OutOfBounds\w+:.* at validate/fields\.py:\d+ in parse_times",
        "h2 (validation range checks)",
        'sessions.jsonl with "start_time": "9999-12-31T23:59:59Z" (lenient too); repro F4/T7',
    ),
    "FZ09-topic-map-non-utf8": Known(
        ("trec-session", "trec-session-2013"),
        ("exception",),
        r"^UnicodeDecodeError:.* at io/trec_session\.py:\d+ in read_session_topic_map",
        "h3 (TREC Session XML)",
        "topicmap2012.txt with byte 0xe3 at the start; repro F1 (r8map.txt)",
    ),
    "FZ10-cast-topics": Known(
        ("cast",),
        ("exception",),
        r"^(RecursionError|TypeError|UnicodeDecodeError|AttributeError|KeyError):.* at "
        r"io/cast\.py:\d+ in read_cast_topics",
        "h3 (CAsT)",
        "topics.json nested 100000 deep, or a turn that is a number instead of an object "
        '([{"number": 201, "turn": [5]}]), or non-UTF-8 bytes; repro F7',
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
