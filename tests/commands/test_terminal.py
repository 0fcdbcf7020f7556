"""Issue 25 item 3: a table for people on a terminal, machine formats when piped; one
``--format`` vocabulary; one strictness flag set; plain-text help."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from sessionval.cli import COMMANDS, cli, main
from tests.builders import trec_runs

ANSI_BOLD = "\x1b[1m"


@pytest.fixture
def terminal(monkeypatch):
    """Standard output seen as a terminal (CliRunner and capsys are not one)."""
    monkeypatch.setattr("sessionval.commands._options.stdout_is_terminal", lambda: True)


@pytest.fixture
def collection(tmp_path):
    return trec_runs(tmp_path, n_topics=20, quality=(0.0, 0.4, 1.5))


def _compare(qrels, runs, *extra):
    return ["compare", str(qrels), *map(str, runs), "-m", "AP", "-m", "P@3", *extra]


def test_compare_prints_tsv_when_piped_and_the_table_on_a_terminal(collection, capsys, monkeypatch):
    qrels, runs = collection
    assert main(_compare(qrels, runs)) == 0
    piped = capsys.readouterr().out
    assert piped.splitlines()[0].startswith("measure\ta\tb\tn\t")

    monkeypatch.setattr("sessionval.commands._options.stdout_is_terminal", lambda: True)
    assert main(_compare(qrels, runs)) == 0
    shown = capsys.readouterr().out
    lines = shown.splitlines()
    assert re.split(r"\s+", lines[0].strip()) == ["run", "AP", "P@3"]
    assert [ln.split()[:2] for ln in lines[1:4]] == [["a", "sys_0"], ["b", "sys_1"], ["c", "sys_2"]]
    # the best run is significantly better than both others on both measures
    assert lines[3].count("ᵃᵇ") == 2
    assert "ᵃ" not in lines[1]
    assert "paired t test, Holm correction" in shown and "alpha = 0.05" in shown
    # the means line up: each column's numbers end at the same place
    ends = {ln.index(ln.split()[2][:6]) for ln in lines[1:4]}
    assert len(ends) == 1


def test_forced_table_matches_the_terminal_and_bold_marks_the_best(collection, terminal):
    qrels, runs = collection
    forced = CliRunner().invoke(cli, _compare(qrels, runs, "--format", "table"), color=True)
    assert forced.exit_code == 0, forced.output
    best = next(ln for ln in forced.stdout.splitlines() if "sys_2" in ln)
    assert best.count(ANSI_BOLD) == 2
    # without colour (a pipe or a file) click strips the styling, the text stays aligned
    plain = CliRunner().invoke(cli, _compare(qrels, runs, "--format", "table"))
    assert ANSI_BOLD not in plain.stdout
    assert re.sub(r"\x1b\[[0-9;]*m", "", forced.stdout) == plain.stdout


def test_compare_markdown_and_latex_mark_the_same_runs(collection, capsys):
    qrels, runs = collection
    assert main(_compare(qrels, runs, "--format", "markdown")) == 0
    md = capsys.readouterr().out
    assert "| c | sys_2 | **" in md and "<sup>a,b</sup>" in md
    assert main(_compare(qrels, runs, "--format", "latex")) == 0
    assert "$^{a,b}$" in capsys.readouterr().out


def test_omnibus_prints_a_table_and_refuses_latex(collection, capsys, terminal):
    qrels, runs = collection
    assert main(_compare(qrels, runs, "--omnibus")) == 0
    out = capsys.readouterr().out
    assert re.split(r"\s+", out.splitlines()[0])[:3] == ["measure", "test", "n_topics"]
    assert main(_compare(qrels, runs, "--omnibus", "--format", "latex")) == 2
    assert "--omnibus prints table, tsv, jsonl or markdown" in capsys.readouterr().err


def test_a_format_the_command_does_not_print_is_refused_with_the_allowed_ones(collection, capsys):
    qrels, runs = collection
    assert main(["evaluate", str(qrels), str(runs[0]), "--format", "latex"]) == 2
    err = capsys.readouterr().err
    assert "'latex' is not one of 'table', 'tsv', 'jsonl', 'markdown'" in err


def test_evaluate_table_is_queries_by_measures_with_all_last(collection, capsys, terminal):
    qrels, runs = collection
    assert main(["evaluate", str(qrels), str(runs[0]), "-q", "-m", "AP", "-m", "P@3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["query", "AP", "P@3"]
    assert len(lines) == 1 + 20 + 1 and lines[-1].split()[0] == "all"
    assert main(["evaluate", str(qrels), str(runs[0]), "-m", "AP", "--format", "tsv"]) == 0
    assert re.fullmatch(r"AP\tall\t0\.\d{4}\n", capsys.readouterr().out)


def test_meta_summary_is_a_table_on_a_terminal(collection, capsys, terminal):
    qrels, runs = collection
    args = ["meta", "rank-correlation", str(qrels), *map(str, runs), "-m", "AP", "-m", "P@3"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["measure_a", "measure_b", "n_systems", "tau", "z0", "p", "tau_ap"]
    assert main([*args, "--format", "jsonl"]) == 0
    assert capsys.readouterr().out.startswith('{"measure_a": "AP"')


def test_measures_keeps_text_as_the_old_name_of_table(capsys):
    assert main(["measures", "--format", "text"]) == 0
    table = capsys.readouterr().out
    assert main(["measures"]) == 0
    assert capsys.readouterr().out == table


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(cli)
    out: dict[str, click.Command] = {}
    for name in COMMANDS:
        cmd = cli.get_command(ctx, name)
        assert cmd is not None
        out[name] = cmd
        if isinstance(cmd, click.Group):
            for sub in cmd.list_commands(ctx):
                sub_cmd = cmd.get_command(ctx, sub)
                assert sub_cmd is not None
                out[f"{name} {sub}"] = sub_cmd
    return out


def test_run_validate_and_convert_share_one_strictness_flag_set():
    commands = _commands()
    options = {}
    for name in ("run", "validate", "convert"):
        [opt] = [p for p in commands[name].params if "--lenient" in p.opts]
        assert opt.opts == ["--lenient"] and opt.secondary_opts == ["--strict"], name
        options[name] = opt
    assert len({o.help for o in options.values()}) == 1


@pytest.mark.parametrize("name", sorted(_commands()))
def test_help_reads_as_plain_text(name):
    result = CliRunner().invoke(cli, [*name.split(), "--help"], terminal_width=100)
    assert result.exit_code == 0
    for markup in ("``", ":func:", ":mod:", ":class:", ":data:", ":meth:"):
        assert markup not in result.output, f"sessionval {name} --help shows {markup}"
