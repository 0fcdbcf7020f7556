"""Figures to files: PNG, SVG and PDF bytes that do not change from run to run.

:func:`save_figure` lays a figure out once and writes it in every format asked for;
:func:`figure_bytes` renders one format (the report embeds the PNG).  Metadata dates
are left out and SVG ids salted with a constant, so the same figure gives the same
bytes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import SessionvalError, writing

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["ImageFormat", "figure_bytes", "save_figure"]

ImageFormat = Literal["png", "svg", "pdf"]


def _figure_of(obj: Axes | Figure) -> Figure:
    fig = obj.get_figure() if hasattr(obj, "get_figure") and not hasattr(obj, "savefig") else obj
    if fig is None or not hasattr(fig, "savefig"):
        raise SessionvalError("save_figure: the Axes is not attached to a Figure")
    return fig  # type: ignore[return-value]


def figure_bytes(obj: Axes | Figure, fmt: ImageFormat = "png", *, dpi: int = 200) -> bytes:
    """Render a figure (or the figure of an Axes) to PNG, SVG or PDF bytes.

    Metadata dates are left out so the same figure gives the same bytes.

    Parameters
    ----------
    obj
        The Axes or Figure.
    fmt
        ``"png"``, ``"svg"`` or ``"pdf"``.
    dpi
        Resolution of PNGs.

    Returns
    -------
    bytes
    """
    if fmt not in ("png", "svg", "pdf"):
        raise SessionvalError(f"unknown image format {fmt!r}; allowed: png, svg, pdf")
    fig = _figure_of(obj)
    buf = io.BytesIO()
    metadata: dict[str, Any] = {
        "svg": {"Date": None},
        "pdf": {"CreationDate": None},
        "png": {"Software": None},
    }[fmt]
    import matplotlib as mpl

    # a fixed salt makes SVG element ids (and so the bytes) reproducible
    with mpl.rc_context({"svg.hashsalt": "sessionval"}):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=metadata)
    return buf.getvalue()


def save_figure(
    obj: Axes | Figure,
    stem: str | Path,
    *,
    formats: Sequence[ImageFormat] = ("png", "svg", "pdf"),
    dpi: int = 300,
) -> list[Path]:
    """Write a figure as ``<stem>.png``, ``.svg`` and ``.pdf``.

    Parameters
    ----------
    obj
        The Axes (its figure is saved) or Figure.
    stem
        Path without suffix; the directory must exist.
    formats
        Which formats.
    dpi
        Resolution of the PNG (300: print quality at column width).

    Returns
    -------
    list of pathlib.Path
        Files written, in ``formats`` order (all with the same layout).
    """
    stem = Path(stem)
    fig = _figure_of(obj)
    # lay out once, then keep that layout for every format (and save the work of redoing it)
    engine = fig.get_layout_engine()
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    out = []
    try:
        for fmt in formats:
            path = stem.with_name(f"{stem.name}.{fmt}")
            data = figure_bytes(fig, fmt, dpi=dpi)
            with writing(path):
                path.write_bytes(data)
            out.append(path)
    finally:
        fig.set_layout_engine(engine)
    return out
