"""The grades a gain scheme must cover, and ``gains = "auto"`` settled on them.

:meth:`SessionConfig.fit_gains <sessionval.evaluation.config.SessionConfig.fit_gains>`
decides; this module finds the grades it decides on: the grade scale of whoever's
grades drive the gains (the reference judgments', or the searchers' own), declared
and observed.  :func:`~sessionval.evaluation.session.evaluate`, the partitioned
scorers and ``sessionval run`` all call :func:`fit_gains`, so a study graded 0-4 is
scored the same way from Python, the command line and ``meta sensitivity``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._types import FloatArray
from ..frame import JudgmentFrame, SessionFrame
from ..models.judgments import GradeScale
from .config import SessionConfig

__all__ = [
    "ConfigNote",
    "data_grades",
    "fit_gains",
    "warn_notes",
]


class ConfigNote(UserWarning):
    """What an evaluation decided on the caller's behalf (the gains fitted to the data)."""


def warn_notes(notes: tuple[str, ...], *, stacklevel: int = 3) -> None:
    """Say each note as a :class:`ConfigNote` warning (``sessionval run`` lists them instead)."""
    for note in notes:
        warnings.warn(note, ConfigNote, stacklevel=stacklevel)


def _with_declared(grades: FloatArray, scale: GradeScale | None) -> FloatArray:
    declared = np.asarray(scale.grades if scale is not None else (), dtype=np.float64)
    seen = pd.unique(grades[~np.isnan(grades)])  # a hash pass: rows can be billions
    return np.unique(np.concatenate([seen, declared]))


def data_grades(
    config: SessionConfig,
    judgments: JudgmentFrame | None,
    frame: SessionFrame | None = None,
    *,
    user_scale: GradeScale | None = None,
) -> FloatArray | None:
    """The grades the gains must cover: the grade scale's (declared, else observed).

    With ``judgments = "reference"``: the judgments' grades and their declared scale
    (no judgments: none).  With ``"searcher"``: the searchers' grades in ``frame``
    and their scale (``frame.grade_scale``, else ``user_scale``, the study
    header's); ``None`` while no frame is read yet.
    """
    if config.judgments != "searcher":
        if judgments is None:
            return np.zeros(0)
        return _with_declared(judgments.table["grade"].to_numpy(dtype=np.float64), judgments.scale)
    if frame is None:
        return None
    grades = frame.results["user_grade"].to_numpy(dtype=np.float64, na_value=np.nan)
    return _with_declared(grades, frame.grade_scale or user_scale)


def fit_gains(
    config: SessionConfig,
    judgments: JudgmentFrame | None,
    frame: SessionFrame | None = None,
    *,
    user_scale: GradeScale | None = None,
) -> tuple[SessionConfig, tuple[str, ...]]:
    """``config`` with its gain scheme settled for the data, and the notes on the choice.

    See :meth:`~sessionval.evaluation.config.SessionConfig.fit_gains`; with the
    searchers' grades and no frame yet, ``config`` is returned as it is (settled
    once the sessions are read).

    Raises
    ------
    JudgmentError
        A scheme the user chose has no gain for a grade of the data.
    """
    if config.gains_fitted and config.gains.grades is None:  # exp, grade: every grade has a gain
        return config, ()
    grades = data_grades(config, judgments, frame, user_scale=user_scale)
    if grades is None:
        return config, ()
    where = "searchers' grades" if config.judgments == "searcher" else "judgments"
    return config.fit_gains(grades, where=where)
