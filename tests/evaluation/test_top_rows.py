"""Only the rows a query can show go through the gains and slots: the same evaluation.

``ChunkContext.top_rows`` (decided in ``evaluation/session.py``) lets each chunk take
the first ``query_cutoff`` rows of each query past the grade join; every row is
still joined and counted.  Each case here is evaluated with and without it and must
give the same arrays, counts and errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sessionval.errors import JudgmentError
from sessionval.evaluation import session as session_module
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.engine import LocalEngine
from sessionval.evaluation.session import evaluate
from tests import builders


def _study(seed: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(40)]
    sessions = [
        (
            f"s{s}",
            f"u{s % 3}",
            str(rng.choice(["A", "B", "C"])),
            str(rng.choice(["S1", "S2"])),
            [
                list(rng.choice(docs, size=int(rng.integers(0, 16)), replace=False))
                for _ in range(int(rng.integers(1, 5)))
            ],
        )
        for s in range(int(rng.integers(3, 12)))
    ]
    # a logged scan depth on the first query of every other session (at most its results)
    scan = {
        (sid, 1): int(rng.integers(0, len(lists[0]) + 1)) for sid, _, _, _, lists in sessions[::2]
    }
    judged = [(t, d, int(rng.integers(0, 4))) for t in ("A", "B") for d in docs[:25]]
    return builders.frame(sessions, scan=scan), builders.judgments(judged)


def _arrays(ev: Any) -> dict[str, Any]:
    out: dict[str, Any] = {f"q.{k}": v for k, v in ev.queries.items()}
    out |= {f"s.{k}": v for k, v in ev.sessions.items()}
    out |= {f"m.{k}": v for k, v in ev.session_values.items()}
    p = ev.positions()
    out |= {f"p.{k}": getattr(p, k) for k in ("session", "query", "slot", "frame_row", "grade")}
    out |= {f"p.{k}": getattr(p, k) for k in ("gain", "sdcg", "ideal", "offsets")}
    out["counts"] = np.array([ev.n_unjudged, ev.n_negative, ev.n_empty_ideal])
    return out


def _both(
    monkeypatch: pytest.MonkeyPatch, frame: Any, judg: Any, cfg: SessionConfig, **kw: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    engine = LocalEngine(chunk_rows=7)  # several chunks
    top = _arrays(evaluate(frame, judg, cfg, engine=engine, keep_positions=True, **kw))
    with monkeypatch.context() as m:
        m.setattr(session_module, "_top_rows_suffice", lambda cfg, src: False)
        every = _arrays(evaluate(frame, judg, cfg, engine=engine, keep_positions=True, **kw))
    return top, every


CONFIGS = [
    {},
    {"cutoff": 3},
    {"cutoff": 5, "short_lists": "none"},
    {"cutoff": 4, "short_lists": "min:2", "duplicates": "first"},
    {"cutoff": 6, "scan_depth": "replace"},
    {"cutoff": 6, "scan_depth": "cap", "max_queries": 2},
    {"cutoff": 4, "ideal": "no-repeat", "duplicates": "first"},
    {"cutoff": 4, "duplicates": "drop"},  # not taken: rows move up
    {"cutoff": 4, "unjudged": "condense"},  # not taken: rows move up
]


@pytest.mark.parametrize("changes", CONFIGS)
@pytest.mark.parametrize("seed", range(6))
def test_top_rows_give_the_same_evaluation(
    seed: int, changes: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    frame, judg = _study(seed)
    cfg = SessionConfig().replace(**changes)
    top, every = _both(
        monkeypatch, frame, judg, cfg, measures=["last(nDCG@3)", "nsDCG@4", "esNDCG@5"]
    )
    assert top.keys() == every.keys()
    for k in top:
        np.testing.assert_array_equal(top[k], every[k], err_msg=k)
        assert top[k].dtype == every[k].dtype, k


def test_top_rows_taken_only_when_the_policies_allow() -> None:
    frame, judg = _study(0)
    src = session_module.grade_source(frame, judg, SessionConfig())
    assert session_module._top_rows_suffice(SessionConfig(), src)
    assert not session_module._top_rows_suffice(SessionConfig(duplicates="drop"), src)
    assert not session_module._top_rows_suffice(SessionConfig(unjudged="condense"), src)
    # a judged grade without a gain would raise on a row below the cut-off: every row goes on
    assert not session_module._top_rows_suffice(SessionConfig(gains={0: 0, 1: 1}), src)


def test_errors_below_the_cutoff_still_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unjudged or negative row below every cut-off raises as before, with the same text."""
    frame = builders.frame([("s1", "u", "A", "S", [["a", "b", "c", "d"]])])
    unjudged = builders.judgments([("A", "a", 1), ("A", "b", 2)])
    negative = builders.judgments([("A", "a", 1), ("A", "d", -1)], default_scale=False)
    for judg, changes in ((unjudged, {"unjudged": "error"}), (negative, {"negative": "error"})):
        cfg = SessionConfig(cutoff=2, gains="exp").replace(**changes)
        messages = []
        for suffice in (True, False):
            with monkeypatch.context() as m:
                if not suffice:
                    m.setattr(session_module, "_top_rows_suffice", lambda cfg, src: False)
                with pytest.raises(JudgmentError) as err:
                    evaluate(frame, judg, cfg)
            messages.append(str(err.value))
        assert messages[0] == messages[1]
