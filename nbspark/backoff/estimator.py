"""A backoff estimator in scikit-learn's shape (``nbspark.Backoff``): made from its settings, fitted
on windows in memory (the context around a confusion-set word, and the word used there), cloned by
scikit-learn's model selection (``cross_val_score``, ``GridSearchCV`` over the chain), and saved as
an nbspark model directory that ``nbspark check``, ``nbspark serve``, the pyspark.ml stage and
``nbspark.load`` read (``spine.estimator``).

``fit`` makes an empty model of its settings (``BackoffPredictor``, what ``nbspark.load`` gives) and
counts the windows into it with ``update``, training's rule for an n-gram
(``backoff.events.example_events``). No Spark, no JVM.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nbspark.backoff.predictor import BackoffPredictor
from nbspark.spine.estimator import CLASSIFIER, CountingEstimator

__all__ = ["Backoff"]

#: The lecture's chain, the config's default.
CHAIN = ("ABDE", "ABD", "BD", "B", "")


class Backoff(*CLASSIFIER, CountingEstimator):
    """Cohen's backoff by counting, trained in this process: ``Backoff(confusion_set=("affect",
    "effect")).fit(windows, words)``, where a window is ``"would not _ the outcome"`` (a string split
    on white space, or a sequence of tokens; ``width`` of them) and its word the one used at the
    centre; then ``predict``, ``predict_proba``, ``predict_log_proba``, ``score`` (accuracy; an
    unseen context counts as wrong), ``explain``, ``check`` and ``flags`` (texts, as ``nbspark
    check``), ``partial_fit`` and ``classes_``, as ``nbspark.load`` gives them; ``save(DIR)`` writes
    the model directory. Without ``y`` each window's centre is its word. ``sample_weight`` is each
    window's count (whole numbers, as an n-gram file's). The settings are the config's top-level keys
    of the same names: ``confusion_set``, ``confusion_sets`` (several sets: a list of lists),
    ``width``, ``lowercase`` and ``backoff`` (the chain)."""

    PARAMS = {
        "confusion_set": ("affect", "effect"),
        "confusion_sets": (),
        "width": 5,
        "lowercase": True,
        "backoff": CHAIN,
    }
    SECTION, KIND = "", "backoff"

    def __init__(
        self,
        confusion_set: Sequence[str] = ("affect", "effect"),
        confusion_sets: Sequence[Sequence[str]] = (),
        width: int = 5,
        lowercase: bool = True,
        backoff: Sequence[str] = CHAIN,
    ):
        self.confusion_set = confusion_set
        self.confusion_sets = confusion_sets
        self.width = width
        self.lowercase = lowercase
        self.backoff = backoff

    def fit(self, X, y=None, sample_weight=None) -> Backoff:
        """Count the windows ``X`` with the words used at their centres (``y``, or the centres) into
        a new model, what was fitted before forgotten."""
        model = self._empty()
        self.model_ = model.update(_windows(model, X, y, first=True), weights=sample_weight)
        return self

    def partial_fit(self, X, y=None, sample_weight=None) -> Backoff:
        """Count more windows into the fitted model (the first call makes an empty one of the
        settings), by ``update``'s rule."""
        first = "model_" not in self.__dict__
        model = self._empty() if first else self.model_
        self.model_ = model.update(_windows(model, X, y, first), weights=sample_weight)
        return self

    def _empty(self) -> BackoffPredictor:
        """A model of the settings that has counted nothing."""
        from nbspark.backoff.events import count_ddl
        from nbspark.storage.manifests import BACKOFF_KIND, manifest_header

        cfg = self._config()
        manifest = {
            **manifest_header(BACKOFF_KIND, cfg),
            "letters": cfg.letters,
            "subsets": list(cfg.counted_subsets),
            "count_schema": count_ddl(cfg.letters),
        }
        return BackoffPredictor(manifest, [])

    def predict(self, X) -> np.ndarray:
        return self._fitted().predict(X)

    def predict_proba(self, X) -> np.ndarray:
        return self._fitted().predict_proba(X)

    def predict_log_proba(self, X) -> np.ndarray:
        return self._fitted().predict_log_proba(X)

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy on the windows ``X`` against the words ``y`` (scikit-learn's ``score``), each
        window weighing its ``sample_weight`` where given."""
        from nbspark.spine.predictor import accuracy

        return accuracy(self.predict(X), y, "window", sample_weight)

    def explain(self, X) -> list[dict]:
        return self._fitted().explain(X)

    def check(self, text: str, factor: float | None = None, rule: str | None = None) -> list[dict]:
        return self._fitted().check(text, factor, rule)

    def flags(self, text: str, factor: float | None = None, rule: str | None = None) -> list[dict]:
        return self._fitted().flags(text, factor, rule)


def _windows(model: BackoffPredictor, X, y, first: bool) -> list:
    """The windows to count: ``X``'s, each centre the word of ``y`` where given (a word of the
    model's confusion sets, else a ``ValueError`` naming it; the window's own centre ``_`` or a set
    word, as ``predict`` takes it: ``BackoffPredictor.window``); none, for the ``first`` counts of a
    model, is refused (a model of nothing: no prior to back off to, and nothing to save)."""
    from nbspark.spine.predictor import as_batch

    X = as_batch(X, "windows", "fit")
    if first and not X:
        raise ValueError("fit takes at least one window: a model of no window has nothing to back off to")
    if y is None:
        return X
    words = as_batch(y, "words", "fit")
    if len(words) != len(X):
        raise ValueError(f"fit takes one word per window: {len(X)} windows, {len(words)} words")
    out = []
    for i, (item, word) in enumerate(zip(X, words)):
        used = word.lower() if isinstance(word, str) and model.lowercase else word
        if used not in model.classes_:
            raise ValueError(
                f"y[{i}] is {word!r}; the words used are words of the model's confusion sets "
                f"({model.words_shown()})"
            )
        tokens = list(model.window(item))  # a window as predict takes it: '_' or a set word in the centre
        tokens[model.width // 2] = used
        out.append(tokens)
    return out
