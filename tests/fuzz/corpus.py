"""Valid seed inputs of every format, written by the project's own writers and generator.

:func:`build_seeds` writes one small valid input per fuzz target into a folder; a
:class:`Target` says which of its files the fuzzer mutates (and as what kind of file)
and how the input is read.  The inputs come from :mod:`sessionval.synth` (sessions,
qrels, judgments, runs) through :mod:`sessionval.io.writers`, and from the small
real-format fixtures of ``tests/io/fixtures`` (TREC Session XML, lab tables, CAsT).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sessionval.frame import LoadedStudy
from sessionval.io.formats import load_input
from sessionval.io.study import load_study
from sessionval.io.writers import write_flat, write_judgments_csv, write_qrels
from sessionval.problems import Mode
from sessionval.synth import write_runs, write_study
from sessionval.validate.flat import frame_to_flat
from sessionval.workflow.settings import load_run_config

from .families import FolderMutation, nfd_across_files, odd_run_name

FIXTURES = Path(__file__).resolve().parents[1] / "io" / "fixtures"

Loader = Callable[[Path, Mode], LoadedStudy]


@dataclass(frozen=True)
class Target:
    """One fuzz target: a seed folder, the files to mutate (name -> kind) and the reader."""

    name: str
    folder: str
    files: dict[str, str]
    load: Loader | None  # None: only the command line reads it (TREC runs)
    argv: tuple[str, ...]  # the command line that reads it ({dir}: the input's folder,
    # {runs}: every *.run file in it)
    reshape: tuple[FolderMutation, ...] = ()  # mutations of several files or of file names


def _load(fmt: str, entry: str, qrels: str | None = None, **options: str) -> Loader:
    def load(folder: Path, mode: Mode) -> LoadedStudy:
        opts = {k: str(folder / v) for k, v in options.items()}
        return load_input(
            folder / entry if entry else folder,
            fmt,
            qrels=folder / qrels if qrels else None,
            mode=mode,
            **opts,
        )

    return load


def _study(folder: Path, mode: Mode) -> LoadedStudy:
    return load_study(folder, qrels=folder / "qrels.txt", mode=mode)


def _judgments_csv(folder: Path, mode: Mode) -> LoadedStudy:
    return load_study(folder, qrels=folder / "judgments.csv", mode=mode)


def _config(folder: Path, mode: Mode) -> LoadedStudy:
    load_run_config(folder / "config.toml")  # what ``run --config`` reads first
    return _study(folder / "study", mode)


#: a valid ``run --config`` file: the seed of the deep-TOML family
CONFIG_TOML = "cutoff = 10\nb = 2.0\nbq = 4.0\n\n[run]\nlenient = false\n"

_PAIR = (nfd_across_files,)


TARGETS: tuple[Target, ...] = (
    Target("jsonl", "study", {"sessions.jsonl": "json"}, _study,
           ("validate", "{dir}", "--qrels", "{dir}/qrels.txt"), _PAIR),
    Target("study-json", "study", {"study.json": "json"}, _study,
           ("validate", "{dir}", "--qrels", "{dir}/qrels.txt")),
    Target("qrels", "study", {"qrels.txt": "text"}, _study,
           ("validate", "{dir}", "--qrels", "{dir}/qrels.txt"), _PAIR),
    Target("judgments-csv", "study", {"judgments.csv": "csv"}, _judgments_csv,
           ("validate", "{dir}", "--qrels", "{dir}/judgments.csv"), _PAIR),
    Target("csv", "flat", {"sessions.csv": "csv"}, _load("flat", "sessions.csv", "qrels.txt"),
           ("validate", "{dir}/sessions.csv", "--qrels", "{dir}/qrels.txt"), _PAIR),
    Target("tsv", "flat", {"sessions.tsv": "csv"}, _load("flat", "sessions.tsv", "qrels.txt"),
           ("validate", "{dir}/sessions.tsv", "--qrels", "{dir}/qrels.txt"), _PAIR),
    Target("parquet", "flat", {"sessions.parquet": "parquet"},
           _load("flat", "sessions.parquet", "qrels.txt"),
           ("validate", "{dir}/sessions.parquet", "--qrels", "{dir}/qrels.txt")),
    Target("parquet-parts", "parts", {"part-0.parquet": "parquet", "part-1.parquet": "parquet"},
           _load("parquet-parts", "", "qrels.txt"),
           ("validate", "{dir}", "--from", "parquet-parts", "--qrels", "{dir}/qrels.txt")),
    Target("lab-tables", "lab", {"session": "csv", "results": "csv", "qrels": "csv"},
           _load("lab-tables", ""), ("validate", "{dir}", "--from", "lab-tables"), _PAIR),
    Target("trec-session", "xml", {"ts2012.xml": "xml", "topicmap2012.txt": "text"},
           _load("trec-session", "ts2012.xml", "qrels2012.txt", topic_map="topicmap2012.txt"),
           ("validate", "{dir}/ts2012.xml", "--from", "trec-session", "--topic-map",
            "{dir}/topicmap2012.txt", "--qrels", "{dir}/qrels2012.txt")),
    Target("trec-session-2013", "xml", {"ts2013.xml": "xml", "qrels2013.txt": "text"},
           _load("trec-session", "ts2013.xml", "qrels2013.txt", topic_map="topicmap2013.txt"),
           ("validate", "{dir}/ts2013.xml", "--from", "trec-session", "--topic-map",
            "{dir}/topicmap2013.txt", "--qrels", "{dir}/qrels2013.txt")),
    Target("cast", "cast", {"runA.run": "text", "topics.json": "json"},
           _load("cast", "runA.run", "qrels.txt", topics="topics.json"),
           ("validate", "{dir}/runA.run", "--from", "cast", "--topics", "{dir}/topics.json",
            "--qrels", "{dir}/qrels.txt"), _PAIR),
    Target("run", "runs", {"runs/sys01.run": "text", "qrels.txt": "text"}, None,
           ("evaluate", "{dir}/qrels.txt", "{dir}/runs/sys01.run", "-m", "AP", "-m", "nDCG@10"),
           _PAIR),
    Target("compare", "runs", {"runs/sys01.run": "text", "runs/sys02.run": "text"}, None,
           ("compare", "{dir}/qrels.txt", "{runs}", "-m", "AP", "--resamples", "50"),
           (odd_run_name, odd_run_name, nfd_across_files)),
    Target("config", "config", {"config.toml": "toml"}, _config,
           ("run", "{dir}/study", "--qrels", "{dir}/study/qrels.txt", "--config",
            "{dir}/config.toml", "--out", "{dir}/out", "--no-figures")),
)  # fmt: skip
"""Every fuzz target: the input formats of :data:`sessionval.io.formats.FORMATS` (JSON-lines,
flat CSV/TSV/Parquet, Parquet parts, lab tables, TREC Session XML of two years, CAsT runs),
the files beside them (``study.json``, qrels, judgments CSV, topic maps, CAsT topics), the
TREC runs ``sessionval evaluate`` and ``compare`` read (``compare`` also with odd run file
names) and the ``run --config`` TOML file."""


def build_seeds(root: Path, *, seed: int = 0, n_sessions: int = 4) -> Path:
    """Write one valid input per seed folder of :data:`TARGETS` under ``root``; return ``root``."""
    study = root / "study"
    write_study(study, n_sessions=n_sessions, seed=seed + 1, formats="both")
    loaded = load_study(study, qrels=study / "qrels.txt")
    assert loaded.judgments is not None
    # the flat layout through the project's writer (CSV, Parquet); TSV as the same table
    flat = root / "flat"
    write_flat(loaded.frame, flat / "sessions.csv")
    write_flat(loaded.frame, flat / "sessions.parquet")
    pd.read_csv(flat / "sessions.csv", dtype=str, keep_default_na=False).to_csv(
        flat / "sessions.tsv", sep="\t", index=False
    )
    write_qrels(loaded.judgments, flat / "qrels.txt")
    write_judgments_csv(loaded.judgments, study / "judgments.csv")
    # Parquet parts: the flat table cut into two files of whole sessions
    parts = root / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    table = frame_to_flat(loaded.frame)
    sessions = table["session_id"].astype(str)
    first = sessions.isin(sorted(set(sessions))[: max(1, n_sessions // 2)])
    table[first].to_parquet(parts / "part-0.parquet", index=False)
    table[~first].to_parquet(parts / "part-1.parquet", index=False)
    write_qrels(loaded.judgments, parts / "qrels.txt")
    (study / "sessions.parquet").unlink(missing_ok=True)  # the folder is read as JSON-lines
    # the real-format fixtures (small hand-made files of each format)
    shutil.copytree(FIXTURES / "lab", root / "lab", dirs_exist_ok=True)
    xml = root / "xml"
    xml.mkdir(exist_ok=True)
    for name in (
        "ts2012.xml", "topicmap2012.txt", "qrels2012.txt",
        "ts2013.xml", "topicmap2013.txt", "qrels2013.txt",
    ):  # fmt: skip
        shutil.copy(FIXTURES / name, xml / name)
    shutil.copytree(FIXTURES / "cast", root / "cast", dirs_exist_ok=True)
    write_runs(root / "runs", n_systems=2, n_topics=3, seed=seed + 1, depth=8)
    shutil.copytree(study, root / "config" / "study")
    (root / "config" / "config.toml").write_text(CONFIG_TOML, encoding="utf-8")
    return root
