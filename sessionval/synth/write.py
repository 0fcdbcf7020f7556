"""Output of the synthetic generator: Arrow tables, JSON-lines, Parquet, qrels, ``study.json``.

Each drawn chunk (:mod:`.simulate`) becomes a flat Arrow table in the layout
declared by :data:`sessionval.frame.FLAT_COLUMNS` (:func:`flat_schema`) and/or one
JSON line per session, exactly the :class:`~sessionval.models.Session` model.  The
files are written through :mod:`sessionval.io.writers` chunk by chunk, so a
million-session study streams in bounded memory.

Examples
--------
>>> study = generate_study(n_sessions=8, seed=1)
>>> study.header.name
'synthetic portal study (8 sessions, seed 1)'
>>> len(study.header.users), [t.topic_id for t in study.header.topics]
(2, ['A', 'B', 'C', 'D'])
>>> sorted(set(study.flat.column("system_id").to_pylist()))
['S1', 'S2']
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from .._types import IntArray
from ..errors import SessionvalError
from ..frame import FLAT_COLUMNS, JudgmentFrame
from ..io.staging import staged
from ..io.writers import (
    JsonlStream,
    ParquetStream,
    session_json_line,
    write_judgments_csv,
    write_qrels,
    write_study_json,
)
from ..kernels.segments import offsets_from_counts
from ..models.judgments import GradeScale
from ..models.study import Study
from ..validate.judgments import judgment_frame
from .assignment import Assignment
from .design import (
    COLLECTION_SIZE,
    SCENARIOS,
    Design,
    check_options,
    design_study,
    doc_names,
    header_of,
    judgments_of,
    query_texts,
    session_ids,
    user_ids,
)
from .simulate import Chunk, check_chunks, n_chunks, simulate_chunk

__all__ = [
    "OutputFormat",
    "SynthSummary",
    "SyntheticStudy",
    "flat_schema",
    "generate_study",
    "iter_flat_batches",
    "write_study",
]

OutputFormat = Literal["jsonl", "parquet", "both"]

# --------------------------------------------------------------------------- flat schema

_IDS: Final = pa.dictionary(pa.int32(), pa.string())
_TS: Final = pa.timestamp("ms", tz="UTC")
# logical kind of the flat layout -> Arrow type; identifiers and texts are dictionaries
_KIND_TYPES: Final[dict[str, pa.DataType]] = {
    "id": _IDS,
    "text": _IDS,
    "int": pa.int32(),
    "float": pa.float32(),
    "time": _TS,
}
# small integers (positions, click counts, grades 0-3) take 16 bits
_INT16: Final = frozenset({"query_pos", "clicks", "user_grade"})
# layout columns the generator does not draw: query ids default to `<session>:<pos>`,
# results have no URL/title/snippet, and judgments are per topic (no qrels_id)
_NOT_DRAWN: Final = frozenset({"query_id", "url", "title", "snippet", "qrels_id"})
# the generator's own post-task ratings, session-level columns after the layout's
_RATINGS: Final = (
    pa.field("rating_satisfaction", pa.float64()),
    pa.field("rating_difficulty", pa.float64()),
)
_DRAWN: Final = tuple(c for c in FLAT_COLUMNS if c.name not in _NOT_DRAWN)
# one value per row (no dictionary): the result-level numbers
_PLAIN_COLUMNS: Final = tuple(
    c.name for c in _DRAWN if c.level == "result" and c.kind not in ("id", "text")
)


def flat_schema() -> pa.Schema:
    """Return the Arrow schema of ``sessions.parquet`` as read back (``docs/formats.md`` layout).

    The columns are those of :data:`sessionval.frame.FLAT_COLUMNS` the generator draws,
    session-level first (then the ratings ``rating_satisfaction`` and
    ``rating_difficulty``), query-level next, result-level last.  Identifier and text
    columns are dictionary-encoded strings; times are UTC timestamps.  A query without
    results is one row whose ``rank`` and ``doc_id`` are null (its ``clicks`` is 0);
    ``dwell`` and ``user_grade`` are null where the searcher did not view or judge.
    On disk every per-session and per-query column is dictionary-encoded.

    Examples
    --------
    >>> flat_schema().field("doc_id").type
    DictionaryType(dictionary<values=string, indices=int32, ordered=0>)
    >>> flat_schema().names[4:8]
    ['session_start', 'session_end', 'rating_satisfaction', 'rating_difficulty']
    """
    fields: list[pa.Field] = []
    for level in ("session", "query", "result"):
        fields += [
            pa.field(c.name, pa.int16() if c.name in _INT16 else _KIND_TYPES[c.kind])
            for c in _DRAWN
            if c.level == level
        ]
        if level == "session":
            fields += _RATINGS
    return pa.schema(fields)


def _storage_schema() -> pa.Schema:
    """Return the schema of the chunk tables: all but the per-row columns are dictionaries."""
    fields = []
    for f in flat_schema():
        if f.name in _PLAIN_COLUMNS or pa.types.is_dictionary(f.type):
            fields.append(f)
        else:
            fields.append(pa.field(f.name, pa.dictionary(pa.int32(), f.type)))
    return pa.schema(fields)


# --------------------------------------------------------------------------- chunk output


def _arrow(values: npt.NDArray[Any] | pa.Array, type_: pa.DataType | None) -> pa.Array:
    arr = values if isinstance(values, pa.Array) else pa.array(values)
    return arr.view(type_) if type_ is not None else arr


def chunk_table(d: Design, c: Chunk) -> pa.Table:
    """Build the chunk's flat table: one row per result, one row per empty query.

    Columns repeated per session or per query are dictionary arrays over the session or
    query index (no per-row copies); Parquet stores them dictionary-encoded and reads them
    back as plain columns (:func:`flat_schema`).
    """
    ns = len(c.user)
    u0 = int(c.user[0])
    r_session = pa.array(c.q_session[c.r_query])
    r_query = pa.array(c.r_query)

    def per_session(
        values: npt.NDArray[Any] | pa.Array, type_: pa.DataType | None = None
    ) -> pa.Array:
        return pa.DictionaryArray.from_arrays(r_session, _arrow(values, type_))

    def per_query(
        values: npt.NDArray[Any] | pa.Array, type_: pa.DataType | None = None
    ) -> pa.Array:
        return pa.DictionaryArray.from_arrays(r_query, _arrow(values, type_))

    # string columns get dictionaries without repeats (readers turn them into categoricals)
    q_rows = np.maximum(c.q_n, 1)

    def coded(per_query_codes: npt.NDArray[Any], values: Sequence[str]) -> pa.Array:
        idx = np.repeat(per_query_codes.astype(np.int32), q_rows)
        return pa.DictionaryArray.from_arrays(pa.array(idx), pa.array(values, type=pa.string()))

    qs = c.q_session
    users = user_ids(u0, int(c.user[-1]) - u0 + 1, d.n_users)
    texts = query_texts()
    used_txt = np.zeros(len(texts), dtype=bool)
    used_txt[c.q_text] = True
    txt_code = np.cumsum(used_txt) - 1
    # documents: a dictionary of what the chunk uses, in collection (= id) order
    used = np.zeros(COLLECTION_SIZE, dtype=bool)
    used[c.r_doc[c.r_real]] = True
    doc_code = (np.cumsum(used, dtype=np.int32) - 1)[c.r_doc]
    placeholder = ~c.r_real
    doc_code[placeholder] = 0  # null rows: keep the hidden index in range
    cols = {
        "session_id": per_session(pa.array(session_ids(c.first_session, ns, d.n_sessions))),
        "user_id": coded((c.user - u0)[qs], users),
        "topic_id": coded(c.topic[qs], [sc.topic_id for sc in SCENARIOS]),
        "system_id": coded(c.system[qs], [s[0] for s in d.systems]),
        "session_start": per_session(c.start * 1000, _TS),
        "session_end": per_session(c.end * 1000, _TS),
        "rating_satisfaction": per_session(c.satisfaction),
        "rating_difficulty": per_session(c.difficulty),
        "query_pos": per_query(c.q_pos.astype(np.int16)),
        "query_text": coded(
            txt_code[c.q_text], [t for t, u in zip(texts, used_txt.tolist(), strict=True) if u]
        ),
        "query_time": per_query(c.q_time * 1000, _TS),
        "scan_depth": per_query(c.q_scan.astype(np.int32)),
        "rank": pa.array(c.r_rank, mask=placeholder),
        "doc_id": pa.DictionaryArray.from_arrays(
            pa.array(doc_code, mask=placeholder), pa.array(doc_names()[used])
        ),
        "clicks": pa.array(c.r_clicks),
        "dwell": pa.array(c.r_dwell, mask=np.isnan(c.r_dwell)),
        "user_grade": pa.array(c.r_user_grade, mask=c.r_user_grade < 0),
    }
    schema = _storage_schema()
    return pa.Table.from_arrays([cols[name] for name in schema.names], schema=schema)


def _iso(seconds: IntArray) -> list[str]:
    stamps = seconds.astype("datetime64[s]")
    return [s + "Z" for s in np.datetime_as_string(stamps, unit="s").tolist()]


def _session_records(d: Design, c: Chunk) -> Iterator[dict[str, Any]]:
    """Yield each session of the chunk as a dict shaped as the ``Session`` model.

    Fields at their default are left out, so :func:`~sessionval.io.writers.session_json_line`
    gives exactly ``Session.model_dump_json(exclude_defaults=True)``.
    """
    ns = len(c.user)
    sids = session_ids(c.first_session, ns, d.n_sessions)
    u0 = int(c.user[0])
    uids = user_ids(u0, int(c.user[-1]) - u0 + 1, d.n_users)
    start, end, qtime = _iso(c.start), _iso(c.end), _iso(c.q_time)
    texts = query_texts()
    names = doc_names()[c.r_doc].tolist()
    rank = c.r_rank.tolist()
    clicks = c.r_clicks.tolist()
    dwell = c.r_dwell.astype(np.float64).round(1).tolist()
    ugrade = c.r_user_grade.tolist()
    rs = offsets_from_counts(np.maximum(c.q_n, 1)).tolist()
    qn = c.q_n.tolist()
    qs = offsets_from_counts(c.n_queries).tolist()
    nq = c.n_queries.tolist()
    pos, txt, scan = c.q_pos.tolist(), c.q_text.tolist(), c.q_scan.tolist()
    for s in range(ns):
        queries = []
        for q in range(qs[s], qs[s] + nq[s]):
            query: dict[str, Any] = {
                "position": pos[q],
                "text": texts[txt[q]],
                "time": qtime[q],
                "scan_depth": scan[q],
            }
            if qn[q]:
                results = []
                for r in range(rs[q], rs[q] + qn[q]):
                    res: dict[str, Any] = {"rank": rank[r], "doc_id": names[r]}
                    if clicks[r]:
                        res["clicks"] = clicks[r]
                        res["dwell"] = dwell[r]
                    if ugrade[r] >= 0:
                        res["user_grade"] = ugrade[r]
                    results.append(res)
                query["results"] = results
            queries.append(query)
        session = {
            "session_id": sids[s],
            "user_id": uids[int(c.user[s]) - u0],
            "topic_id": SCENARIOS[int(c.topic[s])].topic_id,
            "system_id": d.systems[int(c.system[s])][0],
            "start_time": start[s],
            "end_time": end[s],
            "ratings": {
                "satisfaction": float(c.satisfaction[s]),
                "difficulty": float(c.difficulty[s]),
            },
            "queries": queries,
        }
        yield session


def study_judgments(d: Design) -> JudgmentFrame:
    """Return the reference judgments as a :class:`JudgmentFrame` for the writers."""
    t = judgments_of(d)
    return judgment_frame(
        t["topic_id"],
        t["doc_id"],
        t["grade"],
        t["assessor"],
        source="sessionval.synth",
        scale=GradeScale.default(),
    )


# --------------------------------------------------------------------------- public API


@dataclass(frozen=True)
class SyntheticStudy:
    """A generated study held in memory (use :func:`write_study` for large sizes).

    Attributes
    ----------
    header
        The :class:`~sessionval.models.Study` header (users, topics, systems, scales; no
        sessions), i.e. the content of ``study.json``.
    flat
        The sessions in the flat layout (:func:`flat_schema`): one row per result, one row
        with null ``rank``/``doc_id`` per query without results.
    judgments
        Reference judgments: ``topic_id``, ``doc_id``, ``grade``, ``assessor``.
    jsonl
        One JSON line per session (``Session`` model), or ``()`` if not requested.
    """

    header: Study
    flat: pa.Table
    judgments: pd.DataFrame
    jsonl: tuple[str, ...] = ()


@dataclass(frozen=True)
class SynthSummary:
    """What :func:`write_study` wrote: counts, files and the time it took."""

    n_sessions: int
    n_queries: int
    n_rows: int
    n_results: int
    files: tuple[Path, ...]
    seconds: float


def checked_design(
    n_sessions: int, seed: int, n_systems: int, assignment: Assignment | None
) -> Design:
    """Check the options and lay out the study."""
    check_options(n_sessions, seed, n_systems)
    d = design_study(n_sessions, seed, n_systems, assignment)
    check_chunks(d)
    return d


def iter_flat_batches(
    *,
    n_sessions: int = 120,
    seed: int = 2008,
    n_systems: int = 2,
    assignment: Assignment | None = None,
) -> Iterator[pa.Table]:
    """Yield the flat table chunk by chunk (32,768 sessions each), in session order.

    Parameters
    ----------
    n_sessions
        Number of sessions (>= 1).
    seed
        Seed of the study; the same ``(n_sessions, seed)`` gives the same study.
    n_systems
        Systems of graded quality (2: the paper's design).
    assignment
        Design, sessions per searcher, system effect (see :func:`generate_study`).

    Yields
    ------
    pyarrow.Table
        Consecutive row blocks with schema :func:`flat_schema`.
    """
    d = checked_design(n_sessions, seed, n_systems, assignment)
    for k in range(n_chunks(n_sessions)):
        yield chunk_table(d, simulate_chunk(d, k)).cast(flat_schema())


def generate_study(
    *,
    n_sessions: int = 120,
    seed: int = 2008,
    jsonl: bool = True,
    n_systems: int = 2,
    assignment: Assignment | None = None,
) -> SyntheticStudy:
    """Generate a synthetic study mirroring Järvelin et al. (2008), section 3.1, in memory.

    Parameters
    ----------
    n_sessions
        Number of sessions; 120 (the default) is the paper's design exactly (30 searchers ×
        4 scenarios, Table 2 per system).  Other sizes scale it: ``ceil(n/4)`` searchers,
        Table 2 proportions apportioned per system by largest remainder.
    seed
        Seed of the study's random streams.
    jsonl
        Also render the sessions as JSON lines (slow for very large studies).
    n_systems
        Systems compared: 2 is the paper's design; ``K > 2`` systems ``S1``…``SK`` of
        graded, known quality (``SK`` the best; :mod:`sessionval.synth.design`), for
        meta-evaluation.
    assignment
        Another design than the paper's Latin square
        (:class:`~sessionval.synth.assignment.Assignment`): ``within`` searchers with
        nested or crossed scenarios, ``between`` searchers or ``by_topic``; sessions per
        searcher; and the system effect (``0``: equal systems, a null study).
        ``sessionval run`` on the study detects that design.

    Returns
    -------
    SyntheticStudy
        Header, flat table, reference judgments and (optionally) JSON lines.

    Notes
    -----
    The generative model, all of it vectorised over sessions, queries and result rows:

    - *Design.*  Searcher ``u`` gets Latin-square condition ``u % 30`` (scenario order
      and system blocks).  Query counts are Table 2's per system, given to sessions in
      order of a latent effort (scenario difficulty, low skill, noise).  Some sessions
      fail (more often when long or hard, less with System 2).
    - *Query quality* ``q``: ``Beta(1.3, 7)`` for every query but the last of a
      successful session, which draws ``Beta(10, 3.7)``.  System 2 adds 0.12 to weak
      queries and 0.16 to last ones, skill adds a little and scenario difficulty takes a
      little away.
    - *Lists*: empty (10 % of weak queries, 7 % with System 2, never a successful last
      one), short (1–9), medium (10–99) or a full 100.  At rank ``i`` a relevant document
      comes with probability ``0.85 q exp(-(i-1)/(6+14q)) + 0.004``: grade 3 with share
      ``0.15 + 0.35 q``, grade 2 with share 0.35, the rest grade 1.  A judged non-relevant
      document comes with probability ``0.22 exp(-(i-1)/25) + 0.03``, otherwise an
      unjudged one.  The draw down a list is low-discrepancy, so the story shows at 120
      sessions already.
    - *Documents*: the ``j``-th document of a category in a list is step ``j`` of the
      session's walk through the scenario's pool (its own offset and a stride coprime
      with the pool size).  No document repeats within a list.  Later queries drift a
      little, so documents recur within a session.
    - *Behaviour*: geometric scan depth (longer on the last query).  A satisfied searcher
      scans to the first fairly or highly relevant document in the top 20 and opens it.
      Clicks depend on grade and rank, dwell is log-normal (longer for relevant
      documents), and own grades are the assessor's grade ± 1 (judged-0 documents get 0–2,
      unjudged ones 0).  Times add reading, typing, scanning and dwell.  Satisfaction
      follows the best own grade of the session; difficulty follows the query count.

    References
    ----------
    Järvelin et al. (2008), ECIR, doi:10.1007/978-3-540-78646-7_4 (``jarvelin2008``).

    Examples
    --------
    >>> s = generate_study()
    >>> s.header.users[0].user_id, len(s.jsonl)
    ('u01', 120)
    """
    d = checked_design(n_sessions, seed, n_systems, assignment)
    tables: list[pa.Table] = []
    lines: list[str] = []
    for k in range(n_chunks(n_sessions)):
        c = simulate_chunk(d, k)
        tables.append(chunk_table(d, c))
        if jsonl:
            lines.extend(session_json_line(s) for s in _session_records(d, c))
    flat = pa.concat_tables(tables).unify_dictionaries() if len(tables) > 1 else tables[0]
    flat = flat.cast(flat_schema())
    return SyntheticStudy(
        header=header_of(d), flat=flat, judgments=judgments_of(d), jsonl=tuple(lines)
    )


def write_study(
    out_dir: str | os.PathLike[str],
    *,
    n_sessions: int = 120,
    seed: int = 2008,
    formats: OutputFormat = "both",
    progress: bool = False,
    n_systems: int = 2,
    assignment: Assignment | None = None,
) -> SynthSummary:
    """Generate a study and stream it to ``out_dir`` chunk by chunk.

    Writes ``study.json``, ``qrels.txt``, ``judgments.csv`` and, by ``formats``,
    ``sessions.jsonl`` and/or ``sessions.parquet`` (zstd level 3, one row group per
    chunk of 32,768 sessions, identifiers dictionary-encoded).  All text files are
    byte-identical for the same ``(n_sessions, seed)``; the Parquet file has identical
    content (its bytes also carry the pyarrow version).  Parquet encoding runs in one
    background thread while the next chunk is generated.  JSON lines are written by
    Python and are large (about 8 kB per session): for a million sessions use
    ``formats="parquet"``.

    Parameters
    ----------
    out_dir
        Folder to write to (created if missing; existing files are replaced).  The
        files are written in a staging folder inside it and renamed into place when all
        are complete (:func:`~sessionval.io.staging.staged`): an interrupted run leaves
        the older files as they were.
    n_sessions
        Number of sessions (see :func:`generate_study`).
    seed
        Seed of the study.
    formats
        ``"jsonl"``, ``"parquet"`` or ``"both"``.
    progress
        Show a progress bar (tqdm, on stderr).
    n_systems
        Systems of graded quality (see :func:`generate_study`).
    assignment
        Design, sessions per searcher, system effect (see :func:`generate_study`).

    Returns
    -------
    SynthSummary
        Counts, written files and elapsed seconds.
    """
    if formats not in ("jsonl", "parquet", "both"):
        raise SessionvalError(f"formats must be 'jsonl', 'parquet' or 'both', got {formats!r}")
    t0 = time.perf_counter()
    out = Path(out_dir)
    d = checked_design(n_sessions, seed, n_systems, assignment)
    # written in a staging folder, renamed into place when complete (io/staging.py)
    with staged(out, command="synth") as stage:
        files, n_rows, n_results = _stream_study(d, stage.root, formats, n_sessions, progress)
    return SynthSummary(
        n_sessions=n_sessions,
        n_queries=int(d.query_offsets[-1]),
        n_rows=n_rows,
        n_results=n_results,
        files=tuple(stage.final(f) for f in files),
        seconds=time.perf_counter() - t0,
    )


def _stream_study(
    d: Design, out: Path, formats: OutputFormat, n_sessions: int, progress: bool
) -> tuple[list[Path], int, int]:
    """Write the study's files into ``out``: (files, result rows, real results)."""
    judgments = study_judgments(d)
    files = [
        write_study_json(header_of(d), out / "study.json"),
        write_qrels(judgments, out / "qrels.txt"),
        write_judgments_csv(judgments, out / "judgments.csv"),
    ]
    parquet: ParquetStream | None = None
    jsonl: JsonlStream | None = None
    n_rows = n_results = 0
    try:
        if formats in ("parquet", "both"):
            parquet = ParquetStream(
                out / "sessions.parquet",
                _storage_schema(),
                dictionary_columns=[n for n in flat_schema().names if n not in _PLAIN_COLUMNS],
                statistics_columns=_PLAIN_COLUMNS,
            )
            files.append(parquet.path)
        if formats in ("jsonl", "both"):
            jsonl = JsonlStream(out / "sessions.jsonl")
            files.append(jsonl.path)
        chunks: Any = range(n_chunks(n_sessions))
        if progress:
            from tqdm import tqdm

            chunks = tqdm(chunks, desc="synth", unit="chunk", leave=False)
        for k in chunks:
            c = simulate_chunk(d, k)
            n_rows += len(c.r_rank)
            n_results += int(np.count_nonzero(c.r_real))
            if parquet is not None:
                # encoded in the stream's thread while the next chunk is drawn
                parquet.write(chunk_table(d, c))
            if jsonl is not None:
                jsonl.write(_session_records(d, c))
            del c
    finally:
        if parquet is not None:
            parquet.close()
        if jsonl is not None:
            jsonl.close()
    return files, n_rows, n_results
