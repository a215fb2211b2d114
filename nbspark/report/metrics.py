"""Metrics of a classification run, from counted ``(gold, predicted, subset)`` triples. Pure.

The Spark side groups the predictions by (gold, predicted, subset), collects that small
table and hands it here, so the maths is tested without a JVM.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: Log-loss clips probabilities to [LOG_EPS, 1] before the log (scikit-learn's log_loss clips too).
LOG_EPS = 1e-15

__all__ = [
    "backoff_metrics",
    "classification_metrics",
    "format_classification_report",
    "flat_metrics",
    "format_level_table",
    "level_name",
    "LOG_EPS",
    "pr_curve",
]


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


def classification_metrics(
    pairs: Iterable[tuple[Sequence[str], Sequence[str], int]], classes: Sequence[str] = ()
) -> dict:
    """Accuracy, per-class precision/recall/F1, micro and macro F1, and the confusion table.

    ``pairs`` are ``(gold labels, predicted labels, number of documents)``. A document is right
    (``accuracy``) when its predicted set equals its gold set; per-class counts treat each label
    as a yes/no decision, as scikit-learn's multi-label ``f1_score`` does. ``macro_f1`` averages
    over the labels that occur in gold or predictions (scikit-learn's default). The confusion
    table (gold -> predicted -> documents, each sorted by label) is given when every document has
    one gold and one predicted label.
    """
    docs = right = 0
    tp: dict[str, int] = {}
    fp: dict[str, int] = {}
    fn: dict[str, int] = {}
    confusion: dict[str, dict[str, int]] = {}
    single = True
    for gold, pred, n in pairs:
        gold, pred = set(gold), {p for p in pred if p is not None}
        docs += n
        right += n * (gold == pred)
        for label in gold & pred:
            tp[label] = tp.get(label, 0) + n
        for label in pred - gold:
            fp[label] = fp.get(label, 0) + n
        for label in gold - pred:
            fn[label] = fn.get(label, 0) + n
        if len(gold) == 1 and len(pred) <= 1:
            g = next(iter(gold))
            p = next(iter(pred)) if pred else "(none)"
            row = confusion.setdefault(g, {})
            row[p] = row.get(p, 0) + n
        else:
            single = False
    labels = sorted(set(tp) | set(fp) | set(fn))
    per_class = {}
    for label in labels:
        t, f_p, f_n = tp.get(label, 0), fp.get(label, 0), fn.get(label, 0)
        precision = t / (t + f_p) if t + f_p else 0.0
        recall = t / (t + f_n) if t + f_n else 0.0
        f1 = 2 * t / (2 * t + f_p + f_n) if t + f_p + f_n else 0.0
        per_class[label] = {"precision": precision, "recall": recall, "f1": f1, "support": t + f_n}
    all_tp, all_fp, all_fn = sum(tp.values()), sum(fp.values()), sum(fn.values())
    return {
        "documents": docs,
        "accuracy": right / docs if docs else None,
        "micro_f1": 2 * all_tp / (2 * all_tp + all_fp + all_fn) if all_tp + all_fp + all_fn else None,
        "macro_f1": sum(c["f1"] for c in per_class.values()) / len(per_class) if per_class else None,
        "per_class": per_class,
        # gold, then predicted, sorted: the same table (metrics.json, metrics.csv) whatever order the
        # predictions were counted in (in process or by Spark, on any number of partitions)
        "confusion": {g: dict(sorted(row.items())) for g, row in sorted(confusion.items())}
        if single
        else None,
        "unseen_gold_labels": sorted(set(fn) - set(classes)) if classes else [],
    }


def format_classification_report(metrics: dict, max_classes: int = 20) -> str:
    """Accuracy, F1s, the per-class table (largest support first) and a small confusion table."""

    def num(x):
        return "-" if x is None else f"{x:.4f}"

    lines = [
        f"documents: {metrics['documents']:,}   accuracy: {num(metrics['accuracy'])}   "
        f"micro-F1: {num(metrics['micro_f1'])}   macro-F1: {num(metrics['macro_f1'])}",
        "",
        f"{'class':<16}{'precision':>10}{'recall':>10}{'f1':>10}{'support':>10}",
    ]
    ranked = sorted(metrics["per_class"].items(), key=lambda kv: (-kv[1]["support"], kv[0]))
    for label, c in ranked[:max_classes]:
        lines.append(
            f"{label[:15]:<16}{c['precision']:>10.4f}{c['recall']:>10.4f}{c['f1']:>10.4f}{c['support']:>10}"
        )
    if len(ranked) > max_classes:
        lines.append(f"... {len(ranked) - max_classes} more classes in metrics.json")
    confusion = metrics.get("confusion")
    if confusion and len(confusion) <= 12:
        cols = sorted({p for row in confusion.values() for p in row} | set(confusion))
        lines += [
            "",
            "confusion (rows: gold, columns: predicted)",
            " " * 16 + "".join(f"{c[:9]:>10}" for c in cols),
        ]
        for g in sorted(confusion):
            lines.append(f"{g[:15]:<16}" + "".join(f"{confusion[g].get(c, 0):>10}" for c in cols))
    if metrics.get("log_loss") is not None:
        lines.append(f"log-loss: {metrics['log_loss']:.4f}")
    if metrics.get("pr_curve"):
        pr = metrics["pr_curve"]
        lines.append(
            f"positive class {pr['positive_label']!r}: average precision {num(pr['average_precision'])}; "
            f"at the decision threshold {pr['decision_threshold']}: precision "
            f"{num(pr['precision_at_threshold'])}, "
            f"recall {num(pr['recall_at_threshold'])} (pr.png, pr.json)"
        )
    if metrics.get("unseen_gold_labels"):
        lines.append(
            "gold labels never seen in training (scored as errors): "
            + ", ".join(metrics["unseen_gold_labels"])
        )
    return "\n".join(lines)


def pr_curve(scored: Iterable[tuple[float, bool]], threshold: float) -> dict:
    """Precision and recall of "positive when the score is >= t" for every distinct score t, and of
    the decision "positive when the score is > ``threshold``", from ``(P(positive), is positive)`` pairs;
    ``average_precision`` is
    Σ (R_k − R_{k−1}) P_k over the thresholds, as scikit-learn's."""
    pairs = sorted(scored, key=lambda x: -x[0])
    positives = sum(1 for _, y in pairs if y)
    points, tp, fp, i = [], 0, 0, 0
    while i < len(pairs):
        score = pairs[i][0]
        while i < len(pairs) and pairs[i][0] == score:
            tp, fp, i = tp + pairs[i][1], fp + (not pairs[i][1]), i + 1
        points.append((score, tp / (tp + fp), tp / positives if positives else 0.0))
    ap, last_recall = 0.0, 0.0
    for _, precision, recall in points:
        ap, last_recall = ap + (recall - last_recall) * precision, recall
    above = [(p, y) for p, y in pairs if p > threshold]
    hit = sum(1 for _, y in above if y)
    return {
        "thresholds": [p[0] for p in points],
        "precision": [p[1] for p in points],
        "recall": [p[2] for p in points],
        "average_precision": ap if positives else None,
        "decision_threshold": threshold,
        "precision_at_threshold": hit / len(above) if above else None,
        "recall_at_threshold": hit / positives if positives else None,
    }


def flat_metrics(metrics: dict) -> str:
    """``metrics`` as a CSV of ``metric,value`` rows (``metrics.csv`` beside ``metrics.json``), for
    ``pandas.read_csv`` and spreadsheets: nested names joined with ``.`` as ``pandas.json_normalize``
    joins them (``per_class.spam.f1``), a list written as its JSON text, a missing value empty."""
    import csv
    import io
    import json

    rows: list[tuple[str, object]] = []

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict) and value:
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, (list, tuple, dict)):
            rows.append((prefix, json.dumps(value, ensure_ascii=False)))
        else:
            rows.append((prefix, "" if value is None else value))

    walk("", metrics)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("metric", "value"))
    writer.writerows(rows)
    return out.getvalue()
