"""Figures rendered in the background process are the files rendered here, byte for byte."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sessionval.errors import WriteError
from sessionval.output import plots
from sessionval.output.background import BackgroundWork
from sessionval.output.figure_writer import FigureWriter


def _session_curves():
    # Figures 2-3 have a secondary axis (query labels): its scale functions must pickle
    rng = np.random.default_rng(3)
    rows = [
        {"system_id": s, "position": p, "value": float(v)}
        for s in ("A", "B") for p, v in enumerate(np.sort(rng.random(30)), start=1)
    ]  # fmt: skip
    return plots.plot_session_curves(pd.DataFrame(rows), cutoff=10)


@pytest.mark.parametrize("formats", [("png", "svg", "pdf"), ("svg",)])
def test_background_files_equal_local_files(tmp_path, formats):
    local, background = FigureWriter(), FigureWriter(BackgroundWork())
    background.work.start()
    (tmp_path / "here").mkdir()
    (tmp_path / "there").mkdir()
    here = local.write(_session_curves(), tmp_path / "here" / "fig2", formats=formats)
    there = background.write(_session_curves(), tmp_path / "there" / "fig2", formats=formats)
    background.work.close()
    assert background.work.ran_here == 0  # the figure pickled: rendered by the other process
    for a, b in zip(here.paths, there.paths, strict=True):
        assert a.name == b.name and a.read_bytes() == b.read_bytes()
    assert here.report_png() == there.report_png()
    assert here.report_png().startswith(b"\x89PNG")
    assert (here.svg() is not None) == ("svg" in formats) and here.svg() == there.svg()
    if "png" in formats:  # the report's PNG is the file's, reduced 300 -> 150 dpi
        assert here.report_png() == plots.reduced_png(here.paths[0].read_bytes(), 2)


def test_a_failed_write_is_raised_by_close(tmp_path):
    writer = FigureWriter()
    writer.work.start()
    writer.write(_session_curves(), tmp_path / "missing" / "fig2", formats=("png",))
    with pytest.raises(WriteError, match="missing"):
        writer.work.close()
    assert not writer.work.started  # stopped: a failed run leaves no process behind
