"""A study partitioned by session over several Parquet files: each file validated, then combined.

A log too large for one file (or written by ``sessionval convert ...
--partition-rows N``) is a folder of Parquet files in the flat layout
(``part-00000.parquet``, ...; directly in the folder or in its ``sessions/``
subfolder, with ``study.json`` beside them), or a glob of such files.  Every
session must sit whole in one file.

:func:`load_partitioned_study` validates each file on its own with the same
loader as a single file (:func:`~sessionval.io.toolkit.load_sessions`, then the
study-level references against the header and the judgments, which every
partition receives), so every problem names its file and row.  The partitions
are then combined into one :class:`~sessionval.frame.SessionFrame`, in file
order: ids become one set of categories (the union, in order of first
appearance), query indices are offset, and the books add up
(``read = accepted + rejected`` over all files).  A session found in two files
is an error naming both.

The partitions are loaded through a ``mapper`` (``map_items`` of an engine):
one after another by default, or on the workers of a Dask cluster
(:class:`~sessionval.evaluation.dask_engine.DaskEngine`).  This module lives in
:mod:`sessionval.io` because it finds files and reads the header and judgments,
like the other readers; validation stays in :mod:`sessionval.validate`.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from ..errors import InputFormatError, ParseError, ValidationFailed, raise_if_any
from ..frame import JudgmentFrame, LoadedStudy, SessionFrame, ratings_last
from ..models.study import Study
from ..problems import LoadReport, Mode, Problem
from ..progress import ProgressLike, as_progress
from ..validate.references import attach_entities, check_references, unjudged_keys
from .header import STUDY_JSON, find_header
from .lab_tables import is_lab_tables_input
from .toolkit import load_judgments, load_sessions

__all__ = [
    "PARTITIONED",
    "PartitionLoad",
    "PartitionSetup",
    "checked_partition",
    "combine_frames",
    "combine_partitions",
    "has_glob",
    "is_partitioned_input",
    "load_partition",
    "load_partitioned_study",
    "partition_files",
    "prepare_partitions",
    "without_results",
]

PARTITIONED: Final = "parquet-parts"
"""The name of this input format (``--from parquet-parts``)."""

#: suffixes of a partition file
_PART_SUFFIXES: Final = (".parquet", ".pq")
#: the subfolder of a study folder that may hold the partitions
_PARTS_FOLDER: Final = "sessions"

Mapper = Callable[[Callable[[Path], "PartitionLoad"], Sequence[Path]], list["PartitionLoad"]]
"""``mapper(fn, files) -> [fn(f) for f in files]``: how the partitions are loaded."""


def has_glob(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a glob pattern (``*``, ``?`` or ``[``).

    Examples
    --------
    >>> has_glob("logs/part-*.parquet"), has_glob("logs/sessions.parquet")
    (True, False)
    """
    return glob.has_magic(str(path))


def _parts_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in _PART_SUFFIXES)


def partition_files(path: str | os.PathLike[str]) -> list[Path]:
    """The partition files of ``path`` in order (sorted by name): a folder or a glob.

    Raises
    ------
    ParseError
        Nothing matches, or the folder holds no Parquet file.
    """
    if has_glob(path):
        files = sorted(Path(p) for p in glob.glob(str(path)) if Path(p).is_file())
        if not files:
            raise ParseError(f"{path}: no file matches this pattern")
        return files
    p = Path(path)
    if not p.is_dir():
        raise ParseError(f"{p}: not a folder of Parquet partitions")
    sub = p / _PARTS_FOLDER
    files = _parts_in(sub) if sub.is_dir() else []
    files = files or _parts_in(p)
    if not files:
        raise ParseError(f"{p}: no Parquet partition (*.parquet) in it or in {_PARTS_FOLDER}/")
    return files


def is_partitioned_input(path: Path) -> bool:
    """A glob of Parquet files, or a folder of them (or a study folder with ``sessions/``).

    A folder with a single session log (``sessions.jsonl``, ``sessions.parquet``, ...)
    is the ``jsonl``/``flat`` format, not this one.
    """
    if has_glob(path):
        return bool(glob.glob(str(path)))
    if not path.is_dir() or any((path / n).exists() for n in _SINGLE_LOGS):
        return False
    sub = path / _PARTS_FOLDER
    parts = bool((sub.is_dir() and _parts_in(sub)) or _parts_in(path))
    return parts and not is_lab_tables_input(path)  # lab tables may be Parquet files too


#: a folder holding one of these is a single-file study, not a partitioned one
_SINGLE_LOGS: Final = ("sessions.jsonl", "sessions.parquet", "sessions.csv", "sessions.tsv")


