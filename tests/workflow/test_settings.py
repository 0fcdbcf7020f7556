"""The run's configuration file: figure ranks, validation before any output is written."""

from __future__ import annotations

import tomllib

import pytest

from sessionval.errors import InputFormatError, MeasureSpecError
from sessionval.workflow import figure_table, load_run_config, run_settings, to_toml


def _config(tmp_path, text: str):
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_figure_ranks_and_their_former_name(tmp_path):
    assert load_run_config(None).figures.ranks == 100
    assert load_run_config(_config(tmp_path, "[figures]\nranks = 30\n")).figures.ranks == 30
    # configurations written before the rename keep working
    old = load_run_config(_config(tmp_path, "b = 3.0\n[figures]\ndepth = 20\n"))
    assert old.figures.ranks == 20 and old.session == {"b": 3.0}
    with pytest.raises(InputFormatError, match="both ranks and depth"):
        load_run_config(_config(tmp_path, "[figures]\nranks = 30\ndepth = 20\n"))
    with pytest.raises(InputFormatError, match="ranks, min_queries and max_sessions must be >= 1"):
        load_run_config(_config(tmp_path, "[figures]\nranks = 0\n"))
    with pytest.raises(InputFormatError, match=r"\[figures\]: "):
        load_run_config(_config(tmp_path, "[figures]\nranks = 'x'\nmin_queries = []\n"))


def test_written_figure_table_round_trips(tmp_path):
    fs = load_run_config(_config(tmp_path, '[figures]\nranks = 7\ncg_gains = "0-1-2-3"\n')).figures
    text = to_toml({"": {"b": 2.0}, "figures": figure_table(fs)})
    assert tomllib.loads(text)["figures"] == {
        "ranks": 7,
        "min_queries": 4,
        "max_sessions": 30,
        "cg_gains": "0-1-2-3",
    }
    assert load_run_config(_config(tmp_path, text)).figures == fs


def test_run_settings_validate_everything_up_front(tmp_path):
    s = run_settings(None, lenient=None, has_qrels=True)
    assert s.config.cutoff == 10 and s.cg_config is None and s.lenient is False
    s = run_settings(
        _config(
            tmp_path,
            'preset = "jiang-allan-2016"\n[figures]\ncg_gains = "0-1-2-3"\n[run]\nlenient = true\n',
        ),
        lenient=None,
        has_qrels=True,
    )
    assert s.config.discount == "shifted-log" and s.lenient is True
    assert s.cg_config is not None and str(s.cg_config.gains) == "0-1-2-3"
    assert s.cg_config.discount == "shifted-log"
    assert run_settings(None, lenient=True, has_qrels=True).lenient is True
    # a bad CG gain scheme or session parameter fails before any file is written
    with pytest.raises(MeasureSpecError, match="invalid configuration"):
        run_settings(
            _config(tmp_path, '[figures]\ncg_gains = "bogus"\n'), lenient=None, has_qrels=True
        )
    with pytest.raises(MeasureSpecError, match="invalid configuration"):
        run_settings(_config(tmp_path, "b = -3.0\n"), lenient=None, has_qrels=True)
    with pytest.raises(InputFormatError, match="no --qrels given"):
        run_settings(None, lenient=None, has_qrels=False)
    searcher = run_settings(
        _config(tmp_path, 'judgments = "searcher"\n'), lenient=None, has_qrels=False
    )
    assert searcher.config.judgments == "searcher"
