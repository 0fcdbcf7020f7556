"""``--progress/--no-progress``: each command's long phases with counts that end at their totals."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from sessionval.cli import main
from sessionval.frame import SessionFrame
from sessionval.io.study import load_study
from sessionval.progress import (
    NO_PROGRESS,
    BarProgress,
    PhaseNames,
    as_progress,
    counted,
    engine_ticks,
    progress_bar,
)
from sessionval.validate.flat import LOAD_PHASES
from tests.builders import trec_runs

# tqdm's bar with a total: "phase:  50%|#####     | 3/6 [...]"; without one: "phase: 7 rows [...]"
_WITH_TOTAL = re.compile(r"^(?P<phase>.+?): +\d+%\|[^|]*\| (?P<n>\d+)/(?P<total>\d+) \[")
_NO_TOTAL = re.compile(r"^(?P<phase>.+?): (?P<n>\d+) \S+ \[")


def final_counts(err: str) -> dict[str, tuple[int, int | None]]:
    """Each phase drawn on ``err`` with its last count and total (``None``: no total)."""
    out: dict[str, tuple[int, int | None]] = {}
    for piece in re.split(r"[\r\n]", err):
        m = _WITH_TOTAL.match(piece.strip())
        if m:
            out[m["phase"]] = (int(m["n"]), int(m["total"]))
            continue
        m = _NO_TOTAL.match(piece.strip())
        if m:
            out[m["phase"]] = (int(m["n"]), None)
    return out


def phases_at_totals(err: str) -> dict[str, tuple[int, int | None]]:
    """:func:`final_counts`, checked: every phase with a total ended at it."""
    counts = final_counts(err)
    assert counts, err
    unfinished = {p: c for p, c in counts.items() if c[1] is not None and c[0] != c[1]}
    assert not unfinished, unfinished
    return counts


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def _frame(study: Path) -> SessionFrame:
    return load_study(study, qrels=study / "qrels.txt").frame


def _flat_rows(study: Path) -> int:
    """Rows of the study's flat table: one per result, one per query without results."""
    frame = _frame(study)
    return frame.n_results + int((frame.queries["n_results"] == 0).sum())


def test_validate_reports_lines_parsed_and_each_phase_over_every_row(study_dir, capsys):
    assert main(["validate", str(study_dir), "--progress"]) == 0
    counts = phases_at_totals(capsys.readouterr().err)
    assert counts["parsing lines"] == (2, 2)  # the two lines of sessions.jsonl
    for phase in LOAD_PHASES:
        assert counts[phase][1] == _flat_rows(study_dir), phase
    assert counts["summarising"][1] == _frame(study_dir).n_results


def test_no_progress_writes_nothing_more_and_the_default_off_a_terminal_is_off(study_dir, capsys):
    assert main(["validate", str(study_dir)]) == 0
    default = capsys.readouterr()
    assert main(["validate", str(study_dir), "--no-progress"]) == 0
    off = capsys.readouterr()
    assert off.err == default.err  # captured stderr is no terminal: no bar by default
    assert not final_counts(off.err)
    assert off.out == default.out
    assert main(["validate", str(study_dir), "--progress"]) == 0
    on = capsys.readouterr()
    assert on.out == default.out and final_counts(on.err)  # only stderr gains the bars


@pytest.mark.parametrize(
    ("to", "name", "unit_rows"),
    [("jsonl", "sessions.jsonl", False), ("parquet", "s.parquet", True), ("csv", "s.csv", True)],
)
def test_convert_reports_the_read_and_the_rows_or_sessions_written(
    study_dir, tmp_path, capsys, to, name, unit_rows
):
    out = tmp_path / "out" if to == "jsonl" else tmp_path / name
    args = ["convert", str(study_dir), "--to", to, "--out", str(out), "--progress"]
    assert main(args) == 0
    counts = phases_at_totals(capsys.readouterr().err)
    assert counts["reading sessions"][1] == _flat_rows(study_dir)
    assert counts[f"writing {name}"] == ((_flat_rows(study_dir),) * 2 if unit_rows else (2, 2))


def test_convert_to_partitions_counts_rows_over_every_file(study_dir, tmp_path, capsys):
    out = tmp_path / "parts"
    args = ["convert", str(study_dir), "--to", "parquet", "--out", str(out)]
    assert main([*args, "--partition-rows", "3", "--top-first", "1", "--progress"]) == 0
    counts = phases_at_totals(capsys.readouterr().err)
    n_files = len(list(out.glob("*.parquet")))
    assert counts[f"writing {n_files} partitions"] == (_flat_rows(study_dir),) * 2


