"""nbspark as ``pyspark.ml`` stages: ``CountingNaiveBayes`` (``naive_bayes``), ``CountingBackoff``
(``backoff``) and ``CountingDensity`` (``density``), Estimators that fit by counting, whose models
are also made from a model directory (``fromModelDir``; a table's naive Bayes model:
``CountingTableNaiveBayesModel``); saved as MLlib models are (``persist``)."""

from nbspark.ml.backoff import CountingBackoff, CountingBackoffModel
from nbspark.ml.density import CountingDensity, CountingDensityModel
from nbspark.ml.naive_bayes import CountingNaiveBayes, CountingNaiveBayesModel, Counts
from nbspark.ml.naive_bayes_table import CountingTableNaiveBayesModel

__all__ = [
    "CountingBackoff",
    "CountingBackoffModel",
    "CountingDensity",
    "CountingDensityModel",
    "CountingNaiveBayes",
    "CountingNaiveBayesModel",
    "CountingTableNaiveBayesModel",
    "Counts",
]
