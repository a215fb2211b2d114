"""The backoff model: log-probability tables built from count rows. Pure.

Counting is kept apart from estimation (as in scikit-learn's naive Bayes): the Parquet count
tables hold raw integer counts, and ``build_model`` turns the rows of the subsets in a backoff
chain into, for each subset, a table ``context -> ((label, log P(label | context)), ...)``
with labels ranked best first. The estimate is the maximum-likelihood one,
``P(label | context) = count(context, label) / count(context)``: Cohen's experiment decides at
the first subset whose context was seen, so no smoothing is needed to decide, and the reported
probability is the one on the course slide.

Ties are broken deterministically: higher count first, then the label in string order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "BackoffModel",
    "add_counts",
    "build_model",
    "count_tables",
    "model_from_counts",
    "rank",
    "table_fields",
]

Ranked = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class BackoffModel:
    """``tables[i]`` belongs to ``chain[i]``; keys are the context values in ``chain[i]``'s order."""

    letters: str
    chain: tuple[str, ...]
    tables: tuple[dict[tuple[str, ...], Ranked], ...]

    def size(self) -> int:
        return sum(len(t) for t in self.tables)


def rank(label_counts: dict[str, int]) -> Ranked:
    """Labels with their log-probabilities, best first (ties: label order)."""
    total = sum(label_counts.values())
    ordered = sorted(label_counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return tuple((label, math.log(count / total)) for label, count in ordered if count > 0)


def count_tables(
    rows: Iterable[Sequence], letters: str, chain: Sequence[str]
) -> dict[str, dict[tuple, dict[str, int]]]:
    """``subset -> context values -> label -> count`` from count rows ``(subset, *context values,
    label, count)``, for the subsets of ``chain`` (other rows are ignored; ``add_counts``)."""
    tables: dict[str, dict[tuple, dict[str, int]]] = {s: {} for s in chain}
    add_counts(tables, rows, letters, chain)
    return tables


def add_counts(
    tables: dict[str, dict[tuple, dict[str, int]]],
    rows: Iterable[Sequence],
    letters: str,
    chain: Sequence[str],
) -> dict[str, set]:
    """Count rows ``(subset, *context values, label, count)`` into ``count_tables``' ``tables``, in
    place, rows of one key summed; the contexts touched, by subset. Context values are read from
    the columns of the subset's positions, in position order (``backoff.events.count_columns``). A
    context's label counts that were there before are replaced by a copy, never changed: counts
    handed out (``explain``'s) stay as they were."""
    centre = len(letters) // 2
    context = letters[:centre] + letters[centre + 1 :]
    wanted = {subset: [context.index(c) for c in subset] for subset in chain}
    touched: dict[str, set] = {s: set() for s in chain}
    for row in rows:
        subset = row[0]
        if subset not in wanted:
            continue
        values = row[1 : 1 + len(context)]
        key = tuple(values[i] for i in wanted[subset])
        label, count = row[1 + len(context)], row[2 + len(context)]
        table, seen = tables[subset], touched[subset]
        if key in seen:
            per_label = table[key]
        else:
            per_label = table[key] = dict(table.get(key, ()))
            seen.add(key)
        per_label[label] = per_label.get(label, 0) + int(count)
    return touched


def build_model(rows: Iterable[Sequence], letters: str, chain: Sequence[str]) -> BackoffModel:
    """Build the model from count rows ``(subset, *context values, label, count)`` (``count_tables``)."""
    return model_from_counts(count_tables(rows, letters, chain), letters, chain)


def model_from_counts(
    tables: dict[str, dict[tuple, dict[str, int]]],
    letters: str,
    chain: Sequence[str],
    before: BackoffModel | None = None,
    touched: dict[str, set] | None = None,
) -> BackoffModel:
    """The model of ``count_tables``' output: each context's labels ranked with their log-probabilities
    (``rank``). With ``before``, the model of the same tables before ``add_counts`` counted more into
    them, and the contexts it ``touched``: ``before``'s rankings, those contexts ranked again (a
    copy: ``before`` stays as it was)."""
    if before is None or touched is None:
        ranked = tuple({key: rank(dist) for key, dist in tables[s].items()} for s in chain)
    else:
        ranked = tuple(
            {**old, **{key: rank(tables[s][key]) for key in touched[s]}}
            for s, old in zip(chain, before.tables)
        )
    return BackoffModel(letters, tuple(chain), ranked)


def table_fields(table) -> dict:
    """The manifest's fields of a backoff count table in pyarrow (a model's, a delta's, a compacted
    version's): its rows per subset (``distinct_events``) and the prior's label counts."""
    subsets, labels, counts = (table.column(c).to_pylist() for c in ("subset", "label", "count"))
    distinct: dict = {}
    for subset in subsets:
        distinct[subset] = distinct.get(subset, 0) + 1
    return {
        "distinct_events": dict(sorted(distinct.items())),
        "label_counts": dict(sorted((y, n) for s, y, n in zip(subsets, labels, counts) if s == "")),
    }
