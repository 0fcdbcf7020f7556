"""Scoring a study or a run: configuration, engines, the session and list evaluations."""
