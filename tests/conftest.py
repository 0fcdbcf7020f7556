"""Fixtures shared by every test folder (the builders themselves are in ``tests/builders.py``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import builders
from tests.browser import Browser, chromium_binary

IO_FIXTURES = Path(__file__).parent / "io" / "fixtures"


@pytest.fixture
def fx() -> Path:
    """Small real-world-format inputs (TREC Session XML, lab tables, CAsT runs)."""
    return IO_FIXTURES


@pytest.fixture(scope="session")
def same_frame() -> Callable[..., None]:
    """:func:`tests.builders.assert_same_frame` as a fixture."""
    return builders.assert_same_frame


@pytest.fixture(name="make_session")
def _make_session_fixture() -> Callable[..., dict[str, Any]]:
    return builders.make_session


@pytest.fixture(name="write_jsonl")
def _write_jsonl_fixture() -> Callable[..., Path]:
    return builders.write_jsonl


@pytest.fixture
def study_dir(tmp_path: Path) -> Path:
    """A two-session JSON-lines study with header and qrels (``tmp_path/study``).

    A folder of its own, so an output beside it (``tmp_path/out``) is not inside an input.
    """
    folder = tmp_path / "study"
    folder.mkdir()
    header = {
        "name": "tiny",
        "users": [{"user_id": "u1", "attributes": {"experience": 3}}, {"user_id": "u2"}],
        "topics": [{"topic_id": "A", "title": "topic A"}, {"topic_id": "B", "title": "topic B"}],
        "systems": [{"system_id": "S1"}, {"system_id": "S2"}],
    }
    (folder / "study.json").write_text(json.dumps(header), encoding="utf-8")
    builders.write_jsonl(
        folder / "sessions.jsonl",
        [
            builders.make_session("s1", user="u1", topic="A", system="S1"),
            builders.make_session(
                "s2", user="u2", topic="B", system="S2", queries=[["d9"], [], ["d1", "d9"]]
            ),
        ],
    )
    (folder / "qrels.txt").write_text("A 0 d1 3\nA 0 d2 0\nA 0 d3 1\nB 0 d9 2\nB 0 d1 0\n")
    return folder


@pytest.fixture(scope="session")
def browser() -> Browser:
    """Headless chromium; skip locally if absent, fail under CI (env CI set)."""
    path = chromium_binary()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required under CI (apt-get install chromium)")
        pytest.skip("chromium not installed (install it to run the browser tests)")
    return Browser(path)
