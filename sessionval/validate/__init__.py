"""Flat tables to a validated :class:`~sessionval.frame.SessionFrame` (vectorised rules).

:mod:`~sessionval.validate.flat` is the entry point (:func:`frame_from_flat`, its
phases in :mod:`~sessionval.validate.phases` and :mod:`~sessionval.validate.assemble`,
column converters in :mod:`~sessionval.validate.fields`, problem collection in
:mod:`~sessionval.validate.collect`); :mod:`~sessionval.validate.sources` reads the
columns, :mod:`~sessionval.validate.references` checks the study-level references.
"""
