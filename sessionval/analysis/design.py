"""The design of a comparison of systems, read from the per-session table.

Which analysis is right depends on how sessions were assigned to systems, so
:func:`detect_design` names the design before anything is compared:

``within``
    searchers used several systems; the block is the searcher, and the topic too when
    each searcher saw each topic with one system only (topics nested in searcher ×
    system).  A *Latin square*: every such searcher used every system, each on
    different topics.
``between``
    each searcher used one system (several searchers per system): no pairing unit.
``by_topic``
    runs, or one searcher per system: the searcher is absent, identical to the system
    or confounded with it, so systems are paired by topic (as ``compare`` does).
``log``
    one system: nothing to compare.

A user may override the design and the block (``[statistics] design``/``block``,
``design=``/``block=`` in Python); unknown values are a :class:`StatisticsError`
listing the allowed ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from ..errors import StatisticsError

__all__ = [
    "BLOCKS",
    "DESIGNS",
    "Block",
    "Design",
    "DesignName",
    "design_of_cells",
    "detect_design",
]

DesignName: TypeAlias = Literal["within", "between", "by_topic", "log"]
Block: TypeAlias = Literal["searcher", "searcher+topic", "topic", "none"]
#: Designs a user may name (``auto``: detect it).
DESIGNS: Final[tuple[str, ...]] = ("auto", "within", "between", "by_topic", "log")
#: Blocks a user may name (``auto``: the design's own).
BLOCKS: Final[tuple[str, ...]] = ("auto", "searcher", "searcher+topic", "topic", "none")
#: The block each design uses unless told otherwise.
_DEFAULT_BLOCK: Final[dict[str, Block]] = {
    "within": "searcher",
    "between": "none",
    "by_topic": "topic",
    "log": "none",
}


@dataclass(frozen=True)
class Design:
    """The design of a comparison of systems (:func:`detect_design`).

    Attributes
    ----------
    design
        ``within``, ``between``, ``by_topic`` or ``log``.
    block
        What pairs or blocks the comparison: ``searcher``, ``searcher+topic``,
        ``topic`` or ``none``.
    n_systems, n_searchers, n_topics, n_sessions
        Counts of the table (searchers: 0 when the table has none).
    topics
        ``crossed`` (a searcher saw a topic with several systems), ``nested`` (each
        searcher saw each topic with one system) or ``""`` outside ``within``.
    latin_square
        Within searchers, every searcher used every system on different topics.
    overridden
        The user named the design or the block.
    description
        One line for the report, e.g. ``"30 searchers × 2 systems within searchers,
        4 topics in a Latin square"``.
    """

    design: DesignName
    block: Block
    n_systems: int
    n_searchers: int
    n_topics: int
    n_sessions: int
    topics: str
    latin_square: bool
    overridden: bool
    description: str


def detect_design(
    per_session: pd.DataFrame,
    *,
    design: str | None = None,
    block: str | None = None,
    system: str = "system_id",
    searcher: str = "user_id",
    topic: str = "topic_id",
) -> Design:
    """Name the design of the comparison of systems in ``per_session`` (module docstring).

    Parameters
    ----------
    per_session
        One row per session with ``system`` and ``topic`` columns (``searcher`` may be
        absent: runs).
    design, block
        Override (``None`` or ``"auto"``: detect).  Allowed: :data:`DESIGNS`,
        :data:`BLOCKS`.
    system, searcher, topic
        Column names.

    Returns
    -------
    Design

    Raises
    ------
    StatisticsError
        An unknown design or block, or a missing system or topic column.

    Examples
    --------
    >>> ps = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "system_id": ["A", "B"] * 2,
    ...                    "topic_id": ["t1", "t2", "t2", "t1"]})
    >>> detect_design(ps).description
    '2 searchers × 2 systems within searchers, 2 topics in a Latin square'
    """
    if design not in (None, *DESIGNS):
        raise StatisticsError(
            f"[statistics] design: unknown design {design!r}; allowed: {', '.join(DESIGNS)}"
        )
    if block not in (None, *BLOCKS):
        raise StatisticsError(
            f"[statistics] block: unknown block {block!r}; allowed: {', '.join(BLOCKS)}"
        )
    missing = [c for c in (system, topic) if c not in per_session.columns]
    if missing:
        raise StatisticsError(
            f"per-session table: column(s) {missing} missing to detect the design; columns "
            f"are {list(per_session.columns)}"
        )
    has_searcher = searcher in per_session.columns and bool(per_session[searcher].notna().any())
    if not has_searcher:
        cells = pd.DataFrame(
            {"u": "", "s": per_session[system].astype(str), "t": per_session[topic].astype(str)}
        ).drop_duplicates()
        return design_of_cells(
            cells, n_sessions=len(per_session), has_searcher=False, design=design, block=block
        )
    cells, named = _coded_cells(per_session[searcher], per_session[system], per_session[topic])
    return _design(
        cells,
        n_sessions=len(per_session),
        has_searcher=True,
        named_as_system=named,
        design=design,
        block=block,
    )


def factorized(col: pd.Series) -> tuple[npt.NDArray[np.intp], pd.Index]:
    """``pd.factorize(col)``, or a categorical's own codes and categories (no pass).

    Factorizing a categorical gives its present categories as a ``CategoricalIndex``,
    whose text costs a conversion of each; its categories are already an index of
    distinct values (the unused ones never coded).
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        return np.asarray(col.cat.codes.to_numpy(), dtype=np.intp), col.cat.categories
    codes, uniques = pd.factorize(col)
    return np.asarray(codes, dtype=np.intp), pd.Index(uniques)


