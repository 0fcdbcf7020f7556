"""Kernels of the session measures of the literature: blocks, limits and edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from sessionval.kernels import expected_session
from sessionval.kernels.cube_test import cube_test
from sessionval.kernels.expected_session import depth_probabilities, expected_session_ndcg
from sessionval.kernels.session_rbp import session_rbp
from tests.evaluation.test_session_literature import expected_path_value


def random_sessions(seed: int, n: int = 25):
    rng = np.random.default_rng(seed)
    sessions = []
    for _ in range(n):
        lists = [
            [float(g) for g in rng.integers(0, 4, int(rng.integers(0, 6)))]
            for _ in range(int(rng.integers(0, 5)))
        ]
        ideal = sorted(
            (float(g) for g in rng.integers(0, 4, int(rng.integers(0, 9)))), reverse=True
        )
        sessions.append((lists, ideal))
    return sessions


def layout(sessions):
    gains, q_off, s_off, i_off, i_val = [], [0], [0], [0], []
    for lists, ideal in sessions:
        for docs in lists:
            gains += docs
            q_off.append(q_off[-1] + len(docs))
        s_off.append(s_off[-1] + len(lists))
        i_val += ideal
        i_off.append(i_off[-1] + len(ideal))
    return gains, q_off, s_off, i_off, i_val


@pytest.mark.parametrize("cells", [1, 40, 1 << 22])
def test_expected_session_blocks_give_the_enumerated_value(cells: int, monkeypatch) -> None:
    monkeypatch.setattr(expected_session, "BLOCK_CELLS", cells)
    sessions = random_sessions(cells)
    for pref, pdown, disc in ((0.9, 0.7, True), (0.5, 0.2, False), (1.0, 1.0, True)):
        got = expected_session_ndcg(*layout(sessions), pref=pref, pdown=pdown, discounted=disc)
        for (lists, ideal), value in zip(sessions, got, strict=True):
            if not ideal or ideal[0] <= 0:
                assert np.isnan(value)
            elif not lists:
                assert value == 0.0
            else:
                ref = expected_path_value(lists, ideal, pref, pdown, disc)
                assert value == pytest.approx(ref, abs=1e-12)


def test_depth_probabilities_sum_to_one() -> None:
    p = depth_probabilities(np.arange(0, 8), 7, pdown=0.37)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert p[0, 0] == 1.0 and p[3, 3] == pytest.approx(0.37**2)


def test_srbp_weights_sum_to_one_over_infinite_sessions() -> None:
    # the expected number of documents examined is 1/(1 - p): the weights of a long,
    # deep session of relevant documents sum to almost 1
    m, k = np.meshgrid(np.arange(1, 200), np.arange(1, 200))
    value = session_rbp(
        np.ones(m.size), m.ravel(), k.ravel(), np.zeros(m.size, int), 1, p=0.8, b=0.5
    )
    assert value[0] == pytest.approx(1.0, abs=1e-9)


def test_cube_stops_filling_at_its_height() -> None:
    ct, act = cube_test([4.0, 4, 4, 4], [1, 1, 1, 1], [0, 4], [1], gamma=0.9, max_height=5)
    assert ct[0] == pytest.approx(1.0)
    # heights 3.6, 5, 5, 5
    assert act[0] == pytest.approx((3.6 + 5 + 5 + 5) / 5 / 4)
