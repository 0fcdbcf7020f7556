"""The run-table boundary: a run given as a file or a table is checked by the same rules."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from sessionval import RankedLists, evaluate_run, judgments_from_records
from sessionval.errors import InputFormatError, ParseError
from sessionval.validate.runs import check_run_table

QRELS = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})


def test_a_score_that_is_not_a_number_is_refused_on_every_road(tmp_path: Path) -> None:
    p = tmp_path / "r.run"
    p.write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 nan t\n")
    with pytest.raises(ParseError) as from_file:
        evaluate_run(p, QRELS, ["AP"])
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, None]})
    with pytest.raises(ParseError) as from_table:
        evaluate_run(run, QRELS, ["AP"])
    with pytest.raises(ParseError) as from_lists:
        RankedLists.from_run(run, judgments_from_records([("1", "a", 1)]))
    assert str(from_file.value).endswith("score: must be a number (got 'nan')")
    assert str(from_table.value) == "run table (row 1): score: must be a number (got 'nan')"
    assert str(from_lists.value) == str(from_table.value)


def test_every_bad_row_is_listed_and_ids_must_be_present() -> None:
    run = pd.DataFrame({"query_id": ["1", None, "1"], "doc_id": ["a", "b", None],
                        "score": ["x", 1, 2]})  # fmt: skip
    with pytest.raises(ParseError) as exc:
        check_run_table(run)
    text = str(exc.value)
    assert text.startswith("run table: 3 problems in the run table:")
    assert "(row 0): score: must be a number (got 'x')" in text
    assert "(row 1): query_id: is missing" in text
    assert "(row 2): doc_id: is missing" in text


def test_missing_column_and_clean_tables_pass_unchanged() -> None:
    with pytest.raises(InputFormatError, match="missing column 'score'"):
        check_run_table(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"]}))
    run = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.5]})
    assert check_run_table(run)["score"].tolist() == [1.5]
