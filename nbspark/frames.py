"""Counting from a DataFrame, with Spark SQL only: the count tables of both families from columns a
user already has (``naive_bayes.frames.count_documents``, ``backoff.frames.count_windows``)."""

from nbspark.backoff.frames import count_windows
from nbspark.naive_bayes.frames import count_documents

__all__ = ["count_documents", "count_windows"]
