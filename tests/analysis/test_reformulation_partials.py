"""Reformulation analyses from partition partials (analysis/reformulation_partials.py).

Split by session in any way and folded in any order, the partials give the local
functions' tables: the transitions and the distribution exactly, the effects to 1e-12.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from sessionval.analysis.reformulation_effects import (
    reformulation_effects,
    reformulation_transitions,
)
from sessionval.analysis.reformulation_partials import (
    distribution_of,
    effects_of,
    reformulation_partial,
    transitions_of,
)
from sessionval.analysis.reformulations import reformulations
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.io.formats import load_input
from sessionval.workflow.reformulations import _distribution

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs"


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    loaded = load_input(SAMPLE, qrels=SAMPLE / "qrels.txt")
    ev = evaluate(loaded.frame, loaded.judgments, SessionConfig())
    return reformulations(ev, loaded.judgments)


@settings(max_examples=15, deadline=None)
@given(n_parts=hs.integers(1, 5), seed=hs.integers(0, 10_000))
def test_any_split_and_order_gives_the_local_tables(table, n_parts, seed) -> None:
    rng = np.random.default_rng(seed)
    codes = pd.factorize(table["session_id"].astype(str))[0]
    part_of = rng.integers(0, n_parts, codes.max() + 1)[codes]
    parts = [reformulation_partial(table[part_of == i]) for i in np.unique(part_of)]
    acc = parts[0]
    for k in rng.permutation(len(parts) - 1) + 1:
        acc = acc.combine(parts[k])
    assert acc.n_pairs == len(table) and acc.n_sessions == table["session_id"].nunique()
    pd.testing.assert_frame_equal(
        transitions_of(acc), reformulation_transitions(table), check_dtype=False
    )
    pd.testing.assert_frame_equal(distribution_of(acc), _distribution(table), check_dtype=False)
    for unit in ("session_id", "user_id"):
        pd.testing.assert_frame_equal(
            effects_of(acc, unit=unit),
            reformulation_effects(table, unit=unit),
            check_exact=False,
            rtol=1e-12,
            check_dtype=False,
        )


def test_the_partial_does_not_grow_with_the_pairs(table) -> None:
    """Twice the sessions of the same searchers: the same number of summed rows."""
    twice = pd.concat([table, table.assign(session_id=table["session_id"].astype(str) + "b")])
    one, two = reformulation_partial(table), reformulation_partial(twice)
    assert len(two.searchers) == len(one.searchers) and len(two.sessions) == len(one.sessions)
    assert two.n_pairs == 2 * one.n_pairs
