"""Measures: single-query (``single``, registry in ``_registry``) and session (``session``)."""