@dataclass(frozen=True)
class PartitionLoad:
    """One partition validated: its frame and books, or the problems that failed it (strict)."""

    path: Path
    frame: SessionFrame | None
    report: LoadReport | None
    problems: tuple[Problem, ...] = ()
    truncated: bool = False


def load_partition(
    path: Path,
    *,
    header: Study | None,
    study: Study,
    judgments: JudgmentFrame | None,
    mode: Mode,
    max_problems: int,
    max_rank: int | None,
    columns: Sequence[str] | None = None,
) -> PartitionLoad:
    """Validate one partition file: the record rules, then the references to header and judgments.

    ``header`` is the study header read from ``study.json`` (``None``: none), which
    sets the scale of the searchers' grades; ``study`` the header the references
    are checked against (built from the judgments when there is no file), as
    :func:`~sessionval.io.toolkit.load_toolkit_study` does for one file.  Pure (a function
    of its arguments and the file), so it runs on any worker.  A strict-mode
    failure is returned, not raised, so the problems of every partition are
    reported together.
    """
    try:
        loaded = load_sessions(
            path,
            mode=mode,
            max_problems=max_problems,
            study=header,
            max_rank=max_rank,
            columns=columns,
            raise_problems=False,  # strict: raised below with the study-level problems
        )
    except ValidationFailed as exc:
        return PartitionLoad(path, None, None, exc.problems, exc.truncated)
    return checked_partition(
        path, loaded, study=study, judgments=judgments, mode=mode, max_problems=max_problems
    )


def checked_partition(
    path: Path,
    loaded: LoadedStudy,
    *,
    study: Study,
    judgments: JudgmentFrame | None,
    mode: Mode,
    max_problems: int,
) -> PartitionLoad:
    """A partition read by its loader (problems kept), checked against the header and judgments.

    The one study-level check of a partition, whatever made it (a file,
    :mod:`sessionval.synth.partitions`' generator).  Strict mode returns the
    problems of the file and of its references together, not raised.
    """
    try:
        frame, report = check_references(
            loaded.frame,
            loaded.report,
            study,
            judgments,
            source=str(path),
            mode="lenient",  # only rejects; strict raises every problem at once just below
            max_problems=max_problems,
        )
        if mode == "strict":
            raise_if_any(report.problems, limit=max_problems)
    except ValidationFailed as exc:
        return PartitionLoad(path, None, None, exc.problems, exc.truncated)
    return PartitionLoad(path, frame, report)


def _union(columns: Sequence[pd.Series]) -> pd.Categorical:
    """Categorical columns of the partitions as one, categories in order of first appearance."""
    cats = [pd.Categorical(c) for c in columns]
    if len(cats) == 1:
        return cats[0]
    return pd.api.types.union_categoricals(cats, sort_categories=False, ignore_order=True)


def _concat_table(
    tables: Sequence[pd.DataFrame],
    sessions: pd.CategoricalDtype,
    session_offsets: Sequence[int],
    query_offsets: Sequence[int],
) -> pd.DataFrame:
    """The partitions' rows of one table, column by column, in partition order.

    Session and query indices are offset by the sessions and queries of the
    partitions before (each partition's sessions are its categories, in order);
    other ids take the union of the partitions' categories.
    """
    out: dict[str, Any] = {}
    # partitions may differ in optional columns (titles in one file, none in another)
    for name in ratings_last(dict.fromkeys(c for t in tables for c in t.columns)):
        parts = _with_column(tables, name)
        if name == "session_id":
            codes = [
                p.cat.codes.to_numpy().astype(np.int32) + np.int32(o)
                for p, o in zip(parts, session_offsets, strict=True)
            ]
            out[name] = pd.Categorical.from_codes(np.concatenate(codes), dtype=sessions)
        elif name == "query_idx":
            out[name] = np.concatenate(
                [
                    p.to_numpy().astype(np.int32) + np.int32(o)
                    for p, o in zip(parts, query_offsets, strict=True)
                ]
            )
        elif isinstance(parts[0].dtype, pd.CategoricalDtype):
            out[name] = _union(parts)
        else:
            out[name] = pd.concat(parts, ignore_index=True)
    return pd.DataFrame(out)


def _with_column(tables: Sequence[pd.DataFrame], name: str) -> list[pd.Series]:
    """Column ``name`` of each table; missing values (of the others' dtype) where it is absent.

    Raises
    ------
    InputFormatError
        The column is absent from a partition and its type cannot hold a missing value
        (a required column: the partitions' loader never leaves one out).
    """
    have = [t for t in tables if name in t.columns]
    if len(have) == len(tables):
        return [t[name] for t in tables]
    dtype = have[0][name].dtype
    if dtype.kind in "biu" and not isinstance(dtype, pd.api.extensions.ExtensionDtype):
        raise InputFormatError(
            f"column {name!r} ({dtype}) is in some partitions and not in others: only "
            "optional columns (text, ratings, times) may be left out of a partition"
        )
    return [
        t[name] if name in t.columns else pd.Series(None, index=t.index, dtype=dtype)
        for t in tables
    ]