def _coded_cells(u: pd.Series, s: pd.Series, t: pd.Series) -> tuple[pd.DataFrame, bool]:
    """The distinct searcher × system × topic cells as codes; every searcher named as its system.

    The codes stand for the values as text (missing stays missing: nullable codes), so
    the design read from them is the one read from the text, without making a string
    per session (``astype(str)`` of each column and hashing it cost 0.1-0.2 s per
    column at 200k sessions, in every design detection).
    """
    text: dict[str, pd.Index] = {}
    coded: dict[str, pd.arrays.IntegerArray] = {}
    for name, col in (("u", u), ("s", s), ("t", t)):
        codes, uniques = factorized(col)
        # values of one text (1 and "1") share a code, as their text does
        merged, text[name] = pd.factorize(pd.Index(uniques.astype(str)))
        missing = codes < 0
        values = merged[np.where(missing, 0, codes)] if merged.size else codes
        coded[name] = pd.arrays.IntegerArray(values.astype(np.int64), missing)
    cells = pd.DataFrame(coded).drop_duplicates()
    return cells, _named_as_system(cells, text)


def _named_as_system(cells: pd.DataFrame, text: dict[str, pd.Index]) -> bool:
    """Every cell's searcher has its system's name (text), as ``(u == s).all()`` asks."""
    if cells["u"].isna().any() or cells["s"].isna().any():
        return False
    # the system (code) of each searcher's name; -1: no system has that name
    system_of = text["s"].get_indexer(text["u"])
    u, s = cells["u"].to_numpy(dtype=np.int64), cells["s"].to_numpy(dtype=np.int64)
    return bool((system_of[u] == s).all())


