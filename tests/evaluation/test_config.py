"""SessionConfig: typed values parsed once, descriptions, round trips unchanged, validation."""

from __future__ import annotations

import json
import math
import tomllib

import pydantic
import pytest

from sessionval.evaluation.config import SessionConfig
from sessionval.judgments.gains import GainScheme
from sessionval.kernels.session import SessionParams
from sessionval.kernels.slots import ShortLists

# the JSON of the default configuration before issue 9 (gains and short lists as text)
DEFAULT_JSON = {
    "b": 2.0,
    "bq": 4.0,
    "cutoff": 10,
    "scan_depth": "ignore",
    "gains": "auto",  # issue 22: fitted to the data (0-1-10-100 when it covers the grades)
    "negative": "clip",
    "unjudged": "zero",
    "judgments": "reference",
    "discount": "jk2008",
    "query_discount": "jk2008",
    "duplicates": "every",
    "short_lists": "pad",
    "ideal": "repeat",
    "max_queries": None,  # issue 13: the TREC DD jig's iteration cut-off (new, default off)
    "normalise": "per-session",
    "stopped": "hold",
    "empty_ideal": "nan",
    "best_by": "dcg",
    "high_grade": None,
    "preset_name": None,
}


def test_every_field_has_a_meaning() -> None:
    for name, info in SessionConfig.model_fields.items():
        assert info.description, name
    # meanings, not one preset's formula: the discount fields name the table's kinds
    assert "shifted-log" in (SessionConfig.model_fields["discount"].description or "")


def test_values_are_typed_and_dumps_keep_their_text() -> None:
    cfg = SessionConfig(short_lists="min:3", gains={0: 0, 1: 2, 2: 5})
    assert isinstance(cfg.gains, GainScheme) and cfg.short_lists == ShortLists("min", 3)
    assert SessionConfig().model_dump(mode="json") == DEFAULT_JSON
    assert SessionConfig().model_dump() == DEFAULT_JSON
    assert cfg.model_dump()["gains"] == {0: 0.0, 1: 2.0, 2: 5.0}
    assert json.loads(cfg.model_dump_json())["gains"] == {"0": 0.0, "1": 2.0, "2": 5.0}
    assert cfg.model_dump()["short_lists"] == "min:3"
    assert isinstance(cfg.session_params(), SessionParams)
    assert cfg.session_params().short_lists is cfg.short_lists


def test_toml_and_json_round_trips() -> None:
    text = """
    b = 4.0
    bq = inf
    short_lists = "min:3"
    discount = "shifted-log"
    [gains]
    0 = 0
    1 = 2
    2 = 5
    3 = 9
    """
    cfg = SessionConfig(**tomllib.loads(text))
    assert cfg == SessionConfig(
        b=4, bq=math.inf, short_lists="min:3", discount="shifted-log", gains="{0:0,1:2,2:5,3:9}"
    )
    assert SessionConfig.model_validate_json(cfg.model_dump_json()) == cfg
    assert SessionConfig(**json.loads(cfg.model_dump_json())) == cfg
    assert SessionConfig.preset("jiang-allan-2016", cutoff=5).cutoff == 5


@pytest.mark.parametrize(
    "changes",
    [{"gains": "bogus"}, {"b": -3}, {"short_lists": "pad:2"}, {"gains": {"x": 1}}],
)
def test_changes_go_through_validation(changes: dict) -> None:
    with pytest.raises(pydantic.ValidationError):
        SessionConfig().replace(**changes)
    with pytest.raises(pydantic.ValidationError):
        SessionConfig().model_copy(update=changes)
