"""nbspark as ``pyspark.ml`` stages: ``CountingNaiveBayes`` (``naive_bayes``) and ``CountingBackoff``
(``backoff``), Estimators that fit by counting, and ``CountingDensityModel`` (``density``), a density
model trained by ``nbspark train`` as a Transformer; saved as MLlib models are (``persist``)."""

from nbspark.ml.backoff import CountingBackoff, CountingBackoffModel
from nbspark.ml.density import CountingDensityModel
from nbspark.ml.naive_bayes import CountingNaiveBayes, CountingNaiveBayesModel, Counts

__all__ = [
    "CountingBackoff",
    "CountingBackoffModel",
    "CountingDensityModel",
    "CountingNaiveBayes",
    "CountingNaiveBayesModel",
    "Counts",
]
