"""nbspark as ``pyspark.ml`` stages: ``CountingNaiveBayes`` (``naive_bayes``) and ``CountingBackoff``
(``backoff``), Estimators that fit by counting, saved as MLlib models are (``persist``)."""

from nbspark.ml.backoff import CountingBackoff, CountingBackoffModel
from nbspark.ml.naive_bayes import CountingNaiveBayes, CountingNaiveBayesModel, Counts

__all__ = [
    "CountingBackoff",
    "CountingBackoffModel",
    "CountingNaiveBayes",
    "CountingNaiveBayesModel",
    "Counts",
]
