"""nbspark: naive Bayes and n-gram density estimation by counting, on Apache Spark.

The tree shows the flow (``docs/architecture.md``): ``app`` (the command lines) over ``loading``
(the no-Spark face, ``nbspark.load``) and ``ml`` (pyspark.ml stages), over the two families
(``naive_bayes``, ``backoff``), over ``spine`` (counting, training and classifying skeletons), over
``settings`` and ``report``, ``inputs``, ``storage`` and ``spark``. Each floor imports only from the
floors under it (``scripts/import_graph.py`` checks it).
"""

from nbspark._version import __version__
from nbspark.backoff.model import BackoffModel, build_model
from nbspark.backoff.predict import Decision, predict
from nbspark.inputs.parsers import MalformedLine, Story, parse_ngram_line, parse_reuters_sgml
from nbspark.inputs.spec import InputSpec
from nbspark.inputs.tokens import tokenize
from nbspark.settings.config import DEFAULT, ExperimentConfig, load_config


def __getattr__(name: str):
    # ``load`` needs numpy, scipy and pyarrow: imported on first use, not by every Spark worker
    # that unpickles a function of this package (each worker imports ``nbspark`` first)
    if name in ("load", "fit", "classify"):
        from nbspark import loading

        return getattr(loading, name)
    if name == "NaiveBayes":  # scikit-learn's shape of an estimator: fit, clone, cross_val_score
        from nbspark.naive_bayes.estimator import NaiveBayes

        return NaiveBayes
    if name == "Backoff":
        from nbspark.backoff.estimator import Backoff

        return Backoff
    if name == "Density":
        from nbspark.density.estimator import Density

        return Density
    raise AttributeError(f"module 'nbspark' has no attribute {name!r}")


__all__ = [
    "DEFAULT",
    "Backoff",
    "BackoffModel",
    "Decision",
    "Density",
    "ExperimentConfig",
    "InputSpec",
    "MalformedLine",
    "NaiveBayes",
    "Story",
    "__version__",
    "build_model",
    "classify",
    "fit",
    "load",
    "load_config",
    "parse_ngram_line",
    "parse_reuters_sgml",
    "predict",
    "tokenize",
]
