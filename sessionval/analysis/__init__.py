"""Tidy tables in, tidy tables out: curves, study summaries, statistics."""
