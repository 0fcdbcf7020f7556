"""evaluate_run's message about a run file's repeated documents, by the one detection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sessionval.errors import InputFormatError
from sessionval.evaluation import lists as evaluation_lists
from sessionval.evaluation.lists import evaluate_run
from sessionval.validate.list_rules import repeated_documents


def test_the_run_files_repeat_message_comes_from_the_one_detection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """evaluate_run names the repeated documents of a run file by list_rules, not a copy."""
    calls: list[int] = []

    def spy(lists: np.ndarray, docs: np.ndarray) -> np.ndarray:
        calls.append(len(docs))
        return repeated_documents(lists, docs)

    monkeypatch.setattr(evaluation_lists, "repeated_documents", spy)
    qrels, run = tmp_path / "q.txt", tmp_path / "r.run"
    qrels.write_text("1 0 a 1\n2 0 b 1\n")
    # query 2's rows come first: the detection groups the rows by query
    run.write_text("2 Q0 b 1 1.0 t\n1 Q0 a 1 1.0 t\n2 Q0 c 2 0.5 t\n1 Q0 a 2 0.5 t\n")
    with pytest.raises(InputFormatError, match=r"r\.run:4: document 'a' appears again for query"):
        evaluate_run(run, qrels, ["AP"])
    assert calls == [4]
