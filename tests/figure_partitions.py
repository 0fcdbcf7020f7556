"""A small synthetic study, evaluated whole and split by session into partitions.

The figures of a distributed run are computed from partials of partitions of whole
sessions (``analysis/curve_partials.py``); the tests compare them with the figures of
the whole study.  Searchers and topics span the partitions, and each partition's
categorical columns hold only its own values (coded differently from the whole's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.result import SessionEvaluation
from sessionval.evaluation.session import evaluate
from sessionval.frame import JudgmentFrame, LoadedStudy
from sessionval.synth import generate_study
from sessionval.validate.flat import frame_from_flat
from tests import builders


@dataclass(frozen=True)
class Study:
    """A synthetic study: its flat table, judgments, and the whole study loaded."""

    flat: pd.DataFrame
    judgments: JudgmentFrame
    loaded: LoadedStudy

    @property
    def session_ids(self) -> np.ndarray:
        """The study's session ids, in id order."""
        return self.loaded.frame.sessions["session_id"].astype(str).to_numpy()

    def evaluate(self, config: SessionConfig) -> SessionEvaluation:
        """The whole study's evaluation."""
        return evaluate(self.loaded.frame, self.judgments, config)

    def partitions(self, part_of: Sequence[int] | np.ndarray) -> list[pd.DataFrame]:
        """The flat tables of the partitions: session ``i`` (id order) in ``part_of[i]``.

        Empty partitions are left out.
        """
        part = dict(zip(self.session_ids, np.asarray(part_of), strict=True))
        of_row = self.flat["session_id"].astype(str).map(part).to_numpy()
        return [
            self.flat[of_row == p].reset_index(drop=True) for p in np.unique(np.asarray(part_of))
        ]

    def evaluate_parts(
        self, part_of: Sequence[int] | np.ndarray, config: SessionConfig
    ) -> list[SessionEvaluation]:
        """Each partition validated and evaluated alone, with the study's judgments."""
        return [
            evaluate(frame_from_flat(flat).frame, self.judgments, config)
            for flat in self.partitions(part_of)
        ]


@cache
def synthetic_study(n_sessions: int = 36, seed: int = 5) -> Study:
    """The synthetic study of ``n_sessions`` sessions (cached: tests only read it)."""
    generated = generate_study(n_sessions=n_sessions, seed=seed, jsonl=False)
    flat = generated.flat.to_pandas()
    judgments = builders.judgments(generated.judgments.itertuples(index=False, name=None))
    return Study(flat=flat, judgments=judgments, loaded=frame_from_flat(flat))


def random_split(n_sessions: int, n_parts: int, seed: int) -> np.ndarray:
    """A partition number per session, every partition non-empty."""
    rng = np.random.default_rng(seed)
    part_of = np.concatenate([np.arange(n_parts), rng.integers(0, n_parts, n_sessions - n_parts)])
    rng.shuffle(part_of)
    return part_of
