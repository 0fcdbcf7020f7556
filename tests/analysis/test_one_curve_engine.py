"""One cumulated-gain curve engine: the run's CG figures are ``gain_vectors`` + ``avg_vect``.

Issue 22 (review §1.4): ``measures/cg.py`` computed the 2002 vectors by a dense path of
its own beside the run's figure engine.  The paper's worked examples pin the engine that
draws the figures, and a spy fails when a curve is computed without it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sessionval
from sessionval.analysis.rank_curves import cg_curves, query_curves
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.result import SessionEvaluation
from sessionval.evaluation.session import evaluate
from sessionval.frame import JudgmentFrame
from sessionval.kernels import cumulate
from sessionval.measures.cg import (
    avg_vect,
    cumulated_gain,
    discounted_cumulated_gain,
    gain_vectors,
)
from sessionval.measures.lists import RankedLists
from sessionval.synth import generate_study
from sessionval.validate.flat import frame_from_flat
from sessionval.workflow.figures import FigureCell, figure_data
from sessionval.workflow.settings import FigureSettings
from tests import builders

REF = Path(__file__).resolve().parents[1] / "reference"
#: the 2002 worked examples of a ranked list's vector (the ideal's vectors are their own case)
PAPER = sorted(REF.glob("single_jk200*.json"))
RANKS = 15


def _figures(ev: SessionEvaluation, ranks: int) -> dict[str, pd.DataFrame]:
    """The tables the run draws its CG figures from (``figures/cg_*``)."""
    sessions = ev.frame.sessions
    cell = FigureCell(
        scenario=str(sessions["topic_id"].iloc[0]), system=str(sessions["system_id"].iloc[0])
    )
    data = figure_data(ev, cell, FigureSettings(ranks=ranks))
    return {m: data.tables[f"cg_{m}"] for m in ("CG", "DCG", "nCG", "nDCG")}


def _notebook(
    ev: SessionEvaluation, judgments: JudgmentFrame, kind: str, ranks: int, *, ideal: bool = False
) -> pd.DataFrame:
    """What a notebook user computes: ``avg_vect(gain_vectors(...))`` per system."""
    cfg = ev.config
    lists = RankedLists.from_frame(
        ev.frame, judgments, negative=cfg.negative, unjudged=cfg.unjudged
    )
    vectors = gain_vectors(
        lists,
        kind=kind,  # type: ignore[arg-type]
        depth=ranks,
        discount=cfg.discount,
        b=cfg.b,
        gain=cfg.gains,
        ideal=ideal,
    )
    if ideal:
        return avg_vect(vectors).assign(system_id="ideal")
    system = ev.frame.sessions["system_id"].astype(str).to_numpy()[ev.query_session]
    vectors["system_id"] = np.repeat(system, ranks)
    return vectors.groupby("system_id")[["rank", "value"]].apply(avg_vect).reset_index(level=0)


def _random_ev(seed: int, config: SessionConfig) -> tuple[SessionEvaluation, JudgmentFrame]:
    study = generate_study(n_sessions=15, seed=seed, jsonl=False)
    frame = frame_from_flat(study.flat.to_pandas()).frame
    judgments = builders.judgments(study.judgments.itertuples(index=False, name=None))
    return evaluate(frame, judgments, config), judgments


@pytest.mark.parametrize(
    "config",
    [
        SessionConfig(),
        SessionConfig(b=4, discount="jk2002", gains="0-1-2-3", unjudged="condense"),
        SessionConfig.preset("jiang-allan-2016"),
    ],
    ids=["default", "jk2002-condense", "jiang-allan"],
)
def test_run_cg_figures_are_gain_vectors_and_avg_vect(config: SessionConfig) -> None:
    ev, judgments = _random_ev(3, config)
    figures = _figures(ev, RANKS)
    for kind, table in figures.items():
        drawn = table[table["system_id"] != "ideal"].sort_values(["system_id", "rank"])
        own = _notebook(ev, judgments, kind, RANKS).dropna(subset="value")
        own = own.sort_values(["system_id", "rank"])
        assert drawn["system_id"].tolist() == own["system_id"].tolist()
        assert drawn["rank"].tolist() == own["rank"].tolist()
        np.testing.assert_allclose(drawn["value"], own["value"], rtol=1e-12, atol=1e-12)
        if kind in ("CG", "DCG"):  # the ideal curve: the mean ideal vector of every query
            ideal = table[table["system_id"] == "ideal"]
            own_ideal = _notebook(ev, judgments, kind, RANKS, ideal=True)
            np.testing.assert_allclose(ideal["value"], own_ideal["value"], rtol=1e-12)


def _paper_study(grades: list[int], ideal: list[int]) -> tuple[object, object]:
    """One query ranking documents of ``grades``; judged so its recall base is ``ideal``."""
    docs = [f"d{i}" for i in range(len(grades))]
    extra = sorted(g for g in ideal if g > 0)
    for g in grades:  # the list's own relevant documents are part of the recall base
        if g > 0:
            extra.remove(g)
    rows = [("A", d, g) for d, g in zip(docs, grades, strict=True)]
    rows += [("A", f"x{i}", g) for i, g in enumerate(extra)]
    return builders.frame([("s1", "u1", "A", "S1", [docs])]), builders.judgments(rows)


@pytest.mark.parametrize("path", PAPER, ids=[p.stem for p in PAPER])
def test_paper_examples_pin_the_engine_of_the_run_figures(path: Path) -> None:
    """Järvelin & Kekäläinen (2002) section 2's vectors, read off the run's figure tables."""
    case = json.loads(path.read_text(encoding="utf-8"))
    inputs = case["inputs"]
    grades = inputs["gains"]
    frame, judgments = _paper_study(grades, inputs.get("ideal", [g for g in grades if g > 0]))
    config = SessionConfig(
        gains="0-1-2-3", discount=inputs.get("discount", "jk2002"), b=inputs.get("b", 2)
    )
    ev = evaluate(frame, judgments, config)
    drawn = _figures(ev, len(grades))[inputs["measure"]]
    values = drawn.loc[drawn["system_id"] == "S1", "value"].to_numpy()
    np.testing.assert_allclose(values, case["expected"], atol=case["tolerance"], rtol=0)


class _Spy:
    """Counts the calls of the one engine, wherever a module imported it from.

    The engine is :func:`cumulate_by_rank`, its adding half :func:`add_by_rank` (the
    run's curves add chunk after chunk and cumulate their sums once, in the table) with
    :func:`add_at_index` under it, and :func:`cumulate_down` (the bands' dense vectors).
    """

    def __init__(self) -> None:
        self.calls = 0

    def wrap(self, real: Callable[..., object]) -> Callable[..., object]:
        def counted(*args: object, **kwargs: object) -> object:
            self.calls += 1
            return real(*args, **kwargs)

        return counted


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Spy]:
    import sys

    s = _Spy()
    for name in ("cumulate_by_rank", "add_by_rank", "add_at_index", "cumulate_down"):
        real = getattr(cumulate, name)
        counted = s.wrap(real)
        for module in list(sys.modules.values()):
            if module is not None and getattr(module, "__name__", "").startswith("sessionval"):
                if getattr(module, name, None) is real:
                    monkeypatch.setattr(module, name, counted)
    yield s


def test_every_curve_is_computed_by_the_one_engine(spy: _Spy) -> None:
    """A second cumulation (a dense ``cumsum`` of its own) would not call the engine."""
    lists = RankedLists.from_arrays(["q"], [0, 3], [3, 0, 1], recall_base=[[3, 1]])
    ev, _ = _random_ev(5, SessionConfig())
    for compute in (
        lambda: cumulated_gain([3, 2, 3]),
        lambda: discounted_cumulated_gain([3, 2, 3]),
        lambda: gain_vectors(lists, kind="nDCG", depth=4),
        lambda: sessionval.gain_vectors(lists, kind="CG", depth=4, ideal=True),
        lambda: cg_curves(ev, ranks=5),
        lambda: cg_curves(ev, ranks=5, confidence=0.9),
        lambda: query_curves(ev, ranks=5),
    ):
        before = spy.calls
        compute()
        assert spy.calls > before
