from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def make_session(
    sid: str = "s1",
    *,
    user: str = "u1",
    topic: str = "A",
    system: str = "S1",
    queries: list[list[str]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    queries = queries if queries is not None else [["d1", "d2"], ["d3"]]
    return {
        "session_id": sid,
        "user_id": user,
        "topic_id": topic,
        "system_id": system,
        "queries": [
            {
                "position": i + 1,
                "text": f"q{i + 1}",
                "results": [{"rank": k + 1, "doc_id": d} for k, d in enumerate(docs)],
            }
            for i, docs in enumerate(queries)
        ],
        **extra,
    }


def write_jsonl(path: Path, sessions: list[dict[str, Any] | str]) -> Path:
    lines = [s if isinstance(s, str) else json.dumps(s) for s in sessions]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def study_dir(tmp_path: Path) -> Path:
    header = {
        "name": "tiny",
        "users": [{"user_id": "u1", "attributes": {"experience": 3}}, {"user_id": "u2"}],
        "topics": [{"topic_id": "A", "title": "topic A"}, {"topic_id": "B", "title": "topic B"}],
        "systems": [{"system_id": "S1"}, {"system_id": "S2"}],
    }
    (tmp_path / "study.json").write_text(json.dumps(header), encoding="utf-8")
    write_jsonl(
        tmp_path / "sessions.jsonl",
        [
            make_session("s1", user="u1", topic="A", system="S1"),
            make_session(
                "s2", user="u2", topic="B", system="S2", queries=[["d9"], [], ["d1", "d9"]]
            ),
        ],
    )
    (tmp_path / "qrels.txt").write_text("A 0 d1 3\nA 0 d2 0\nA 0 d3 1\nB 0 d9 2\nB 0 d1 0\n")
    return tmp_path


@pytest.fixture(name="make_session")
def _make_session_fixture():
    return make_session


@pytest.fixture(name="write_jsonl")
def _write_jsonl_fixture():
    return write_jsonl
