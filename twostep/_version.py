"""The package version, in the base layer so every layer can read it."""

__version__ = "0.2.0"
