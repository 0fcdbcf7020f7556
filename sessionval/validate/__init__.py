"""Flat tables to a validated :class:`~sessionval.frame.SessionFrame` (vectorised rules)."""