def _check_split_sessions(parts: Sequence[PartitionLoad]) -> None:
    """Raise when a session id occurs in two partitions (a session split across files)."""
    loaded = [(p.path, p.frame) for p in parts if p.frame is not None]
    if len(loaded) < 2:
        return
    names = pd.Series(
        np.concatenate([f.sessions["session_id"].astype(str).to_numpy() for _, f in loaded])
    )
    dup = names.duplicated(keep=False).to_numpy()
    if not dup.any():
        return
    owner = np.concatenate([np.full(f.n_sessions, i) for i, (_, f) in enumerate(loaded)])
    first = str(names[np.flatnonzero(dup)[0]])
    files = [str(loaded[i][0]) for i in owner[(names == first).to_numpy()]]
    n = int(names[dup].nunique())
    raise InputFormatError(
        f"session {first!r} is in {' and '.join(files)}: a partitioned log must hold each "
        f"session whole in one file (partition by session); {n} session(s) are split"
    )


def combine_frames(frames: Sequence[SessionFrame], *, source: str) -> SessionFrame:
    """The partitions' frames as one, in order: ids as one set of categories, queries re-indexed.

    Raises
    ------
    InputFormatError
        No frame was given.
    """
    if not frames:
        raise InputFormatError(f"{source}: no partition to combine")
    if len(frames) == 1:
        return replace(frames[0], source=source)
    names = np.concatenate([f.sessions["session_id"].cat.categories.to_numpy() for f in frames])
    dtype = pd.CategoricalDtype(pd.Index(names, dtype="string"), ordered=False)
    s_off = np.cumsum([0, *(f.n_sessions for f in frames[:-1])]).tolist()
    q_off = np.cumsum([0, *(f.n_queries for f in frames[:-1])]).tolist()

    def table(name: str) -> pd.DataFrame:
        return _concat_table([getattr(f, name) for f in frames], dtype, s_off, q_off)

    sessions, queries, results = table("sessions"), table("queries"), table("results")

    def entities(col: str) -> pd.Series:
        return pd.Series(sessions[col].cat.categories.astype("string"), name=col)

    first = frames[0]
    return SessionFrame(
        sessions=sessions,
        queries=queries,
        results=results,
        users=pd.DataFrame({"user_id": entities("user_id")}),
        topics=pd.DataFrame(
            {"topic_id": entities("topic_id"), "title": "", "description": "", "judged": True}
        ),
        systems=pd.DataFrame({"system_id": entities("system_id"), "name": "", "description": ""}),
        grade_scale=first.grade_scale,
        source=source,
    )


@dataclass(frozen=True)
class PartitionSetup:
    """What every partition of a study is validated against, and how (:func:`prepare_partitions`).

    ``load`` is :func:`load_partition` with the header, judgments and options
    bound: pure, so it runs on any worker.
    """

    path: str
    files: list[Any]  # the partition files (or what a generator takes: synth/partitions.py)
    study: Study
    judgments: JudgmentFrame | None
    load: Callable[[Path], PartitionLoad]
    max_problems: int


def prepare_partitions(
    path: str | os.PathLike[str],
    *,
    qrels: str | os.PathLike[str] | None = None,
    header: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    max_rank: int | None = None,
    columns: Sequence[str] | None = None,
    qrels_map: str | Mapping[str, str] | None = None,
) -> PartitionSetup:
    """The partition files, the header and judgments read once, and the per-file load.

    Parameters are those of :func:`load_partitioned_study`.
    """
    files = partition_files(path)
    root = files[0].parent
    if root.name == _PARTS_FOLDER and not (root / STUDY_JSON).exists():
        root = root.parent
    head = find_header(root, header=header)
    judgments = (
        load_judgments(qrels, study=head, qrels_map=qrels_map) if qrels is not None else None
    )
    study = head
    if study is None:
        scale = judgments.scale if judgments is not None else None
        study = Study(name=root.name, **({"grade_scale": scale} if scale is not None else {}))
    load = partial(
        load_partition,
        header=head,
        study=study,
        judgments=judgments,
        mode=mode,
        max_problems=max_problems,
        max_rank=max_rank,
        columns=columns,
    )
    return PartitionSetup(str(path), files, study, judgments, load, max_problems)


