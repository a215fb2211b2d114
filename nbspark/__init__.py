"""nbspark: naive Bayes and n-gram density estimation by counting, on Apache Spark.

The pure modules (config, capabilities, text, corpora, events, model, backoff, nb, metrics,
reports, manifests, runstats) import no pyspark; the Spark side is the inputs, the counting
engines, the scorers and the two families' jobs (``backoff_jobs``, ``nb_jobs``).
"""

__version__ = "0.1.0"

from .backoff import Decision, predict
from .config import DEFAULT, ExperimentConfig, InputSpec, load_config
from .corpora import MalformedLine, Story, parse_ngram_line, parse_reuters_sgml
from .model import BackoffModel, build_model
from .text import tokenize


def __getattr__(name: str):
    # ``load`` needs numpy, scipy and pyarrow: imported on first use, not by every Spark worker
    # that unpickles a function of this package (each worker imports ``nbspark`` first)
    if name == "load":
        from .models import load

        return load
    raise AttributeError(f"module 'nbspark' has no attribute {name!r}")


__all__ = [
    "DEFAULT",
    "BackoffModel",
    "Decision",
    "ExperimentConfig",
    "InputSpec",
    "MalformedLine",
    "Story",
    "__version__",
    "build_model",
    "load",
    "load_config",
    "parse_ngram_line",
    "parse_reuters_sgml",
    "predict",
    "tokenize",
]
