"""Fixtures of the evaluation tests (the shared builders are in ``tests/builders.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests import builders

DOCS = [f"d{i}" for i in range(15)]


def random_study(seed: int, n_sessions: int = 40) -> tuple[Any, Any]:
    """Sessions of 1-4 queries of 0-12 documents on topics A, B (judged) and C (not)."""
    rng = np.random.default_rng(seed)
    sessions = [
        (
            f"s{s:03d}",
            f"u{s % 3}",
            str(rng.choice(["A", "B", "C"])),
            str(rng.choice(["S1", "S2"])),
            [
                [str(d) for d in rng.choice(DOCS, size=int(rng.integers(0, 13)), replace=False)]
                for _ in range(int(rng.integers(1, 5)))
            ],
        )
        for s in range(n_sessions)
    ]
    judg = builders.judgments(
        [(t, d, int(rng.integers(0, 4))) for t in ("A", "B") for d in DOCS if rng.random() < 0.6]
    )
    return builders.frame(sessions), judg


@pytest.fixture(name="random_study")
def _random_study_fixture() -> Callable[..., Any]:
    """:func:`random_study`: a seeded random study of several queries per session."""
    return random_study