def without_results(part: PartitionLoad) -> tuple[PartitionLoad, int]:
    """``part`` with its result rows left out (sessions and queries kept), and their number.

    What a client gathers when the partitions stay on the workers: the results
    table keeps its columns and dtypes (the categories of ``doc_id`` included), so
    the partitions combine (:func:`combine_partitions`) into a frame whose
    sessions, queries and categories are those of the whole study.
    """
    if part.frame is None:
        return part, 0
    # a copy: a slice is a view that would keep every result row alive where it is held
    frame = replace(part.frame, results=part.frame.results.iloc[:0].copy())
    return replace(part, frame=frame), part.frame.n_results


def combine_partitions(
    parts: Sequence[PartitionLoad],
    setup: PartitionSetup,
    *,
    progress: Callable[[str], None] | None = None,
) -> LoadedStudy:
    """The validated partitions as one study; strict-mode problems of every file raised at once.

    Raises
    ------
    ValidationFailed
        A partition failed (strict mode): the problems of every failed partition.
    InputFormatError
        A session split across files.
    """
    tick = progress or (lambda _msg: None)
    max_problems = setup.max_problems
    failed = [p for p in parts if p.frame is None]
    if failed:
        problems = [q for p in failed for q in p.problems]
        raise ValidationFailed(
            problems[:max_problems],
            truncated=len(problems) > max_problems or any(p.truncated for p in failed),
        )
    _check_split_sessions(parts)
    tick("combining partitions")
    report = LoadReport(setup.path)
    frames = []
    for p in parts:
        if p.report is not None and p.frame is not None:  # failed partitions were raised above
            report.merge(p.report)
            frames.append(p.frame)
    frame = combine_frames(frames, source=setup.path)
    frame = attach_entities(frame, setup.study)
    return LoadedStudy(
        study=setup.study,
        frame=frame,
        judgments=setup.judgments,
        report=report,
        qrels_key=setup.study.qrels_key,
        unjudged=unjudged_keys(frame, setup.judgments),
    )


def load_partitioned_study(
    path: str | os.PathLike[str],
    *,
    qrels: str | os.PathLike[str] | None = None,
    header: str | os.PathLike[str] | None = None,
    mode: Mode = "strict",
    max_problems: int = 50,
    progress: ProgressLike = None,
    max_rank: int | None = None,
    columns: Sequence[str] | None = None,
    mapper: Mapper | None = None,
    qrels_map: str | Mapping[str, str] | None = None,
) -> LoadedStudy:
    """Read and validate a study partitioned by session over Parquet files (a folder or a glob).

    Parameters
    ----------
    path
        A folder of ``*.parquet`` partitions (or a study folder whose ``sessions/``
        holds them), or a glob such as ``"logs/part-*.parquet"``.  Files are read
        in name order.
    qrels, header, mode, max_problems, max_rank
        As :func:`~sessionval.io.study.load_study`; ``header`` defaults to the
        ``study.json`` of the folder (or of the glob's folder, or its parent when
        that is ``sessions/``).
    progress
        A :class:`~sessionval.progress.Progress` told the files loaded (with a
        ``mapper``, all of them when it returns), or a callback called with a
        description as each partition is loaded and as they are combined.
    columns
        Optional columns to read besides the required ones (``None``: all).
    mapper
        ``mapper(fn, files)``: runs the per-file load, e.g. ``engine.map_items`` of
        a :class:`~sessionval.evaluation.dask_engine.DaskEngine` (default: one
        file after another in this process).
    qrels_map
        Column map of a CSV/TSV qrels table (``"topic=QueryId,doc=DocNo,grade=Rel"``).

    Returns
    -------
    LoadedStudy
        One frame for all partitions; ``report.source`` is ``path`` and its
        counts and problems are the sums over the files.

    Raises
    ------
    ValidationFailed
        Strict mode and a problem in any partition (the problems of every failed
        partition, each naming its file, up to ``max_problems``).
    InputFormatError
        A session split across files.
    """
    shown = as_progress(progress)
    setup = prepare_partitions(
        path,
        qrels=qrels,
        header=header,
        mode=mode,
        max_problems=max_problems,
        max_rank=max_rank,
        columns=columns,
        qrels_map=qrels_map,
    )
    files = setup.files
    shown.start(f"loading {len(files)} partitions", len(files), "files")
    if mapper is not None:
        parts = mapper(setup.load, files)
        shown.advance(len(files))
    else:  # one after another, each counted (or named, to a callback) on the progress bar
        parts = []
        for i, f in enumerate(files, start=1):
            if not shown.counting:
                shown(f"partition {i}/{len(files)}: {f.name}")
            parts.append(setup.load(f))
            shown.advance()
    shown.finish()
    return combine_partitions(parts, setup, progress=shown)
