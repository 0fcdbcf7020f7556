"""The run's configuration file: one strict model, messages in the toolkit's words, docs pinned."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from sessionval.errors import InputFormatError, MeasureSpecError
from sessionval.workflow import (
    ConfigFileError,
    RunConfig,
    config_markdown,
    config_tables,
    figure_table,
    load_run_config,
    run_settings,
    to_toml,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def _config(tmp_path, text: str):
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_figure_ranks_and_their_former_name(tmp_path):
    assert load_run_config(None).figures.ranks == 100
    assert load_run_config(_config(tmp_path, "[figures]\nranks = 30\n")).figures.ranks == 30
    # configurations written before the rename keep working
    old = load_run_config(_config(tmp_path, "b = 3.0\n[figures]\ndepth = 20\n"))
    assert old.figures.ranks == 20 and old.session.b == 3.0 and old.explicit == {"b"}
    with pytest.raises(InputFormatError, match="both ranks and depth"):
        load_run_config(_config(tmp_path, "[figures]\nranks = 30\ndepth = 20\n"))
    with pytest.raises(InputFormatError, match=r"\[figures\] ranks = 0: must be greater than"):
        load_run_config(_config(tmp_path, "[figures]\nranks = 0\n"))
    # every problem at once, each with the key and the value as written
    with pytest.raises(InputFormatError) as err:
        load_run_config(_config(tmp_path, "[figures]\nranks = 'x'\nmin_queries = []\n"))
    assert "[figures] ranks = 'x': must be a whole number" in str(err.value)
    assert "[figures] min_queries = []: must be a whole number" in str(err.value)


def test_written_figure_table_round_trips(tmp_path):
    fs = load_run_config(_config(tmp_path, '[figures]\nranks = 7\ncg_gains = "0-1-2-3"\n')).figures
    text = to_toml({"": {"b": 2.0}, "figures": figure_table(fs)})
    assert tomllib.loads(text)["figures"] == {
        "ranks": 7,
        "min_queries": 4,
        "max_sessions": 30,
        "cg_gains": "0-1-2-3",
        "formats": ["png", "svg", "pdf"],
        "density_points": 5000,
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


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # issue 12: a non-empty string was truthy and turned lenient mode on
        ('[run]\nlenient = "false"\n', "[run] lenient = 'false': must be true or false"),
        ("[run]\ncsv_safe = 1\n", "[run] csv_safe = 1: must be true or false"),
        ('b = "2"\n', "b = '2': must be a number (without quotes)"),
        ("cutoff = 10.5\n", "cutoff = 10.5: must be a whole number"),
        ('duplicates = "all"\n', "duplicates = 'all': must be one of 'every', 'first' or 'drop'"),
        ('gains = "bogus"\n', "gains = 'bogus': unknown gain scheme 'bogus'; use one of"),
        ('preset = "nope"\n', "unknown session preset 'nope'; known: jarvelin-2008"),
        ("cuttoff = 5\n", "unknown key(s) ['cuttoff'] at the top level; allowed: preset, the"),
        ("[figures]\nwidth = 3\n", "unknown key(s) ['width'] in [figures]; allowed: cg_gains"),
        ("[stats]\nalpha = 0.05\n", "unknown key(s) ['stats'] at the top level"),
        ("figures = 3\n", "[figures]: must be a table"),
        ('[run]\nformats = ["csv", "xlsx"]\n', "[run] formats item 2 = 'xlsx': must be one of"),
        ('[run]\nformats = ["csv", "csv"]\n', "format(s) ['csv'] listed twice"),
        ("[run]\nformats = []\n", "[run] formats = []: must not be empty"),
        ('[measures]\nquery = ["nsDCG@10"]\n', "'nsDCG@10' is a session measure"),
        ('[measures]\nquery = ["nDCG(b=3)@10"]\n', "b is not used by discount=log2p1"),
    ],
)
def test_wrong_values_are_errors_that_say_what_is_allowed(tmp_path, text, message):
    with pytest.raises(ConfigFileError) as err:
        load_run_config(_config(tmp_path, text))
    text_of = str(err.value)
    assert message in text_of
    assert "docs/configuration.md" in text_of
    assert "pydantic" not in text_of and "http" not in text_of


@pytest.mark.parametrize("depth", [100, 500, 5000])
@pytest.mark.parametrize("brackets", [("[", "]"), ("{a = ", "}")])
def test_deeply_nested_values_are_a_located_error_at_every_depth(tmp_path, depth, brackets):
    # CFG-1: from ~500 levels tomllib's recursion raised RecursionError (exit 70)
    opening, closing = brackets
    path = _config(tmp_path, f"x = {opening * depth}1{closing * depth}\n")
    with pytest.raises(ConfigFileError, match=re.escape(str(path))) as err:
        load_run_config(path)
    assert "unknown key(s) ['x']" in str(err.value) or "nested too deeply" in str(err.value)


def test_flags_win_over_the_file_and_are_named_in_messages(tmp_path):
    path = _config(tmp_path, 'preset = "jiang-allan-2016"\ncutoff = 5\n')
    rc = load_run_config(path, overrides={"cutoff": 3, "bq": 8.0})
    assert (rc.session.cutoff, rc.session.bq, rc.session.discount) == (3, 8.0, "shifted-log")
    rc = load_run_config(path, overrides={"preset": "kanoulas-2011-no-qdiscount"})
    assert rc.session.query_discount == "none" and rc.session.discount == "jk2008"
    assert rc.session.cutoff == 5 and rc.session.preset_name == "kanoulas-2011-no-qdiscount"
    with pytest.raises(ConfigFileError, match=r"--b = 0.5: must be greater than 1"):
        load_run_config(None, overrides={"b": 0.5})
    chosen = run_settings(None, lenient=None, has_qrels=True, overrides={"gains": "exp"})
    assert chosen.config.gains_fitted and chosen.config.gains.name == "exp"
    assert not run_settings(None, lenient=None, has_qrels=True).config.gains_fitted


def test_written_configuration_reads_back_to_the_same_settings(tmp_path):
    path = _config(
        tmp_path,
        'preset = "jiang-allan-2016"\nb = 3\n[measures]\nquery = ["nDCG@10", "P@5"]\n'
        '[run]\nformats = ["csv"]\ncsv_safe = true\n',
    )
    settings = run_settings(path, lenient=True, has_qrels=True)
    written = _config(tmp_path, to_toml(config_tables(settings)))
    again = run_settings(written, lenient=None, has_qrels=True)
    assert again.config == settings.config and again.lenient is True
    assert again.measures.query == ("nDCG@10", "P@5") and again.csv_safe is True
    assert again.formats == ("csv",) and again.figures == settings.figures


def test_configuration_docs_are_generated_from_the_model():
    """docs/configuration.md holds the reference generated from the model (every key)."""
    text = DOCS.read_text(encoding="utf-8")
    block = re.search(r"<!-- config:begin[^>]*-->\n(.*?)<!-- config:end -->", text, re.S)
    assert block is not None
    assert block.group(1) == config_markdown()
    documented = set(re.findall(r"^\| `(\w+)` \|", block.group(1), re.M))
    keys = {"preset"} | {k for k in RunConfig.model_fields["session"].annotation.model_fields}
    for table in RunConfig.TABLES:
        keys |= set(RunConfig.model_fields[table].annotation.model_fields)
    assert keys - {"preset_name"} <= documented
