r"""Per-session score tables of known truth, for calibrating the comparison of systems.

:func:`simulate_scores` draws the table ``run`` writes in ``tables/per_session`` (the
columns :func:`~sessionval.analysis.by_design.compare_per_session` and
:func:`~sessionval.analysis.design.detect_design` read) from a linear model whose truth is
set by the caller, with no logs in between:

.. math::

    y_{s} = \mu + \beta_{k(s)} + u_{i(s)} + t_{j(s)} + p_{o(s)} + \varepsilon_s,
    \quad u_i \sim N(0, \sigma_u^2),\ t_j \sim N(0, \sigma_t^2),\
    p_o \sim N(0, \sigma_p^2),\ \varepsilon_s \sim N(0, \sigma^2),

for session ``s`` of searcher ``i`` on topic ``j`` with system ``k`` at position ``o`` of
the searcher's sequence; :math:`\beta_k` is the system effect (``system_effect``). It is
the crossed random-effects model of user studies (searcher and topic variation apart from
the system's: Järvelin et al. 2008, section 3.1, a Latin square of searchers × scenarios;
the systems × topics layout of Sakai 2018, *Laboratory Experiments in Information
Retrieval*, section 4.3, with searchers and order added).  Scores are not clipped to
``[0, 1]``: the truth stays exactly linear.

Designs (the names of :mod:`sessionval.analysis.design`), laid out by
:func:`sessionval.synth.assignment.layout` as the full study's are: ``within`` with
``topics="nested"`` (a Latin square: distinct topics per searcher, counterbalanced
system order) or ``"crossed"`` (each topic with every system), ``between`` (each
searcher one system) and ``by_topic`` (one session per system × topic; the searcher is
the system, ``user_id`` equals ``system_id``, like runs loaded as sessions, and no
searcher effect is drawn: it would be a system effect).

References
----------
Järvelin, K., Price, S. L., Delcambre, L. M. L., and Nielsen, M. L. (2008).
Discounted cumulated gain based evaluation of multiple-query IR sessions. ECIR 2008,
LNCS 4956, 4–15. doi:10.1007/978-3-540-78646-7_4 (key ``jarvelin2008``).

Examples
--------
>>> t = simulate_scores(n_searchers=4, n_topics=4, system_effect=0.1, seed=1)
>>> t.columns.tolist()
['session_id', 'user_id', 'topic_id', 'system_id', 'session_order', 'nsdcg']
>>> t.groupby("user_id")["topic_id"].nunique().tolist()
[4, 4, 4, 4]
>>> t.attrs["system_effect"]
{'S1': 0.0, 'S2': 0.1}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import pandas as pd

from ..errors import SessionvalError
from .assignment import Assignment, StudyDesign, TopicLayout, layout
from .design import seeded_rng, session_ids, user_ids

__all__ = [
    "simulate_scores",
]

#: The random stream of the score simulator (``seeded_rng(seed, _STREAM)``), apart from the
#: study generator's design (``0``) and chunks (``1, k``).
_STREAM: Final = 3


def _option_error(name: str, value: object, allowed: str) -> SessionvalError:
    return SessionvalError(f"simulate_scores: {name} = {value!r} is not allowed; {allowed}")


def _count(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise _option_error(name, value, f"give an integer >= {low}")
    return int(value)


def _number(name: str, value: object, *, low: float = -np.inf) -> float:
    what = "give a finite number" + (f" >= {low:g}" if np.isfinite(low) else "")
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise _option_error(name, value, what)
    v = float(value)
    if not np.isfinite(v) or v < low:
        raise _option_error(name, value, what)
    return v


def _effects(system_effect: float | Sequence[float], n_systems: int) -> np.ndarray:
    """Each system's effect: ``k * d`` for a number ``d``, or the sequence as given."""
    if isinstance(system_effect, int | float | np.number) and not isinstance(system_effect, bool):
        beta = float(system_effect) * np.arange(n_systems, dtype=np.float64)
    else:
        beta = np.asarray(system_effect, dtype=np.float64)
        if beta.shape != (n_systems,):
            raise _option_error(
                "system_effect",
                system_effect,
                f"give a number (the step between consecutive systems) or {n_systems} numbers",
            )
    if not np.isfinite(beta).all():
        raise _option_error("system_effect", system_effect, "give finite numbers")
    return beta


