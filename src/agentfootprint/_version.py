"""The package's version, in a leaf module so any layer may name it without importing the package root."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
