"""Alternatives to Cohen's fixed backoff chain, for comparison on held-out data. Pure.

All work from the same count rows as ``backoff.model.build_model``; ``CountTables`` keeps raw counts
per subset and context, so each strategy can look at totals:

* ``chain``: Cohen's walk, deciding at the first subset whose context was seen (=
``backoff.predict.predict``);
* ``threshold``: the same walk, but a level decides only when its context was seen at least
  ``k`` times (a count threshold before trusting a level);
* ``naive_bayes``: P(C) times the product over context positions of P(X_i | C), add-one per
  position, using the single-position subsets (A, B, D, E);
* ``ordered``: a chain of all context subsets, ordered by their accuracy on a development set
  (tuned on held-out data), then the empty context.

Ties go to the label that sorts first, as everywhere in nbspark.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations

__all__ = ["CountTables", "all_subsets", "evaluate", "order_by_dev_accuracy"]


def all_subsets(context: str) -> list[str]:
    """Every non-empty subset of the context letters, largest first (``ABDE`` … ``E``)."""
    return ["".join(c) for n in range(len(context), 0, -1) for c in combinations(context, n)]


class CountTables:
    def __init__(self, rows: Iterable[Sequence], letters: str):
        self.letters = letters
        centre = len(letters) // 2
        self.context = letters[:centre] + letters[centre + 1 :]
        self.tables: dict[str, dict[tuple, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
        for row in rows:
            subset = row[0]
            values = row[1 : 1 + len(self.context)]
            key = tuple(values[self.context.index(c)] for c in subset)
            label, count = row[1 + len(self.context)], int(row[2 + len(self.context)])
            dist = self.tables[subset][key]
            dist[label] = dist.get(label, 0) + count
        self.prior = self.tables[""][()] if "" in self.tables else {}
        self.labels = sorted(self.prior)

    def lookup(self, subset: str, window: Sequence[str]) -> dict[str, int] | None:
        return self.tables[subset].get(tuple(window[self.letters.index(c)] for c in subset))

    @staticmethod
    def best(dist: dict[str, int]) -> str:
        return min(dist, key=lambda label: (-dist[label], label))

    def chain(self, window, chain: Sequence[str], k: int = 1) -> tuple[str, str]:
        """(label, deciding subset) of the walk; a level needs a context count of at least ``k``."""
        for subset in chain:
            dist = self.lookup(subset, window)
            if dist and (subset == "" or sum(dist.values()) >= k):
                return self.best(dist), subset
        return self.best(self.prior), ""

    def naive_bayes(self, window) -> str:
        """argmax_c log P(c) + Σ_i log P(x_i | c), add-one over each position's values."""
        total = sum(self.prior.values())
        scores = {}
        for label in self.labels:
            n_c = self.prior[label]
            score = math.log(n_c / total)
            for c in self.context:
                seen = self.lookup(c, window) or {}
                score += math.log((seen.get(label, 0) + 1) / (n_c + len(self.tables[c])))
            scores[label] = score
        return max(self.labels, key=lambda label: (scores[label], [-ord(ch) for ch in label]))


def order_by_dev_accuracy(
    tables: CountTables, dev: Sequence[Sequence[str]], subsets: Sequence[str]
) -> list[str]:
    """Subsets ordered by accuracy on the dev windows they have seen (ties: more coverage)."""
    centre = len(tables.letters) // 2
    scored = []
    for subset in subsets:
        seen = right = 0
        for window in dev:
            dist = tables.lookup(subset, window)
            if dist:
                seen += 1
                right += tables.best(dist) == window[centre]
        scored.append((-(right / seen) if seen else 0.0, -seen, subset))
    return [s for _, _, s in sorted(scored)] + [""]


def evaluate(predict, windows: Sequence[Sequence[str]]) -> float:
    """Accuracy of ``predict(window) -> label`` over windows whose centre is the gold label."""
    if not windows:
        return float("nan")
    centre = len(windows[0]) // 2
    return sum(predict(w) == w[centre] for w in windows) / len(windows)
