"""Subcommands of the ``sessionval`` CLI, one module each (see :mod:`sessionval.cli`)."""
