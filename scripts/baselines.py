"""Benchmark baselines (not part of the library): a naive Bayes model as the dictionaries a
per-token loop scorer would use, and that loop. ``bench.py`` and ``bench_scorer.py`` time the
library's scorers against it."""

from __future__ import annotations

from collections.abc import Sequence


def loop_model(model) -> dict:
    """The model as the dictionaries a per-token loop scorer would use (benchmark baseline)."""
    inverse = {i: f for f, i in model.vocab.items()}
    return {
        "classes": model.classes,
        "prior": dict(zip(model.classes, model.class_log_prior.tolist())),
        "bias": dict(zip(model.classes, model.bias.tolist())),
        "logp": {
            c: {inverse[i]: float(model.weights[ci, i]) for i in range(model.weights.shape[1])}
            for ci, c in enumerate(model.classes)
        },
    }


def score_loop(tables: dict, tokens: Sequence[str], binary: bool = False) -> dict[str, float]:
    """Score one document with a per-token dictionary loop (what the dot product replaces)."""
    seen = set()
    scores = {}
    for c in tables["classes"]:
        logp = tables["logp"][c]
        total = tables["prior"][c] + tables["bias"][c]
        seen.clear()
        for t in tokens:
            if binary:
                if t in seen:
                    continue
                seen.add(t)
            w = logp.get(t)
            if w is not None:
                total += w
        scores[c] = total
    return scores
