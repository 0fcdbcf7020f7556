"""Renderers: tidy tables in, files or Axes out (data dictionary, plots, exports, report)."""