def design_of_cells(
    cells: pd.DataFrame,
    *,
    n_sessions: int,
    has_searcher: bool,
    design: str | None = None,
    block: str | None = None,
) -> Design:
    """The design of a study known by its distinct searcher × system × topic cells.

    What :func:`detect_design` decides from a per-session table, decided from the
    cells alone (its only input that grows with the sessions is their number), so a
    distributed run detects it from the partitions' cell sums
    (:mod:`sessionval.analysis.cell_sums`).

    Parameters
    ----------
    cells
        Columns ``u``, ``s``, ``t``: searcher, system and topic as text (``"nan"`` for
        a missing searcher, as ``astype(str)`` writes it), one row per cell or more.
    n_sessions
        Sessions of the study.
    has_searcher
        The study has a searcher column with at least one value.
    design, block
        Override, as :func:`detect_design` (checked there).
    """
    return _design(
        cells,
        n_sessions=n_sessions,
        has_searcher=has_searcher,
        named_as_system=bool((cells["u"] == cells["s"]).all()),
        design=design,
        block=block,
    )


def _design(
    cells: pd.DataFrame,
    *,
    n_sessions: int,
    has_searcher: bool,
    named_as_system: bool,
    design: str | None,
    block: str | None,
) -> Design:
    """:func:`design_of_cells`, told whether every searcher is named as its system.

    ``cells`` may hold the values as text or as codes standing for the text (missing
    as missing): every count below is by value.
    """
    n_systems, n_topics = cells["s"].nunique(), cells["t"].nunique()
    confounded = not has_searcher or _searcher_is_system(cells, named_as_system)
    n_searchers = 0 if confounded else int(cells["u"].nunique())
    topics, latin = "", False
    if n_systems < 2:
        found: DesignName = "log"
    elif confounded:
        found = "by_topic"
    else:
        per_user = cells.groupby("u")["s"].nunique()
        if (per_user >= 2).any():
            found = "within"
            # nested: no searcher saw one topic with two systems
            nested = not cells.drop_duplicates().duplicated(["u", "t"]).any()
            topics = "nested" if nested else "crossed"
            latin = nested and bool((per_user == n_systems).all())
        else:
            found = "between"
    chosen: DesignName = found if design in (None, "auto") else design  # type: ignore[assignment]
    default: Block = _DEFAULT_BLOCK[chosen]
    if chosen == found == "within" and topics == "nested":
        default = "searcher+topic"
    chosen_block: Block = default if block in (None, "auto") else block  # type: ignore[assignment]
    if chosen == "within" and n_searchers == 0:
        raise StatisticsError(
            "[statistics] design = 'within' needs searchers who used several systems; this "
            "table has no searcher apart from the system: use 'by_topic' or 'auto'"
        )
    overridden = design not in (None, "auto") or block not in (None, "auto")
    return Design(
        design=chosen,
        block=chosen_block,
        n_systems=n_systems,
        n_searchers=n_searchers,
        n_topics=n_topics,
        n_sessions=n_sessions,
        topics=topics if chosen == "within" else "",
        latin_square=latin and chosen == "within",
        overridden=overridden,
        description=_describe(chosen, n_systems, n_searchers, n_topics, topics, latin)
        + (" (set in the configuration)" if overridden else ""),
    )


def _searcher_is_system(cells: pd.DataFrame, named_as_system: bool) -> bool:
    """One searcher per system and vice versa, or every searcher named as its system."""
    pairs = cells[["u", "s"]].drop_duplicates()
    return bool((pairs["u"].is_unique and pairs["s"].is_unique) or named_as_system)


def _describe(
    design: str, n_systems: int, n_searchers: int, n_topics: int, topics: str, latin: bool
) -> str:
    """The one-line description of :attr:`Design.description`."""
    t = f"{n_topics} topic{'s' if n_topics != 1 else ''}"
    if design == "log":
        return f"one system ({t}): nothing to compare"
    if design == "by_topic":
        return f"{n_systems} systems compared by topic on {t}"
    if design == "between":
        return (
            f"{n_searchers} searchers between {n_systems} systems (each searcher one system), {t}"
        )
    where = (
        "in a Latin square"
        if latin and topics == "nested"
        else "nested in searcher × system"
        if topics == "nested"
        else "crossed with the systems"
    )
    return f"{n_searchers} searchers × {n_systems} systems within searchers, {t} {where}"
