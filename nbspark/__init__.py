"""nbspark: naive Bayes and n-gram density estimation by counting, on Apache Spark.

The pure modules (config, text, corpora, events, model, backoff, metrics) import no pyspark;
``session``, ``tables``, ``readers``, ``counting`` and ``pipeline`` are the Spark side.
"""

__version__ = "0.1.0"

from .backoff import Decision, predict
from .config import DEFAULT, ExperimentConfig, InputSpec, load_config
from .corpora import MalformedLine, Story, parse_ngram_line, parse_reuters_sgml
from .model import BackoffModel, build_model
from .text import tokenize

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
    "load_config",
    "parse_ngram_line",
    "parse_reuters_sgml",
    "predict",
    "tokenize",
]
