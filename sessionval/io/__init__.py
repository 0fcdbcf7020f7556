"""Readers and writers: every input format ends in a validated columnar SessionFrame.

The formats are declared once in :data:`sessionval.io.formats.FORMATS`; every
reader returns a :class:`~sessionval.frame.LoadedStudy`, and
:func:`sessionval.io.formats.load_input` (or :func:`sessionval.io.study.load_study`)
reads any of them.
"""
