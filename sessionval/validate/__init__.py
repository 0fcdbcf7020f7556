"""Flat tables to a validated :class:`~sessionval.frame.SessionFrame` (vectorised rules).

:mod:`~sessionval.validate.flat` is the entry point (:func:`frame_from_flat`, its
phases run by :mod:`~sessionval.validate.phases` from :mod:`~sessionval.validate.order`,
:mod:`~sessionval.validate.session_rules`, :mod:`~sessionval.validate.list_rules` and
:mod:`~sessionval.validate.values`, then :mod:`~sessionval.validate.settle` and
:mod:`~sessionval.validate.assemble`,
column converters in :mod:`~sessionval.validate.fields`, problem collection in
:mod:`~sessionval.validate.collect`); :mod:`~sessionval.validate.sources` reads the
columns, :mod:`~sessionval.validate.references` checks the study-level references.
"""
