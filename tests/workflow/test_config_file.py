"""``workflow/settings.py`` split (issue 22, review §3): the file in ``config_file.py``.

The names the run's steps (and other engineers' modules) import from
``workflow.settings`` stay there, as the very objects of ``config_file``; the messages
are ``models/messages.py``'s, which words a model built from Python the same way.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sessionval.evaluation.config import SessionConfig
from sessionval.models.messages import FieldLocator, explain
from sessionval.workflow import config_file, settings


def test_settings_re_exports_the_config_file_names() -> None:
    shared = set(config_file.__all__) & set(settings.__all__)
    assert shared >= {"RunConfig", "ConfigFileError", "FigureSettings", "load_run_config"}
    for name in shared:
        assert getattr(settings, name) is getattr(config_file, name), name
    for name in settings.__all__:  # every listed name is there
        assert hasattr(settings, name), name


def test_a_bad_file_is_worded_by_the_one_translator(tmp_path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('b = "2"\nbogus = 1\n[run]\nlenient = "no"\n', encoding="utf-8")
    with pytest.raises(config_file.ConfigFileError) as caught:
        config_file.load_run_config(path, overrides={"cutoff": 0})
    text = str(caught.value)
    assert "b = '2': must be a number (without quotes)" in text
    assert "[run] lenient = 'no': must be true or false" in text
    assert "--cutoff = 0:" in text  # a flag is named as the flag
    assert "unknown key(s) ['bogus'] at the top level; allowed: preset, the session" in text


def test_session_config_errors_from_python_in_the_same_words() -> None:
    with pytest.raises(ValidationError) as caught:
        SessionConfig.model_validate({"b": "x", "discount": "nope", "typo": 1})
    lines = explain(caught.value, FieldLocator(SessionConfig))
    assert lines[0].startswith("b = 'x': must be a valid number")
    assert lines[1].startswith("discount = 'nope': must be one of ")
    assert lines[2].startswith("unknown key(s) ['typo'] at the top level; allowed: b, best_by,")
