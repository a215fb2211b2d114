"""Backoff prediction over context subsets. Pure.

``predict(model, window)`` walks the model's chain (default ABDE -> ABD -> BD -> B -> "") and
decides at the first subset whose context values were seen in training, returning the most
probable label there and its probability. It does *not* mix levels: like stupid backoff, the
walk picks one estimate, and the probability returned is the conditional probability at the
level that decided, not a probability of the whole backoff model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from nbspark.backoff.model import BackoffModel

__all__ = ["UNSEEN", "Decision", "parse_pattern", "predict"]

#: ``Decision.subset`` when no level of the chain has seen the context (only possible when
#: the chain does not end with the empty subset "").
UNSEEN = "unseen"


class Decision(NamedTuple):
    label: str | None
    probability: float
    subset: str


def predict(model: BackoffModel, window: Sequence[str], candidates: frozenset[str] | None = None) -> Decision:
    """Decide the label of ``window`` (its centre is ignored) by walking the backoff chain.

    With ``candidates`` (the example's confusion set, when one model holds several), only
    those labels compete: a level decides when it has seen the context with one of them, and
    the probability is renormalised over them.
    """
    letters = model.letters
    for subset, table in zip(model.chain, model.tables):
        ranked = table.get(tuple(window[letters.index(c)] for c in subset))
        if not ranked:
            continue
        if candidates is None:
            label, logp = ranked[0]
            return Decision(label, math.exp(logp), subset)
        kept = [(label, math.exp(logp)) for label, logp in ranked if label in candidates]
        if kept:
            return Decision(kept[0][0], kept[0][1] / sum(p for _, p in kept), subset)
    return Decision(None, 0.0, UNSEEN)


def parse_pattern(pattern: str, width: int) -> tuple[str, ...]:
    """``"the cumulative _ of the"`` -> a window of ``width`` tokens (the ``_`` kept as centre)."""
    tokens = tuple(pattern.split())
    if len(tokens) != width or tokens[width // 2] != "_":
        raise ValueError(f"a worked example needs {width} tokens with '_' in the middle, got {pattern!r}")
    return tokens