def simulate_scores(
    *,
    design: StudyDesign = "within",
    topics: TopicLayout = "nested",
    n_searchers: int = 30,
    n_topics: int = 4,
    n_systems: int = 2,
    sessions_per_searcher: int | None = None,
    system_effect: float | Sequence[float] = 0.0,
    searcher_sd: float = 0.1,
    topic_sd: float = 0.1,
    period_sd: float = 0.0,
    noise_sd: float = 0.1,
    mean: float = 0.3,
    measure: str = "nsdcg",
    replicates: int = 1,
    seed: int = 0,
) -> pd.DataFrame:
    """Draw a per-session score table of known truth (module docstring).

    Parameters
    ----------
    design
        ``within`` (searchers use several systems), ``between`` (each searcher one
        system) or ``by_topic`` (one session per system × topic, the searcher is the
        system).
    topics
        Within searchers: ``nested`` (each searcher sees each topic once: a Latin
        square) or ``crossed`` (each topic with every system).
    n_searchers, n_topics, n_systems
        Counts (``n_searchers`` is ignored for ``by_topic``: one per system).
    sessions_per_searcher
        Sessions of each searcher (default: ``n_topics``; ``n_topics × n_systems`` for
        crossed topics).  Nested topics allow at most ``n_topics``.
    system_effect
        A number ``d``: system ``S{k+1}`` scores ``k d`` more than ``S1`` (so
        ``S2 − S1 = d``); or one effect per system.
    searcher_sd, topic_sd, period_sd, noise_sd
        Standard deviations of the searcher, topic and order-position random effects
        and of the session's own noise.
    mean
        The grand mean (mu of the module docstring).
    measure
        Name of the score column.
    replicates
        Independent studies of the same layout, drawn at once: with ``replicates = R >
        1`` the table has ``R`` score columns ``{measure}_1`` … ``{measure}_R``, each a
        study of its own (fresh searcher, topic, period effects and noise), so one
        :func:`~sessionval.analysis.by_design.compare_per_session` call with
        ``measures=attrs["measures"]`` analyses them all (each measure is its own family).
    seed
        Seed of the draw (the same arguments and seed give the same table).

    Returns
    -------
    pandas.DataFrame
        ``session_id, user_id, topic_id, system_id, session_order`` (1-based, as
        ``run`` writes it) and the score column(s); ``attrs["system_effect"]`` maps each
        system to its true effect, ``attrs["measures"]`` lists the score columns.

    Raises
    ------
    SessionvalError
        An unknown design or topic layout, a count or SD out of range, more nested
        sessions per searcher than topics (the checks of
        :class:`~sessionval.synth.assignment.Assignment`).
    """
    # the design knobs are the full study's (one validation, one layout)
    assignment = Assignment(
        design=design, topics=topics, sessions_per_searcher=sessions_per_searcher
    )
    n_searchers = _count("n_searchers", n_searchers, 2)
    n_topics = _count("n_topics", n_topics, 1)
    n_systems = _count("n_systems", n_systems, 2)
    _count("seed", seed, 0)
    replicates = _count("replicates", replicates, 1)
    assignment.check(n_topics, n_systems)
    per = assignment.per_searcher(n_topics, n_systems)
    sds = {
        k: _number(k, v, low=0.0)
        for k, v in (
            ("searcher_sd", searcher_sd),
            ("topic_sd", topic_sd),
            ("period_sd", period_sd),
            ("noise_sd", noise_sd),
        )
    }
    mu = _number("mean", mean)
    beta = _effects(system_effect, n_systems)

    n_users = n_systems if design == "by_topic" else n_searchers
    per = n_topics if design == "by_topic" else per
    user, topic, system = layout(
        design, topics, n_searchers=n_users, n_topics=n_topics, n_systems=n_systems, per=per
    )
    order = np.tile(np.arange(per), n_users)
    rng = seeded_rng(seed, _STREAM)
    # one draw per level and study, then indexed: a level's sessions share its effect
    draws = (n_users, n_topics, int(order.max()) + 1, len(user))
    u, t, p, e = (
        rng.normal(0.0, sds[k], (size, replicates))
        for k, size in zip(("searcher_sd", "topic_sd", "period_sd", "noise_sd"), draws, strict=True)
    )
    if design == "by_topic":
        u[:] = 0.0  # the searcher is the system: its effect would be a system effect
    y = mu + beta[system][:, None] + u[user] + t[topic] + p[order] + e

    names = [f"S{k + 1}" for k in range(n_systems)]
    users = names if design == "by_topic" else user_ids(0, n_users, n_users)
    topic_names = [f"t{j + 1:0{max(2, len(str(n_topics)))}d}" for j in range(n_topics)]
    w = len(str(replicates))
    measures = (
        [measure] if replicates == 1 else [f"{measure}_{r:0{w}d}" for r in range(1, replicates + 1)]
    )
    ids = pd.DataFrame(
        {
            "session_id": session_ids(0, len(user), len(user)),
            "user_id": np.asarray(users)[user],
            "topic_id": np.asarray(topic_names)[topic],
            "system_id": np.asarray(names)[system],
            "session_order": (order + 1).astype(np.int64),
        }
    )
    table = pd.concat([ids, pd.DataFrame(y, columns=measures)], axis=1)
    table.attrs["system_effect"] = dict(zip(names, beta.tolist(), strict=True))
    table.attrs["measures"] = measures
    return table