def test_evaluate_reports_rows_read_and_measures_computed(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path)
    args = ["evaluate", str(qrels), str(runs[0]), "-m", "AP", "-m", "P@3", "--progress"]
    assert main(args) == 0
    counts = phases_at_totals(capsys.readouterr().err)
    assert counts[f"reading {qrels.name}"] == (_lines(qrels),) * 2  # lines out of the file's
    assert counts[f"reading {runs[0].name}"] == (_lines(runs[0]),) * 2
    # the checks of the fields after the read are a phase of their own, over the rows read
    assert counts[f"checking {qrels.name}"] == (_lines(qrels),) * 2
    assert counts[f"checking {runs[0].name}"] == (_lines(runs[0]),) * 2
    assert counts["ranking lists"] == (_lines(runs[0]),) * 2
    (evaluating,) = (p for p in counts if p.startswith("evaluating"))
    assert counts[evaluating] == (2, 2)


def test_evaluate_without_progress_leaves_stderr_as_it_was(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path)
    assert main(["evaluate", str(qrels), str(runs[0])]) == 0
    default = capsys.readouterr().err
    assert main(["evaluate", str(qrels), str(runs[0]), "--no-progress"]) == 0
    assert capsys.readouterr().err == default
    assert not final_counts(default)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_draws_on_a_terminal_by_default_and_not_elsewhere():
    tty, pipe = _Terminal(), io.StringIO()
    for stream in (tty, pipe):
        with progress_bar(None, file=stream) as bar:
            assert bar.counting is (stream is tty)
            with counted(bar, "scoring", 3, "runs") as p:
                p.advance(3)
    assert final_counts(tty.getvalue()) == {"scoring": (3, 3)}
    assert pipe.getvalue() == ""
    forced = io.StringIO()
    with progress_bar(True, file=forced) as bar:
        bar("a phase without a count")
    assert "a phase without a count" in forced.getvalue()


def test_a_phase_name_callback_hears_names_and_no_counts():
    seen: list[str] = []
    p = as_progress(seen.append)
    assert isinstance(p, PhaseNames) and not p.counting
    p.start("reading", 10)
    p.advance(10)
    p.finish()
    p("building")
    assert seen == ["reading", "building"]
    assert as_progress(None) is NO_PROGRESS and not NO_PROGRESS.counting
    bar = BarProgress(disable=True)
    assert as_progress(bar) is bar and not bar.counting


def test_engine_ticks_start_at_the_first_chunk_and_end_at_the_total():
    stream = io.StringIO()
    bar = BarProgress(disable=False, file=stream)
    tick = engine_ticks(bar, "evaluating", "chunks")
    for done in (1, 2, 3):
        tick(done, 3)
    assert final_counts(stream.getvalue()) == {"evaluating": (3, 3)}


@pytest.mark.parametrize("test", ["paired-t", "randomisation", "bootstrap"])
def test_compare_reports_runs_read_and_scored_and_the_pairs_compared(tmp_path, capsys, test):
    qrels, runs = trec_runs(tmp_path)
    args = ["compare", str(qrels), *map(str, runs), "-m", "AP", "-m", "P@3", "--resamples", "50"]
    args += ["--test", test]
    assert main([*args, "--no-progress"]) == 0
    quiet = capsys.readouterr()
    assert main(args) == 0
    assert capsys.readouterr().err == quiet.err  # off by default when stderr is no terminal
    assert main([*args, "--progress"]) == 0
    shown = capsys.readouterr()
    assert shown.out == quiet.out
    counts = phases_at_totals(shown.err)
    assert counts["reading 3 runs"] == (3, 3)
    assert counts["scoring 3 runs"] == (3, 3)
    assert counts["comparing 3 systems"] == (2 * 3, 2 * 3)  # 2 measures x 3 pairs


