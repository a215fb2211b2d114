"""What the in-process predictors of both families share."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["as_batch"]


def as_batch(items, what: str) -> list:
    """A predict call's items as a list. One text, window or row is refused, as scikit-learn refuses
    a lone string: iterating it would score its characters (or a row's keys), silently."""
    if isinstance(items, (str, bytes, Mapping)):
        raise TypeError(f"predict takes a list of {what}, got one {type(items).__name__}; wrap it in a list")
    return list(items)
