"""Which searcher uses which system on which topic: the assignment of a synthetic study.

One layout for the two simulators, the full study (:func:`sessionval.synth.generate_study`)
and the score tables (:func:`sessionval.synth.simulate_scores`), in the design names of
:mod:`sessionval.analysis.design`.  Searcher ``i``'s ``o``-th session (``o = 0 … m-1``, ``m``
sessions per searcher), with ``T`` topics and ``K`` systems:

``within``, ``topics="nested"`` (a Latin square)
    topic ``(o + ⌊i/K⌋) mod T``, system ``(o + i) mod K``: distinct topics per searcher;
    searchers ``2i`` and ``2i+1`` (``K = 2``) see the same topic order with the systems
    swapped, and every order position carries each system equally often (Järvelin et al.
    2008, section 3.1: counterbalanced system order).
``within``, ``topics="crossed"``
    topic ``(⌊o/K⌋ + i) mod T``, system ``(o + i) mod K``: each topic with every system.
``between``
    system ``i mod K`` only, topics ``(o + ⌊i/K⌋) mod T``.
``by_topic``
    one searcher per system (searcher ``k`` is system ``k``), who searches the topics in
    turn, as runs loaded as sessions do.

The full study's default, ``within``/``nested`` with 4 sessions per searcher, keeps the
30 conditions of Järvelin et al.'s design (:func:`sessionval.synth.design.design_study`)
so the committed sample is unchanged.

References
----------
Järvelin, K., Price, S. L., Delcambre, L. M. L., and Nielsen, M. L. (2008).
Discounted cumulated gain based evaluation of multiple-query IR sessions. ECIR 2008,
LNCS 4956, 4–15. doi:10.1007/978-3-540-78646-7_4 (key ``jarvelin2008``).

Examples
--------
>>> user, topic, system = layout("within", "nested", n_searchers=2, n_topics=2, n_systems=2,
...                              per=2)
>>> user.tolist(), topic.tolist(), system.tolist()
([0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 1, 0])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import numpy as np

from .._types import IntArray
from ..errors import SessionvalError

__all__ = [
    "DESIGNS",
    "TOPIC_LAYOUTS",
    "Assignment",
    "StudyDesign",
    "TopicLayout",
    "layout",
]

StudyDesign: TypeAlias = Literal["within", "between", "by_topic"]
TopicLayout: TypeAlias = Literal["nested", "crossed"]
#: Designs a synthetic study can have (the names of :mod:`sessionval.analysis.design`).
DESIGNS: Final[tuple[str, ...]] = ("within", "between", "by_topic")
#: How a within-searcher study lays out topics.
TOPIC_LAYOUTS: Final[tuple[str, ...]] = ("nested", "crossed")


def layout(
    design: str, topics: str, *, n_searchers: int, n_topics: int, n_systems: int, per: int
) -> tuple[IntArray, IntArray, IntArray]:
    """Searcher, topic and system of every session, searcher by searcher (module docstring).

    ``by_topic`` gives each of the ``n_searchers = n_systems`` searchers ``per`` sessions.
    The session's order in its searcher's sequence is its position in the block.
    """
    i = np.repeat(np.arange(n_searchers, dtype=np.int64), per)
    o = np.tile(np.arange(per, dtype=np.int64), n_searchers)
    if design == "by_topic":
        return i, o % n_topics, i % n_systems
    if design == "between":
        return i, (o + i // n_systems) % n_topics, i % n_systems
    if topics == "crossed":
        return i, (o // n_systems + i) % n_topics, (o + i) % n_systems
    return i, (o + i // n_systems) % n_topics, (o + i) % n_systems


@dataclass(frozen=True)
class Assignment:
    """The design knobs of a synthetic study (:func:`sessionval.synth.generate_study`).

    Attributes
    ----------
    design
        ``within`` (each searcher uses every system), ``between`` (each searcher one
        system) or ``by_topic`` (one searcher per system).
    topics
        Within searchers: ``nested`` (each searcher searches each scenario once: a
        Latin square) or ``crossed`` (each scenario with every system).
    sessions_per_searcher
        Default: 4 (every scenario once); ``4 × n_systems`` for crossed topics; for
        ``by_topic`` the sessions are shared out over the systems' searchers.
    system_effect
        How much better each system is, in ``[0, 1]``: system ``k`` of ``K`` has strength
        ``system_effect × (k-1)/(K-1)``, which raises its query quality (by up to 0.16
        on a successful last query, 0.12 on the others), lowers its empty lists and
        failures and moves its query counts from Table 2's ``S1`` column towards ``S2``'s.
        1 is the paper's ``S2`` over ``S1`` (default); 0 makes the systems equal (a null
        study).  Not in sDCG units: :func:`~sessionval.synth.simulate_scores` draws
        scores of exact truth.
    """

    design: StudyDesign = "within"
    topics: TopicLayout = "nested"
    sessions_per_searcher: int | None = None
    system_effect: float = 1.0

    def __post_init__(self) -> None:
        """Refuse unknown designs and out-of-range knobs, naming what is allowed."""
        if self.design not in DESIGNS:
            raise SessionvalError(
                f"synth design: {self.design!r} is not a design; allowed: {', '.join(DESIGNS)}"
            )
        if self.topics not in TOPIC_LAYOUTS:
            raise SessionvalError(
                f"synth topics: {self.topics!r} is not a topic layout; allowed: "
                f"{', '.join(TOPIC_LAYOUTS)}"
            )
        per = self.sessions_per_searcher
        if per is not None and (
            isinstance(per, bool) or not isinstance(per, int | np.integer) or per < 1
        ):
            raise SessionvalError(
                f"synth sessions_per_searcher: must be an integer >= 1, got {per!r}"
            )
        effect = self.system_effect
        if (
            isinstance(effect, bool)
            or not isinstance(effect, int | float | np.number)
            or not 0.0 <= float(effect) <= 1.0
        ):
            raise SessionvalError(
                f"synth system_effect: must be a number in [0, 1] (0: equal systems, 1: the "
                f"paper's), got {effect!r}"
            )

    @property
    def paper_layout(self) -> bool:
        """Sessions laid out as in Järvelin et al. (2008): the 30 conditions of the generator."""
        return (
            self.design == "within"
            and self.topics == "nested"
            and self.sessions_per_searcher in (None, 4)
        )

    @property
    def is_default(self) -> bool:
        """Every knob at its default: the generator's study, byte for byte."""
        return self.paper_layout and self.system_effect == 1.0

    def per_searcher(self, n_topics: int, n_systems: int) -> int:
        """Sessions per searcher of this assignment (``by_topic``: not used)."""
        if self.sessions_per_searcher is not None:
            return int(self.sessions_per_searcher)
        crossed = self.design == "within" and self.topics == "crossed"
        return n_topics * n_systems if crossed else n_topics

    def check(self, n_topics: int, n_systems: int) -> None:
        """Raise :class:`SessionvalError` when searchers cannot see the topics as asked."""
        per = self.per_searcher(n_topics, n_systems)
        if self.design != "by_topic" and self.topics == "nested" and per > n_topics:
            raise SessionvalError(
                f"synth sessions_per_searcher: {per} sessions on nested topics would repeat a "
                f"scenario; give at most {n_topics}, or crossed topics"
            )
        if self.design == "within" and per < 2:
            raise SessionvalError(
                "synth sessions_per_searcher: a within-searcher study needs at least 2 "
                "sessions per searcher (one per system)"
            )

    def sessions(
        self, n_sessions: int, n_topics: int, n_systems: int
    ) -> tuple[IntArray, IntArray, IntArray]:
        """Searcher, topic and system of ``n_sessions`` sessions, searcher by searcher.

        ``by_topic`` shares the sessions out over the systems' searchers in turn.
        """
        self.check(n_topics, n_systems)
        if self.design == "by_topic":
            n_users, per = n_systems, -(-n_sessions // n_systems)
        else:
            per = self.per_searcher(n_topics, n_systems)
            n_users = -(-n_sessions // per)
        users, topic, system = layout(
            self.design,
            self.topics,
            n_searchers=n_users,
            n_topics=n_topics,
            n_systems=n_systems,
            per=per,
        )
        return users[:n_sessions], topic[:n_sessions], system[:n_sessions]

    def label(self) -> str:
        """What differs from the paper's design, for the study header's name (``""``: none)."""
        out = "" if self.paper_layout else f", {self.design}"
        if self.design == "within" and self.topics == "crossed":
            out += ", crossed"
        if self.system_effect != 1.0:
            out += f", system effect {self.system_effect:g}"
        return out

    def describe(self, n_systems: int) -> str:
        """How sessions were assigned, for the study header's description."""
        if self.paper_layout:
            return "Latin-square assignment (2 scenarios per system per searcher)"
        if self.design == "by_topic":
            return "one searcher per system, searching the scenarios in turn"
        if self.design == "between":
            return "each searcher one system (between searchers)"
        if self.topics == "crossed":
            return f"each searcher every scenario with each of the {n_systems} systems"
        return f"Latin-square assignment ({self.per_searcher(4, n_systems)} scenarios per searcher)"
