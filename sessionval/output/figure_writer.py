"""Where a run's figures are rendered: here, or in a :class:`~.background.BackgroundProcess`.

Rendering a figure to PNG, SVG and PDF (:func:`~.figure_files.save_figure`) is
Python-bound work that a thread cannot overlap with the rest of the run.  A
:class:`FigureWriter` with a background process pickles each figure as it is drawn
(a few milliseconds) and lets the other process render and write it while this one
goes on with the next stage; the files are the same bytes either way (a figure
unpickled renders as the original).  :meth:`FigureWriter.write` returns a
:class:`FigureFiles` at once: its paths, and the report's PNG and SVG when asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from .background import BackgroundWork, Pending
from .figure_files import ImageFormat, figure_bytes, figure_paths, reduced_png, save_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["REPORT_DPI", "FigureFiles", "FigureWriter", "RenderedFigure", "render_figure"]

#: Resolution of the report's PNG of a figure (the PNG written at 300 dpi, reduced by 2).
REPORT_DPI: Final = 150

#: What the run's background process imports as it starts, before the first figure reaches it.
PRELOAD: tuple[str, ...] = ("matplotlib.backends.backend_agg", "sessionval.output.figure_writer")


@dataclass(frozen=True)
class RenderedFigure:
    """A figure written: its files in format order, the report's PNG and the SVG written."""

    paths: tuple[Path, ...]
    report_png: bytes
    svg: bytes | None


def render_figure(
    obj: Axes | Figure,
    stem: Path,
    formats: Sequence[ImageFormat],
    dpi: int,
    report_dpi: int,
) -> RenderedFigure:
    """Write a figure in ``formats`` (:func:`~.figure_files.save_figure`); the report's images.

    The report's PNG is the PNG written, reduced to ``report_dpi`` when ``dpi`` is a
    multiple of it (:func:`~.figure_files.reduced_png`: no second drawing), else the
    figure drawn at ``report_dpi``.
    """
    written = save_figure(obj, stem, formats=formats, dpi=dpi)
    files = {p.suffix: p for p in written}
    png = files.get(".png")
    if png is not None and dpi % report_dpi == 0:
        factor = dpi // report_dpi
        data = png.read_bytes()
        report_png = data if factor == 1 else reduced_png(data, factor)
    else:
        report_png = figure_bytes(obj, "png", dpi=report_dpi)
    svg = files[".svg"].read_bytes() if ".svg" in files else None
    return RenderedFigure(tuple(written), report_png, svg)


class FigureFiles:
    """One figure handed to a :class:`FigureWriter`: its paths now, its images when written."""

    def __init__(self, paths: tuple[Path, ...], pending: Pending[RenderedFigure]) -> None:
        self.paths = paths
        self._pending = pending

    def wait(self) -> RenderedFigure:
        """Wait until the files are written (raises what writing them raised)."""
        return self._pending.result()

    def report_png(self) -> bytes:
        """The report's PNG (waits for the figure)."""
        return self.wait().report_png

    def svg(self) -> bytes | None:
        """The SVG written, ``None`` when SVG is not among the formats (waits for the figure)."""
        return self.wait().svg


class FigureWriter:
    """Renders figures through a :class:`~.background.BackgroundWork`: here, or in its process.

    Used as the run's ``outputs.figures``: every figure of a run goes through
    :meth:`write`; the run's ``outputs.background`` waits for them all before the
    outputs are moved into place.
    """

    def __init__(self, work: BackgroundWork | None = None) -> None:
        self.work = work if work is not None else BackgroundWork()

    def write(
        self,
        obj: Axes | Figure,
        stem: Path,
        *,
        formats: Sequence[ImageFormat],
        dpi: int = 300,
        report_dpi: int = REPORT_DPI,
    ) -> FigureFiles:
        """Write ``obj`` as ``<stem>.<format>`` for each format (:func:`render_figure`).

        Returns at once when a background process renders; the figure is pickled first,
        so the caller may reuse or drop it.
        """
        pending = self.work.submit(render_figure, obj, stem, tuple(formats), dpi, report_dpi)
        return FigureFiles(tuple(figure_paths(stem, formats)), pending)