@pytest.mark.parametrize(
    ("method", "phase"),
    [("swap", "swap method (40 resamples)"), ("bootstrap", "bootstrap sensitivity (40 resamples)")],
)
def test_meta_discriminative_power_counts_the_pairs_of_every_measure(
    tmp_path, capsys, method, phase
):
    qrels, runs = trec_runs(tmp_path)
    args = ["meta", "discriminative-power", str(qrels), *map(str, runs), "-m", "AP", "-m", "RR"]
    assert main([*args, "--method", method, "--resamples", "40", "--progress"]) == 0
    counts = phases_at_totals(capsys.readouterr().err)
    assert counts["scoring 3 runs"] == (3, 3)
    assert counts[phase] == (2 * 3, 2 * 3)


def test_meta_incomplete_judgments_counts_each_run_under_each_sample(tmp_path, capsys):
    qrels, runs = trec_runs(tmp_path)
    args = ["meta", "incomplete-judgments", str(qrels), *map(str, runs), "-m", "AP"]
    assert main([*args, "--fractions", "0.5", "--progress"]) == 0
    counts = phases_at_totals(capsys.readouterr().err)
    assert counts["scoring runs on f-qrels"] == (2 * 3, 2 * 3)  # full + 1 sample, 3 runs each


@pytest.mark.parametrize("sub", ["rank-correlation", "topic-set-size"])
def test_meta_run_subcommands_report_the_runs_and_stay_quiet_without_the_flag(
    tmp_path, capsys, sub
):
    qrels, runs = trec_runs(tmp_path)
    args = ["meta", sub, str(qrels), *map(str, runs), "-m", "AP", "-m", "P@3"]
    assert main([*args, "--no-progress"]) == 0
    quiet = capsys.readouterr()
    assert not final_counts(quiet.err)
    assert main([*args, "--progress"]) == 0
    shown = capsys.readouterr()
    assert shown.out == quiet.out
    assert phases_at_totals(shown.err)["scoring 3 runs"] == (3, 3)


def test_meta_sensitivity_reports_the_load_and_each_setting(study_dir, capsys):
    args = ["meta", "sensitivity", str(study_dir), "--qrels", str(study_dir / "qrels.txt")]
    assert main([*args, "--grid", "b=2,4", "--progress"]) == 0
    counts = phases_at_totals(capsys.readouterr().err)
    assert counts["building tables"][1] == _flat_rows(study_dir)
    assert counts["evaluating 3 settings"] == (3, 3)  # the default and b=2, b=4


def test_validate_of_partitions_counts_the_files_loaded(tmp_path, capsys):
    from tests.builders import small_flat, write_partitions

    write_partitions(small_flat(), tmp_path / "p", 2)
    assert main(["validate", str(tmp_path / "p"), "--progress"]) == 0
    counts = phases_at_totals(capsys.readouterr().err)
    assert counts["loading 2 partitions"] == (2, 2)
    assert counts["summarising"] == (3, 3)  # the result rows of small_flat


def test_a_gzip_run_is_counted_without_a_total_and_a_last_line_without_its_end(tmp_path, capsys):
    import gzip

    qrels, runs = trec_runs(tmp_path)
    text = runs[0].read_bytes()
    zipped = tmp_path / "zipped.run.gz"
    zipped.write_bytes(gzip.compress(text))
    cut = tmp_path / "cut.run"
    cut.write_bytes(text.rstrip(b"\n"))  # the last line without its line end
    for run, total in ((zipped, None), (cut, _lines(runs[0]))):
        assert main(["evaluate", str(qrels), str(run), "-m", "AP", "--progress"]) == 0
        counts = phases_at_totals(capsys.readouterr().err)
        assert counts[f"reading {run.name}"] == (_lines(runs[0]), total)


@pytest.mark.parametrize("test", ["paired-t", "randomisation", "bootstrap", "sign"])
def test_paired_tests_count_every_pair_once_whatever_the_groups(test):
    import numpy as np

    from sessionval.analysis.paired import paired_tests

    x = np.random.default_rng(1).random((8, 4))
    x[0, 3] = np.nan  # pairs with system 3 have other topics: a group of their own
    x[:, 2] = np.nan  # pairs with system 2 have no topic: a group without topics
    a, b = np.array([0, 0, 0, 1, 1, 2]), np.array([1, 2, 3, 2, 3, 3])
    stream = io.StringIO()
    bar = BarProgress(disable=False, file=stream)
    with counted(bar, "pairs", a.size, "pairs") as shown:
        paired_tests(x, a, b, test=test, resamples=20, progress=shown)
    assert final_counts(stream.getvalue()) == {"pairs": (6, 6)}
