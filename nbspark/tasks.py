"""A config's ``task`` and the model family that trains it: the one rule of ``nbspark train``,
``nbspark stream`` and ``nbspark.fit``. Imports nothing until asked: only the run's own family is
imported (the naive Bayes family brings numpy and scipy)."""

from __future__ import annotations

__all__ = ["family_of"]


def family_of(task: str):
    """The model family (``spine.training.Family``) that a config's ``task`` trains."""
    if task == "naive_bayes":
        from nbspark.naive_bayes.jobs import NAIVE_BAYES

        return NAIVE_BAYES
    if task == "density":
        from nbspark.density.jobs import DENSITY

        return DENSITY
    from nbspark.backoff.jobs import BACKOFF

    return BACKOFF
