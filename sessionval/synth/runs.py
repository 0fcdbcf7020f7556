r"""A synthetic test collection: qrels and TREC runs of K systems of graded, known quality.

For meta-evaluation (``sessionval compare`` and ``sessionval meta``) a set of runs
whose true order is known: system ``k`` (``sys01`` … ``sysK``) has quality
:math:`q_k`, evenly spaced from ``low`` to ``high``, so ``sysK`` is the best.

The model, vectorised over topics × systems × documents:

- *Topics* ``t``: :math:`|R_t| \sim 5 + \mathrm{Poisson}(15)` relevant documents with
  grades 1-3 (shares 0.5, 0.3, 0.2), :math:`|N_t| \sim 30 + \mathrm{Poisson}(70)` judged
  non-relevant ones, and ``unjudged`` more candidates; a difficulty
  :math:`\delta_t \sim N(0, 0.1)`.
- *Runs*: system ``k`` on topic ``t`` has effective quality
  :math:`q_{kt} = \mathrm{clip}(q_k - \delta_t + \varepsilon_{kt}, 0.01, 0.99)`,
  :math:`\varepsilon_{kt} \sim N(0, 0.05)` (topic × system interaction: the order of
  two close systems varies by topic).  Every candidate gets the score
  :math:`s = z + 4\, q_{kt} (g + 1)/4` for a relevant document of grade ``g`` and
  :math:`s = z` otherwise, :math:`z \sim N(0, 1)`; the run lists the ``depth`` best.

The same ``(n_systems, n_topics, seed)`` gives the same files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import SessionvalError, writing
from ..frame import JudgmentFrame
from ..io.writers import write_qrels
from ..kernels.segments import offsets_from_counts, segment_ids, segment_ranks
from ..models.judgments import GradeScale
from ..validate.judgments import judgment_frame
from .design import seeded_rng

__all__ = [
    "SyntheticRuns",
    "generate_runs",
    "write_runs",
]


@dataclass(frozen=True)
class SyntheticRuns:
    """A generated collection: judgments, runs by name, and each system's true quality."""

    judgments: JudgmentFrame
    runs: dict[str, pd.DataFrame]
    quality: pd.DataFrame


def generate_runs(
    *,
    n_systems: int = 10,
    n_topics: int = 50,
    seed: int = 2007,
    depth: int = 100,
    unjudged: int = 200,
    low: float = 0.2,
    high: float = 0.6,
) -> SyntheticRuns:
    """Generate qrels and ``n_systems`` runs of known quality (module docstring).

    Parameters
    ----------
    n_systems, n_topics
        Collection size (``n_systems >= 2``, ``n_topics >= 1``).
    seed
        Seed of the collection.
    depth
        Documents per run and topic.
    unjudged
        Unjudged candidate documents per topic.
    low, high
        Quality of the weakest and of the best system.

    Returns
    -------
    SyntheticRuns
        ``runs`` maps ``sys01``… to a run table (``query_id, doc_id, rank, score, tag``,
        as :func:`sessionval.io.trec.read_run` returns); ``quality`` lists ``system,
        quality, rank`` (1 = best).

    Examples
    --------
    >>> c = generate_runs(n_systems=3, n_topics=4, seed=1)
    >>> sorted(c.runs), c.quality["rank"].tolist()
    (['sys01', 'sys02', 'sys03'], [3, 2, 1])
    """
    for name, value, least in (("n_systems", n_systems, 2), ("n_topics", n_topics, 1),
                               ("depth", depth, 1), ("unjudged", unjudged, 0)):  # fmt: skip
        if not isinstance(value, int | np.integer) or value < least:
            raise SessionvalError(f"{name} must be an integer >= {least}, got {value!r}")
    rng = seeded_rng(seed, 2)
    n_rel = 5 + rng.poisson(15, n_topics)
    n_non = 30 + rng.poisson(70, n_topics)
    per_topic = n_rel + n_non + unjudged
    offsets = offsets_from_counts(per_topic)
    topic = segment_ids(offsets)
    pos = segment_ranks(offsets) - 1  # document number within its topic
    rel = pos < n_rel[topic]
    judged = pos < (n_rel + n_non)[topic]
    grade = np.where(rel, rng.choice(np.array([1, 2, 3]), topic.size, p=[0.5, 0.3, 0.2]), 0)
    width = len(str(int(per_topic.max()) - 1))
    tids = np.array([f"t{t + 1:03d}" for t in range(n_topics)], dtype=object)
    docs = np.char.add(
        np.char.add(tids[topic].astype(str), "-d"), np.char.zfill(pos.astype(str), width)
    )
    judgments = judgment_frame(
        pd.Series(tids[topic[judged]], name="topic_id"),
        pd.Series(docs[judged], name="doc_id"),
        pd.Series(grade[judged], name="grade"),
        pd.Series(["synth"] * int(judged.sum())),
        source="sessionval.synth.runs",
        scale=GradeScale.default(),
    )
    topic_ids = pd.Index(tids.astype(str))
    doc_ids = pd.Index(docs)
    quality = np.linspace(low, high, n_systems)
    difficulty = rng.normal(0.0, 0.1, n_topics)
    names = [f"sys{k + 1:0{max(2, len(str(n_systems)))}d}" for k in range(n_systems)]
    runs: dict[str, pd.DataFrame] = {}
    keep = min(depth, int(per_topic.min()))
    for k, name in enumerate(names):
        q = np.clip(quality[k] - difficulty + rng.normal(0.0, 0.05, n_topics), 0.01, 0.99)
        score = rng.standard_normal(topic.size) + 4.0 * q[topic] * (grade + 1) / 4.0 * rel
        # best first within each topic: sort by (topic, -score), keep the first `keep`
        order = np.lexsort((-score, topic))
        rank = segment_ranks(offsets)  # ranks of the sorted rows (topics stay contiguous)
        top = order[rank <= keep]
        # categoricals from codes: the candidates' ids are built once for every run
        runs[name] = pd.DataFrame(
            {
                "query_id": pd.Categorical.from_codes(topic[top], categories=topic_ids),
                "doc_id": pd.Categorical.from_codes(top, categories=doc_ids),
                "rank": rank[rank <= keep].astype(np.int64),
                "score": np.round(score[top], 6),
                "tag": pd.Categorical([name] * top.size),
            }
        )
    order_rank = n_systems - np.arange(n_systems)
    truth = pd.DataFrame({"system": names, "quality": quality, "rank": order_rank})
    return SyntheticRuns(judgments=judgments, runs=runs, quality=truth)


def write_runs(
    out_dir: str | os.PathLike[str],
    *,
    n_systems: int = 10,
    n_topics: int = 50,
    seed: int = 2007,
    depth: int = 100,
) -> list[Path]:
    """Write ``qrels.txt``, ``runs/<name>.run`` and ``systems.tsv`` (the true quality).

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    coll = generate_runs(n_systems=n_systems, n_topics=n_topics, seed=seed, depth=depth)
    out = Path(out_dir)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    files = [write_qrels(coll.judgments, out / "qrels.txt")]
    for name, run in coll.runs.items():
        path = out / "runs" / f"{name}.run"
        lines = (
            run["query_id"].astype(str)
            + " Q0 "
            + run["doc_id"].astype(str)
            + " "
            + run["rank"].astype(str)
            + " "
            + run["score"].map("{:.6f}".format)
            + " "
            + name
        )
        with writing(path):
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files.append(path)
    truth = out / "systems.tsv"
    with writing(truth):
        coll.quality.to_csv(truth, sep="\t", index=False, float_format="%.4f")
    files.append(truth)
    return files
