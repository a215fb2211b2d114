"""What a model holds, in one summary: ``nbspark show`` prints it, ``/v1/models`` serves its first
part. Plain Python over a loaded model (``nbspark.load``), no Spark.

``summary`` is what a client needs to call the model (its kind, classes, version, when it was
trained, a table's columns); ``describe`` adds what a user checks before trusting it: the settings it
scores with, what it was trained on, its counts, and, for a naive Bayes text model, the tokens that
speak most for each class.
"""

from __future__ import annotations

import numpy as np

from nbspark.backoff.predictor import BackoffPredictor
from nbspark.density.predictor import DensityPredictor
from nbspark.inputs.bins import quantiles_settled
from nbspark.storage.manifests import model_version

__all__ = ["describe", "indicative_tokens", "summary"]


def _model(model):
    """A loaded model, or a fitted estimator's (``nbspark.NaiveBayes``, ``Backoff``, ``Density``)."""
    return model.__dict__.get("model_", model)


def _family(model) -> str:
    if isinstance(model, BackoffPredictor):
        return "backoff"
    return "density" if isinstance(model, DensityPredictor) else "naive_bayes"


def _plain(value):
    """A value as JSON writes it: tuples as lists, numpy's numbers as Python's."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    return value.item() if hasattr(value, "item") else value


def _count(value) -> int | float:
    """A count (scikit-learn's are floats) as an int where it is whole."""
    value = float(value)
    return int(value) if value.is_integer() else value


def summary(model) -> dict:
    """``kind`` (``backoff``, ``density``, or the naive Bayes model: ``multinomial``, …), ``classes``
    (class numbers as numbers), ``version``, ``trained`` (when its last version was counted) and, for
    a table or density model, ``columns``: what a row given as an array holds, in order."""
    model = _model(model)
    manifest = model.manifest
    family = _family(model)
    out = {
        "kind": family if family != "naive_bayes" else model.kind,
        "classes": _plain(list(model.classes_)),
        "version": model_version(manifest),
        "trained": (manifest.get("updates") or [{}])[-1].get("created", manifest.get("created")),
    }
    columns = getattr(model, "feature_names_in_", None)  # AttributeError (text models): None
    if columns is not None:
        out["columns"] = _plain(list(columns))
    return out


def indicative_tokens(model, top: int = 10) -> dict:
    """Per class, the ``top`` tokens of a naive Bayes text model whose ``log P(token | class)`` most
    exceeds the same token's largest under another class (its ``feature_log_prob_``; a complement
    model's by the multinomial rule over its ``feature_count_``), each with that log ratio, highest
    first (ties: the more counted, then the token). Empty for a model of one class."""
    from nbspark.naive_bayes.model import multinomial_log_prob

    model = _model(model)
    if model.kind == "complement":
        counts = model.feature_count_
        with np.errstate(divide="ignore"):
            log_p = multinomial_log_prob(
                counts, counts.sum(axis=1, keepdims=True), model.alpha, counts.shape[1], np.log
            )
    else:
        log_p = model.feature_log_prob_
    n_classes = log_p.shape[0]
    if n_classes < 2:
        return {}
    names, counts, out = model.get_feature_names_out(), model.feature_count_, {}
    for c, label in enumerate(model.classes_):
        others = np.delete(log_p, c, axis=0).max(axis=0)
        with np.errstate(invalid="ignore"):
            ratio = log_p[c] - others
        ratio = np.where(np.isnan(ratio), -np.inf, ratio)
        order = np.lexsort((names.astype(str), -counts[c], -ratio))[:top]
        out[_plain(label)] = [
            {"token": names[i], "log_ratio": float(ratio[i]), "count": _count(counts[c, i])}
            for i in order
            if counts[c, i] > 0
        ]
    return out


def describe(model, top: int = 10) -> dict:
    """``summary``, with ``family``, ``settings`` (``get_params()``), ``created`` and ``nbspark_version``
    (of its first version), ``updates`` (each version's or run's inputs: format, root and number of
    files, and when), ``stats`` (its statistics, every version's added), ``malformed_examples`` (the
    first records skipped, as the train report named them), and by family: a naive Bayes
    model's ``examples`` per class and ``features`` (tokens, or table columns), with
    ``indicative_tokens`` (``top`` per class) for a text model; a backoff model's ``confusion_sets``,
    ``chain`` and ``distinct_events`` (count rows per context of the chain); a density model's
    number of ``values`` per column, ``distinct_rows``, ``total`` weight, ``bins`` (the binned
    columns' edges) and ``quantiles`` (the K of those that ``quantiles:K`` settled). Counts come
    from the model read, every version summed: exact, where a manifest's over a base and its deltas
    are bounds.
    ``model``: a loaded model, or a fitted estimator."""
    model = _model(model)
    manifest = model.manifest
    family = _family(model)
    out = {"family": family, **summary(model), "settings": _plain(model.get_params())}
    out["created"], out["nbspark_version"] = manifest.get("created"), manifest.get("nbspark_version")
    out["updates"] = [
        {
            "created": u.get("created"),
            "format": (u.get("inputs") or {}).get("format"),
            "root": (u.get("inputs") or {}).get("root"),
            "files": len((u.get("inputs") or {}).get("files") or ()),
        }
        for u in manifest.get("updates") or ()
    ]
    out["stats"] = {**manifest.get("stats", {}), **model.whole_stats()}
    out["malformed_examples"] = manifest.get("malformed_examples") or []  # the first ones skipped
    if family == "naive_bayes":
        out["examples"] = dict(zip(out["classes"], map(_count, model.class_count_)))
        if model.text:
            out["features"] = len(model.vocabulary_)
            if top > 0:
                out["indicative_tokens"] = indicative_tokens(model, top)
        else:
            out["features"] = len(model.feature_names_in_)
    elif family == "backoff":  # counted from the model read, not the manifest's (a sum over versions)
        out["confusion_sets"] = _plain(model.sets)
        out["chain"] = _plain(model.chain)
        tables = zip(model.model.chain, model.model.tables)
        out["distinct_events"] = {s: sum(len(ranked) for ranked in t.values()) for s, t in tables}
    else:
        density = model.density
        out["values"] = {c: len(seen) for c, seen in zip(density.columns, density.marginals)}
        out["distinct_rows"], out["total"] = len(density.joint), density.total
        out["bins"] = {c: list(edges) for c, edges in density.bins.items()}  # the binned columns' edges
        out["quantiles"] = quantiles_settled(manifest["config"]["density"].get("bins", ()))  # K, where asked
    return out
