"""The data dictionary: every output column documented, parameter texts from the configuration."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import pandas as pd
import pytest

from sessionval.evaluation.columns import TABLE_COLUMNS
from sessionval.evaluation.config import SessionConfig
from sessionval.evaluation.session import evaluate
from sessionval.kernels.discounts import QUERY_DISCOUNT_TABLE, RANK_DISCOUNT_TABLE
from sessionval.output.columns import columns_of, describe_column
from sessionval.output.export import write_exports
from sessionval.output.parameters import parameter_docs, parameter_meaning, params_text
from sessionval.output.report import render_report
from tests import builders

JK2008 = (RANK_DISCOUNT_TABLE["jk2008"].formula, QUERY_DISCOUNT_TABLE["jk2008"].formula)
SHIFTED = (RANK_DISCOUNT_TABLE["shifted-log"].formula, QUERY_DISCOUNT_TABLE["shifted-log"].formula)


@pytest.fixture(scope="module")
def ev():
    frame = builders.frame(
        [
            ("s1", "u1", "A", "S1", [["d1", "d2"], ["d3"]]),
            ("s2", "u2", "A", "S2", [["d2", "d1", "d4"]]),
        ]
    )
    judgments = builders.judgments([("A", "d1", 3), ("A", "d2", 1), ("A", "d3", 2)])
    return evaluate(frame, judgments, SessionConfig(), measures=["nDCG@5"])


def test_every_column_of_the_tables_is_documented(ev):
    tables = {
        "session": ev.per_session(),
        "query": ev.per_query(),
        "position": ev.per_position(),
    }
    for level, table in tables.items():
        for col in table.columns:
            doc = describe_column(str(col), level=level)
            assert doc.description != "(no description)", (level, col)
            assert doc.label and len(doc.label) <= 80
    for col in ("measure", "value", "nsdcg__S1", "n_sessions__S2", "rating_effort"):
        assert describe_column(col).description != "(no description)", col


@pytest.mark.parametrize("level", ["session", "query", "position"])
def test_every_listed_column_has_its_description(level):
    """The tables are built from TABLE_COLUMNS: a name added there needs its entry here."""
    docs = columns_of(level)
    assert list(docs) == list(TABLE_COLUMNS[level])
    undescribed = [name for name, doc in docs.items() if doc.description == "(no description)"]
    assert undescribed == []


def test_the_docs_list_every_column_of_the_tables(ev):
    """docs/sessions.md section 3 is the one list for people: a new column must join it."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "sessions.md").read_text("utf-8")
    section = docs[docs.index("## 3. Outputs") : docs.index("### 3b.")]
    section += docs[docs.index("`ev.per_position()`: one row per position") :][:400]
    named = set(re.findall(r"[a-z_]+", " ".join(re.findall(r"`([^`]+)`", section))))
    for table in (ev.per_session(), ev.per_query(), ev.per_position()):
        listed = [c for c in table.columns if c != "nDCG@5"]  # requested measures: by name
        assert [c for c in listed if c not in named] == []


def test_the_same_name_means_what_its_table_holds():
    assert "end of the session" in describe_column("sdcg").label
    assert "sDCG_q" in describe_column("sdcg", level="query").label
    assert "S[p]" in describe_column("sdcg", level="position").label


def _report_and_codebook(config: SessionConfig, ev, tmp_path) -> str:
    params = config.model_dump(mode="json")
    res = write_exports(
        tmp_path,
        per_session=ev.per_session(),
        per_query=ev.per_query(),
        parameters=params,
        formats=["csv"],
    )
    html = render_report(per_session=ev.per_session(), measures=["nsdcg"], parameters=params)
    codebook = (tmp_path / "codebook.md").read_text() + res.codebook.to_csv()
    return html + codebook


@pytest.mark.parametrize(
    ("config", "shown", "absent"),
    [
        (SessionConfig.preset("jiang-allan-2016"), SHIFTED, JK2008),
        (SessionConfig(), JK2008, SHIFTED),
    ],
    ids=["jiang-allan-2016", "defaults"],
)
def test_codebook_and_report_print_the_configured_formulas(ev, tmp_path, config, shown, absent):
    text = _report_and_codebook(config, ev, tmp_path)
    for formula in shown:
        assert formula in text
    for formula in absent:
        assert formula not in text


def test_parameter_meanings_come_from_the_configuration():
    cfg = SessionConfig.preset("jiang-allan-2016")
    for name, field in SessionConfig.model_fields.items():
        meaning = parameter_meaning(name, cfg)
        assert meaning, name
        if field.description:
            assert meaning.startswith(field.description)
    assert "2^grade - 1" in parameter_meaning("gains", cfg)
    assert "2 -> 10, 3 -> 100" in parameter_meaning("gains", SessionConfig())
    assert parameter_meaning("not_a_field", cfg) == ""
    # bq = inf switches the query discount off, whatever its kind
    assert QUERY_DISCOUNT_TABLE["none"].formula in parameter_meaning("bq", {"bq": float("inf")})
    docs = {p.name: p for p in parameter_docs(cfg)}
    assert docs["cutoff"].symbol == "X" and docs["preset_name"].value == "jiang-allan-2016"


def test_figure_captions_name_non_default_discounts():
    text = params_text(SessionConfig.preset("jiang-allan-2016").model_dump(mode="json"))
    assert "discount shifted-log" in text and "query_discount shifted-log" in text
    assert "gains exp" in text
    default = params_text(SessionConfig().model_dump(mode="json"))
    assert default == "b=2; bq=4; X=10; gains auto"  # as configured, before the data fits it
    fitted = SessionConfig().fit_gains([0, 3])[0]
    assert params_text(fitted.model_dump(mode="json")) == "b=2; bq=4; X=10; gains 0-1-10-100"
    assert params_text({"gains": {0: 0, 1: 2.5}}) == "gains {0:0,1:2.5}"


def test_codebook_quotes_the_measure_registry_for_measure_columns(ev):
    doc = describe_column("nDCG@5", level="query")
    assert doc.description != "(no description)" and "nDCG@5" in doc.label
    assert pd.api.types.is_float_dtype(ev.per_query()["nDCG@5"])
