"""The package version, in a leaf module: the report reads it without the package face."""

__version__ = "0.1.0"
