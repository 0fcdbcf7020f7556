"""Readers and writers: every input format ends in a validated columnar SessionFrame."""
