"""Figures to files: PNG, SVG and PDF bytes that do not change from run to run.

:func:`save_figure` lays a figure out once and writes it in every format asked for;
:func:`figure_bytes` renders one format; :func:`reduced_png` makes the report's smaller
PNG from the PNG written, without drawing the figure again.  Metadata dates are left
out and SVG ids salted with a constant, so the same figure gives the same bytes.
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
    from matplotlib.legend import Legend

__all__ = ["ImageFormat", "figure_bytes", "figure_paths", "reduced_png", "save_figure"]

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
    if engine is not None:
        engine.execute(fig)  # the layout alone: a whole draw without rendering costs 2x
    _without_layout_engine(fig)
    # a legend at loc="best" is placed where the first format's drawing puts it: the
    # other formats draw it there without searching again
    found = _record_best_legends(fig)
    pinned: list[Legend] | None = None
    out = figure_paths(stem, formats)
    try:
        for fmt, path in zip(formats, out, strict=True):
            data = figure_bytes(fig, fmt, dpi=dpi)
            if pinned is None:
                pinned = _pin_legends(found)
            with writing(path):
                path.write_bytes(data)
    finally:
        fig.set_layout_engine(engine)
        for legend in _pin_legends(found) if pinned is None else pinned:
            legend.set_loc("best")
    return out


def figure_paths(stem: Path, formats: Sequence[ImageFormat]) -> list[Path]:
    """The files :func:`save_figure` writes: ``<stem>.<format>``, in ``formats`` order."""
    return [stem.with_name(f"{stem.name}.{fmt}") for fmt in formats]


def _without_layout_engine(fig: Figure) -> None:
    """Keep the figure's current layout: no layout engine at all while it is saved.

    Not ``set_layout_engine("none")``: that leaves a placeholder engine, and
    matplotlib's ``print_figure`` draws a figure that has any engine once more, without
    rendering, before it draws it in the format: twice the drawing of every format.
    ``None`` removes the engine when the rc settings ask for none (set so here).
    """
    import matplotlib as mpl

    with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)


def _record_best_legends(fig: Figure) -> dict[Legend, int]:
    """Watch the legends placed at ``loc="best"``: which place each draw finds for them.

    Matplotlib searches the best place of such a legend (ten candidates, each tested
    against every vertex of every line) at every draw, so in every format again: about
    a fifth of a saved figure's time.  The search picks one of the fixed places (codes
    1-10, ``Legend.codes``); the returned mapping holds each watched legend's last pick
    (0 before a draw).
    Private API of matplotlib: without it, nothing is watched (the search stays).
    """
    found: dict[Legend, int] = {}
    for ax in fig.axes:
        leg = ax.get_legend()
        search = getattr(leg, "_find_best_position", None)
        if leg is None or getattr(leg, "_loc", None) != 0 or search is None:
            continue
        if not hasattr(leg, "_get_anchored_bbox") or not hasattr(leg, "set_loc"):
            continue
        found[leg] = 0
        private: Any = leg  # matplotlib's private methods are not in its type stubs
        private._find_best_position = _watched(leg, search, found)
    return found


def _watched(leg: Legend, search: Any, found: dict[Legend, int]) -> Any:
    """``search`` (the legend's own best-place search), noting the code of the place found."""
    from matplotlib.transforms import Bbox

    private: Any = leg  # matplotlib's private methods are not in its type stubs

    def find(width: float, height: float, renderer: Any) -> tuple[float, float]:
        lb = search(width, height, renderer)
        box, anchor = Bbox.from_bounds(0, 0, width, height), leg.get_bbox_to_anchor()
        for code in range(1, len(leg.codes)):
            if tuple(private._get_anchored_bbox(code, box, anchor, renderer)) == tuple(lb):
                found[leg] = code
                break
        return lb  # type: ignore[no-any-return]

    return find


def _pin_legends(found: dict[Legend, int]) -> list[Legend]:
    """Stop watching; pin each legend where the last draw found it (``save_figure`` restores)."""
    for leg in found:
        private: Any = leg
        del private._find_best_position  # the class's own search again
    pinned = [leg for leg, code in found.items() if code > 0]
    for leg in pinned:
        leg.set_loc(found[leg])
    return pinned


def reduced_png(png: bytes, factor: int) -> bytes:
    """A PNG ``factor`` times smaller each way: each pixel the mean of a ``factor`` square.

    The report's preview of a figure written as PNG (300 dpi reduced by 2: 150 dpi)
    without drawing and laying the figure out again, which costs several times more
    than the reduction.  The same bytes in gives the same bytes out.

    Raises
    ------
    SessionvalError
        ``png`` is not PNG data, or ``factor`` is below 1.
    """
    from PIL import Image, UnidentifiedImageError

    if factor < 1:
        raise SessionvalError(f"reduced_png: factor must be >= 1, got {factor}")
    try:
        with Image.open(io.BytesIO(png), formats=["PNG"]) as image:
            small = image.reduce(factor)
    except (UnidentifiedImageError, OSError) as exc:
        raise SessionvalError(f"reduced_png: not PNG data ({exc})") from exc
    buf = io.BytesIO()
    small.save(buf, format="png")
    return buf.getvalue()
