"""The one set of builders the tests share: studies, judgments, session logs, comparisons.

Every test that needs a small study or judgments in code builds it here, so a change of
the flat layout or of a constructor is made once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from sessionval.frame import JudgmentFrame, SessionFrame
from sessionval.models.judgments import GradeScale
from sessionval.validate.flat import frame_from_flat
from sessionval.validate.judgments import judgments_from_records

FLAT_IDS = ["session_id", "user_id", "topic_id", "system_id", "query_pos", "rank", "doc_id"]

#: one session for :func:`flat_table`: (session_id, user_id, topic_id, system_id, result lists)
SessionSpec = tuple[str, str, str, str, Sequence[Sequence[str]]]


def judgments(
    rows: Iterable[tuple[str, str, int] | tuple[str, str, int, str]],
    *,
    scale: GradeScale | None = None,
    default_scale: bool = True,
) -> JudgmentFrame:
    """Judgments from ``(topic, doc, grade[, assessor])`` rows.

    The scale is ``scale``, else the default 0..3 scale, else (``default_scale=False``)
    one level per grade that occurs.
    """
    if scale is None and default_scale:
        scale = GradeScale.default()
    return judgments_from_records(rows, scale=scale)


def flat_table(
    sessions: Iterable[SessionSpec], *, scan: dict[tuple[str, int], int] | None = None
) -> pd.DataFrame:
    """A flat table (one row per result) of the given sessions; an empty list is a null row.

    ``scan`` gives the logged scan depth of ``(session_id, query_pos)``; without it the
    table has no ``scan_depth`` column.
    """
    rows = []
    for sid, user, topic, system, lists in sessions:
        for q, docs in enumerate(lists, start=1):
            sd = (scan or {}).get((sid, q))
            if not docs:
                rows.append((sid, user, topic, system, q, None, None, sd))
            for r, d in enumerate(docs, start=1):
                rows.append((sid, user, topic, system, q, r, d, sd))
    df = pd.DataFrame(rows, columns=[*FLAT_IDS, "scan_depth"])
    return df if scan is not None else df.drop(columns="scan_depth")


def frame(
    sessions: Iterable[SessionSpec], *, scan: dict[tuple[str, int], int] | None = None
) -> SessionFrame:
    """The validated :class:`SessionFrame` of :func:`flat_table` (strict mode)."""
    return frame_from_flat(flat_table(sessions, scan=scan)).frame


def make_session(
    sid: str = "s1",
    *,
    user: str = "u1",
    topic: str = "A",
    system: str = "S1",
    queries: list[list[str]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One session as the JSON-lines record of ``docs/formats.md``."""
    queries = queries if queries is not None else [["d1", "d2"], ["d3"]]
    return {
        "session_id": sid,
        "user_id": user,
        "topic_id": topic,
        "system_id": system,
        "queries": [
            {
                "position": i + 1,
                "text": f"q{i + 1}",
                "results": [{"rank": k + 1, "doc_id": d} for k, d in enumerate(docs)],
            }
            for i, docs in enumerate(queries)
        ],
        **extra,
    }


def write_jsonl(path: Path, sessions: list[dict[str, Any] | str]) -> Path:
    """Write session records (or raw lines) as JSON-lines."""
    lines = [s if isinstance(s, str) else json.dumps(s) for s in sessions]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def plain(table: pd.DataFrame, columns: list[str] | None = None) -> pd.DataFrame:
    """Categoricals as strings, for comparing tables whose category order may differ."""
    out = (table[columns] if columns is not None else table).copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype(str)
    return out.reset_index(drop=True)


def assert_same_frame(a: SessionFrame, b: SessionFrame, *, ratings: bool = True) -> None:
    """Two frames hold the same study (categories may be ordered differently)."""
    s_cols = ["session_id", "user_id", "topic_id", "system_id", "start_time", "end_time"]
    s_cols.append("n_queries")
    if ratings:
        # an all-missing rating has no trace in JSON-lines (ratings are a dict per session)
        s_cols += [
            c
            for c in a.sessions.columns
            if str(c).startswith("rating_") and a.sessions[c].notna().any()
        ]
    pd.testing.assert_frame_equal(plain(a.sessions, s_cols), plain(b.sessions, s_cols))
    pd.testing.assert_frame_equal(plain(a.queries), plain(b.queries[list(a.queries.columns)]))
    cols = list(a.results.columns)
    pd.testing.assert_frame_equal(plain(a.results), plain(b.results[cols]))


def small_flat(**overrides: Any) -> pd.DataFrame:
    """A four-row flat table (sessions s1 with two queries, the second empty, and s2).

    Keyword arguments replace or add columns, e.g. ``small_flat(rank=[1, 3, None, 1])``.
    """
    base: dict[str, Any] = {
        "session_id": ["s1", "s1", "s1", "s2"],
        "user_id": "u",
        "topic_id": "T",
        "system_id": "S",
        "query_pos": [1, 1, 2, 1],
        "rank": [1, 2, None, 1],
        "doc_id": ["a", "b", None, "a"],
    }
    base.update(overrides)
    return pd.DataFrame(base)


def write_partitions(flat: pd.DataFrame, folder: Path, n_parts: int) -> list[Path]:
    """Write a flat table as ``n_parts`` Parquet files partitioned by session, in session order.

    Each session's rows go whole into one file (``part-00000.parquet``, ...), the
    layout of ``sessionval convert --partition-rows``; ``folder`` is created.
    """
    folder.mkdir(parents=True, exist_ok=True)
    codes = pd.factorize(flat["session_id"].astype(str))[0]
    n_sessions = int(codes.max()) + 1 if len(codes) else 0
    part_of = codes * n_parts // max(n_sessions, 1)
    paths = []
    for i in range(n_parts):
        p = folder / f"part-{i:05d}.parquet"
        flat[part_of == i].reset_index(drop=True).to_parquet(p, index=False)
        paths.append(p)
    return paths


def trec_runs(
    folder: Path, *, n_topics: int = 12, quality: Sequence[float] = (0.3, 0.5, 0.8), seed: int = 0
) -> tuple[Path, list[Path]]:
    """Qrels (3 relevant, 5 non-relevant documents per topic) and one TREC run per quality.

    Run ``k`` (``sys_k.run``) scores each document uniformly at random plus
    ``quality[k]`` for the relevant ones, so a higher quality ranks them higher.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels = folder / "qrels.txt"
    qrels.write_text(
        "".join(f"t{t} 0 d{t}_{d} {1 if d < 3 else 0}\n" for t in range(n_topics) for d in range(8))
    )
    runs = []
    for k, q in enumerate(quality):
        lines = []
        for t in range(n_topics):
            score = rng.random(8) + q * (np.arange(8) < 3)
            for r, i in enumerate(np.argsort(-score), start=1):
                lines.append(f"t{t} Q0 d{t}_{i} {r} {score[i]:.4f} sys{k}\n")
        path = folder / f"sys_{k}.run"
        path.write_text("".join(lines))
        runs.append(path)
    return qrels, runs
