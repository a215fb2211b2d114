"""Metrics of a classification run, from counted ``(gold, predicted, subset)`` triples. Pure.

The Spark side groups the predictions by (gold, predicted, subset), collects that small
table and hands it here, so the maths is tested without a JVM.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["backoff_metrics", "format_level_table", "level_name"]


def backoff_metrics(
    triples: Iterable[tuple[str, str | None, str, int]],
    chain: Sequence[str],
    majority_label: str | None,
) -> dict:
    """Accuracy, the majority baseline and the per-level table.

    ``triples`` are ``(gold, predicted, subset that decided, number of examples)``.
    ``majority_label`` is the most frequent label in *training*; the baseline is the accuracy
    of always predicting it. ``levels`` has one entry per subset of ``chain`` (in order, ``""``
    shown as ``"∅"``) plus ``unseen`` when some example was decided nowhere.
    """
    examples = correct = baseline = 0
    gold_counts: dict[str, int] = {}
    levels = {subset: {"examples": 0, "correct": 0} for subset in chain}
    for gold, pred, subset, n in triples:
        examples += n
        gold_counts[gold] = gold_counts.get(gold, 0) + n
        level = levels.setdefault(subset, {"examples": 0, "correct": 0})
        level["examples"] += n
        if pred == gold:
            correct += n
            level["correct"] += n
        if gold == majority_label:
            baseline += n
    out_levels = []
    for subset, level in levels.items():
        out_levels.append(
            {
                "subset": subset,
                "name": level_name(subset),
                "examples": level["examples"],
                "correct": level["correct"],
                "accuracy": level["correct"] / level["examples"] if level["examples"] else None,
                "coverage": level["examples"] / examples if examples else None,
            }
        )
    return {
        "examples": examples,
        "correct": correct,
        "accuracy": correct / examples if examples else None,
        "majority_label": majority_label,
        "majority_baseline": baseline / examples if examples else None,
        "gold_labels": dict(sorted(gold_counts.items())),
        "levels": out_levels,
    }


def level_name(subset: str) -> str:
    return subset if subset else "∅"


def format_level_table(metrics: dict) -> str:
    """The per-level table as fixed-width text."""
    lines = [f"{'level':<8}{'examples':>10}{'correct':>10}{'accuracy':>10}{'coverage':>10}"]
    for level in metrics["levels"]:
        acc = "-" if level["accuracy"] is None else f"{level['accuracy']:.4f}"
        cov = "-" if level["coverage"] is None else f"{level['coverage']:.4f}"
        lines.append(f"{level['name']:<8}{level['examples']:>10}{level['correct']:>10}{acc:>10}{cov:>10}")
    acc = "-" if metrics["accuracy"] is None else f"{metrics['accuracy']:.4f}"
    lines.append(f"{'all':<8}{metrics['examples']:>10}{metrics['correct']:>10}{acc:>10}{'':>10}")
    return "\n".join(lines)

