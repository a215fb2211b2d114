"""Reports for people: each job's result (a manifest, metrics, a query answer, a curve) as the
text the command line prints and ``report.txt`` holds. Pure: no Spark, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from nbspark.inputs.decoding import BINARY_SIGN, UTF16_HINT
from nbspark.inputs.parsers import LINE_LAYOUTS
from nbspark.inputs.stats import REASON_HINTS, fields_hint, reason_said, where
from nbspark.report.metrics import format_level_table, level_name
from nbspark.storage.manifests import confusion_sets

__all__ = [
    "UNEXPLAINED",
    "binary_skipped",
    "cells_said",
    "class_sizes",
    "format_check_report",
    "format_classify_report",
    "format_curve",
    "format_nb_curve",
    "format_density_answer",
    "format_density_curve",
    "format_density_report",
    "format_density_train_report",
    "format_nb_train_report",
    "held_out",
    "malformed_lines",
    "malformed_reasons",
    "missing_cells",
    "near_unique_columns",
    "never_counted",
    "nothing_found",
    "stories",
    "undecodable",
    "format_query_report",
    "format_sets_table",
    "format_train_report",
]

#: Why no class can explain a document or row (``naive_bayes.model.unexplained``), as a report
#: and a warning say it.
UNEXPLAINED = (
    "every class has probability 0: nb.alpha = 0 gives a class a zero factor, or a value lies so far "
    "from every class's mean that its density is 0 in floating point"
)


def format_train_report(manifest: dict, out) -> str:
    stats = manifest["stats"]
    lines = [f"model written to {out} in {manifest['seconds']} s"]
    if "lines_read" in stats:
        lines.append(
            f"lines read: {stats['lines_read']:,}   malformed (skipped): {stats.get('malformed', 0):,}   "
            f"not centred on the confusion set: {stats.get('lines_not_in_confusion_set', 0):,}"
        )
        if reasons := malformed_reasons(stats):
            lines.append("malformed by reason: " + reasons)
    shown = {
        "lines_read",
        "malformed",
        "lines_not_in_confusion_set",
        "stories_read",
        "stories_used",
        *STORIES_LEFT_OUT,
        "examples",
        "weight",
        "decode_replacements",
    }
    other = {k: v for k, v in stats.items() if k not in shown and not k.startswith("malformed.")}
    if other:
        lines.append("also: " + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in other.items()))
    lines += stories(stats, "train")
    lines.append(f"examples: {stats.get('examples', 0):,}   total weight: {stats.get('weight', 0):,}")
    lines += never_counted(manifest)
    lines += undecodable(stats)
    lines.append(
        "distinct events per subset: "
        + ", ".join(f"{level_name(k)}={v:,}" for k, v in manifest["distinct_events"].items())
    )
    if manifest["malformed_examples"]:
        lines.append("first malformed lines:")
        lines += malformed_lines(manifest["malformed_examples"])
    return "\n".join(lines)


def never_counted(manifest: dict) -> list[str]:
    """The line naming the confusion-set words that centre no training example (so are never
    predicted), when the model has their prior counts (its chain ends in the empty context)."""
    seen = manifest.get("label_counts")
    words = dict.fromkeys(w for s in confusion_sets(manifest["config"]) for w in s)
    never = [w for w in words if w not in seen] if seen else []
    return (
        [f"never counted (no example centred on them, so never predicted): {', '.join(never)}"]
        if never
        else []
    )


def format_check_report(metrics: dict) -> str:
    """The check job's report: files and flags (by deciding level), binary files skipped, and the
    undecodable bytes."""
    levels = ", ".join(f"{level_name(k)}={v:,}" for k, v in sorted(metrics.get("flags_by_level", {}).items()))
    files, flags = metrics.get("files", 0), metrics.get("flags", 0)
    head = f"checked {files:,} file{'' if files == 1 else 's'}: {flags:,} flag{'' if flags == 1 else 's'}" + (
        f" (by level: {levels})" if levels else ""
    )
    return "\n".join([head, *binary_skipped(metrics), *undecodable(metrics)])


def held_out(stats: dict, part: str) -> list[str]:
    """The line on the records a seeded hold-out left to the other part (``part``: train or test),
    if any: a count short of the lines read says why."""
    n = stats.get("held_out")
    return [f"held out: {n:,} records ({part}.holdout's other part, not in {part}.splits)"] if n else []


#: Why a Reuters story was not used, as the reports say it: the statistics that
#: ``naive_bayes.inputs`` and ``backoff.inputs`` count a story under, its first reason only.
STORIES_LEFT_OUT = {
    "stories_outside_modapte": "outside ModApte (not TRAIN or TEST, TOPICS not YES, or no topic)",
    "stories_in_other_splits": "in splits other than {part}.splits",
    "stories_off_top10": "first topic not among the top ten (nb.labels = top10)",
}


def stories(stats: dict, part: str) -> list[str]:
    """The line on the Reuters stories read and used (``part``: train or test), and why the others
    were left out, if a Reuters input was read: a count of documents far short of the 21,578
    stories says where the rest went."""
    if "stories_read" not in stats:
        return []
    left = [f"{stats[k]:,} {why.format(part=part)}" for k, why in STORIES_LEFT_OUT.items() if stats.get(k)]
    return [
        f"stories read: {stats['stories_read']:,}   used: {stats.get('stories_used', 0):,}"
        + (f"   left out: {'; '.join(left)}" if left else "")
    ]


def binary_skipped(stats: dict) -> list[str]:
    """The line on the binary files that were not read (``inputs.files.decode_text``), if any."""
    n = stats.get("binary_files")
    return [f"binary files skipped: {n:,} (a NUL byte near the start: {BINARY_SIGN})"] if n else []


def malformed_reasons(stats: dict) -> str:
    """``reason=count, …`` of a run's ``malformed.REASON`` statistics, by reason."""
    return ", ".join(
        f"{k.split('.', 1)[1]}={v:,}" for k, v in sorted(stats.items()) if k.startswith("malformed.")
    )


def malformed_lines(bad: list[dict], width: int | None = None) -> list[str]:
    """One indented line per first malformed record: where it is, why, and the line (cut to ``width``)."""
    return [
        f"  {where(b['source'], b['offset'], b.get('line_number'))} ({reason_said(b['reason'])}): "
        f"{b['line'][:width]!r}"
        for b in bad
    ]


def format_nb_train_report(manifest: dict, out) -> str:
    stats, bad = manifest["stats"], manifest["malformed_examples"]
    lines = [
        f"{manifest['model']} naive Bayes model written to {out} in {manifest['seconds']} s",
        f"documents: {stats['documents']:,}   classes: {len(manifest['label_counts'])}   features: "
        f"{manifest['features']:,}   "
        f"malformed (skipped): {stats.get('malformed', 0):,}   empty documents: "
        f"{stats.get('empty_documents', 0):,}",
    ]
    lines += held_out(stats, "train") + stories(stats, "train")
    if left_out := stats.get("documents_not_sampled"):
        lines.append(f"a sample of {manifest['config']['sample']:g}: {left_out:,} documents left out")
    lines.append(class_sizes(manifest["label_counts"]))
    columns = manifest.get("columns") or {}
    if columns:  # a table: which columns are numbers (inferred ones too), and the cells left out
        lines.append(
            "   ".join(f"{kind} columns: {_some(columns[kind])}" for kind in ("numeric", "categorical"))
        )
        lines += missing_cells(stats)
    lines += undecodable(stats)
    lines += malformed_lines(bad)
    return "\n".join(lines)


#: a column of at least this many values, more than half as many as the rows, is nearly a value per row
NEAR_UNIQUE_VALUES = 20


def near_unique_columns(values: Mapping[str, int], rows: float) -> list[str]:
    """The columns whose cells are nearly all different (``NEAR_UNIQUE_VALUES`` values or more, and
    more than half as many as the rows): an id, or a measurement written as numbers, over which a
    density of whole rows says little (most rows alone in their value; an unseen value, probability 0
    under ``m = 0``); the train report names them, to be left out or binned first."""
    return [c for c, n in values.items() if n >= NEAR_UNIQUE_VALUES and n > rows / 2]


def format_density_train_report(manifest: dict, out) -> str:
    stats, density = manifest["stats"], manifest["config"]["density"]
    weight = (
        f"   weight: {density['weight_column']} (total {manifest['total']:g})"
        if density["weight_column"]
        else ""
    )
    return "\n".join(
        [
            f"density model ({density['model']}, m = {density['m']:g}) written to {out} in "
            f"{manifest['seconds']} s",
            f"rows: {stats['rows']:,}   distinct rows: {manifest['distinct_rows']:,}   malformed (skipped): "
            f"{stats.get('malformed', 0):,}{weight}",
            "columns: "
            + ", ".join(f"{c} ({n} value{'s' if n != 1 else ''})" for c, n in manifest["values"].items()),
        ]
        + [
            f"note: {c} has {manifest['values'][c]:,} values in {stats['rows']:,} rows, nearly one a row: a "
            "density of rows says little over it (an unseen value has probability 0 at m = 0); leave it out "
            f"(density.columns) or cut it into bins (density.bins, e.g. {c}=quantiles:4)"
            for c in near_unique_columns(manifest["values"], stats["rows"])
        ]
    )


def format_density_report(metrics: dict) -> str:
    """A density classify run's report: the held-out log-likelihood per row (per unit of weight) of
    the joint and the naive estimator, with the rows of probability 0 said plainly."""
    lines = [
        f"rows scored: {metrics['rows']:,} (weight {metrics['weight']:g})   columns: "
        f"{', '.join(metrics['columns'])}   m = {metrics['m']:g}",
        "held-out log-likelihood per row (higher is better):",
    ]
    for estimator in ("joint", "naive"):
        e = metrics[estimator]
        ll = e["held_out_log_likelihood"]
        line = (
            f"  {estimator:<5}  {ll if isinstance(ll, str) else format(ll, '.4f') if ll is not None else '-'}"
        )
        if e["zero_probability_rows"]:
            seen = e["log_likelihood_of_seen_rows"]
            line += (
                f"   {e['zero_probability_rows']:,} row(s) have probability 0 under the {estimator} model "
                f"(a {'row' if estimator == 'joint' else 'value'} never seen in training"
                f"{', with m = 0' if not metrics['m'] else ''}), so the "
                f"log-likelihood is -inf; over the other rows: "
                f"{format(seen, '.4f') if seen is not None else '-'}"
                + ("; smooth with density.m > 0" if not metrics["m"] else "")
            )
        lines.append(line)
    if "accuracy" in metrics:
        accuracy = metrics["accuracy"]
        lines.append(
            f"classifying {metrics['target']} by the {metrics['classifier']} density: accuracy "
            f"{'-' if accuracy is None else format(accuracy, '.4f')} ({metrics['correct']:,} of "
            f"{metrics['classified']:,} rows)"
        )
    return "\n".join(lines)


def format_density_answer(answer: dict) -> str:
    """``P(A=1, B=0 | C=1) = 0.25 (joint, m = 0)``: a density query's answer on one line."""

    binned = answer.get("bins") or {}  # a binned column's number, with the bin it counts in
    given = f" | {cells_said(answer['given'], binned)}" if answer["given"] else ""
    p = answer["probability"]
    unseen = answer.get("unseen") or {}
    never = f"; never counted in their column: {cells_said(unseen, binned)}" if unseen else ""
    return (
        f"P({cells_said(answer['values'], binned)}{given}) = {p:.6g}   "
        f"({answer['model']}, m = {answer['m']:g}{never})"
    )


def cells_said(values: Mapping, binned: Mapping = {}) -> str:
    """``A=1, B=""``: a density's cells (column -> cell) as every answer, refusal and line names
    them. A cell is text as the table writes it: bare, JSON-quoted where it could be misread (empty,
    spaces at an end, a comma, ``=``, a quote, a parenthesis); ``(empty)`` is a missing cell
    (None), a cell ``binned`` (column -> number -> bin) gets the bin it counts in."""

    def said(v) -> str:
        if v is None:
            return "(empty)"
        plain = v and v == v.strip() and not any(c in v for c in ',="()')
        return v if plain else json.dumps(v, ensure_ascii=False)

    return ", ".join(
        f"{k}={said(v)}" + (f" (in {binned[k][v]})" if v in binned.get(k, {}) else "")
        for k, v in values.items()
    )


def _some(names: list, shown: int = 12) -> str:
    """Names for a report line: all of a few, else the first ``shown`` and how many in all."""
    if len(names) > shown:
        return ", ".join(names[:shown]) + f", … ({len(names)} in all: manifest.json lists them)"
    return ", ".join(names) or "-"


def class_sizes(label_counts: dict, shown: int = 12) -> str:
    """The documents of each class, largest first; of many classes the largest and smallest six,
    where a header line read as a document (a class ``label`` of 1) or a stray label shows."""
    ranked = [f"{k}={v:,}" for k, v in sorted(label_counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    if len(ranked) > shown:
        ranked = ranked[: shown // 2] + [f"… {len(ranked) - shown} more …"] + ranked[-(shown // 2) :]
    return "documents per class: " + ", ".join(ranked)


def nothing_found(stats: dict, bad: list[dict], fmt: str | None = None) -> str:
    """What an input of format ``fmt`` that gave a run nothing to count or score held, for its
    one-line refusal (``; …`` clauses, '' for none): its malformed records by reason and where the
    first is, what a reason among them means (``inputs.stats.REASON_HINTS``; for lines without their
    format's fields, ``inputs.stats.fields_hint``), its bytes that were not UTF-8, and NUL
    characters in its lines, which a UTF-16 file (Windows' "Unicode") read as UTF-8 gives every
    other byte."""
    said = []
    if fmt in LINE_LAYOUTS and not stats.get("lines_read"):
        said.append("its files are empty")
    elif stats.get("blank_lines") and stats["blank_lines"] == stats.get("lines_read"):
        said.append(f"its {stats['blank_lines']:,} lines are all blank")
    if stats.get("malformed"):
        first = bad[0] if bad else None
        at = (
            f", the first at {where(first['source'], first['offset'], first.get('line_number'))}"
            if first
            else ""
        )
        said.append(f"{stats['malformed']:,} malformed records skipped ({malformed_reasons(stats)}{at})")
    # what a reason means (REASON_HINTS); a NUL's is said below, where no reason names it too
    said += [h for r, h in REASON_HINTS.items() if r != "nul" and stats.get(f"malformed.{r}")]
    if stats.get("malformed.fields") and fmt is not None:
        first_fields = next((b["line"] for b in bad if b["reason"] == "fields"), None)
        said += [h for h in [fields_hint(fmt, first_fields)] if h]
    if stats.get("decode_replacements"):
        said.append(f"{stats['decode_replacements']:,} undecodable bytes read as U+FFFD")
    if stats.get("malformed.nul") or (bad and "\x00" in bad[0]["line"]):
        said.append(f"its lines hold NUL characters: {UTF16_HINT}")
    return "".join(f"; {s}" for s in said)


def undecodable(stats: dict) -> list[str]:
    """The line on the input's bytes that were not UTF-8 (each sequence read as U+FFFD), if any."""
    n = stats.get("decode_replacements")
    return [f"undecodable bytes replaced by U+FFFD: {n:,} (is the input UTF-8?)"] if n else []


def missing_cells(stats: dict) -> list[str]:
    """The line on a table's cells left out of their rows (missing or non-finite), if any."""
    if not (stats.get("missing_values") or stats.get("non_finite_values")):
        return []
    return [
        f"missing cells (feature left out): {stats.get('missing_values', 0):,}   non-finite: "
        f"{stats.get('non_finite_values', 0):,}"
    ]


def format_sets_table(rows: list[dict]) -> str:
    lines = [f"{'confusion set':<26}{'examples':>10}{'accuracy':>10}{'majority':>10}  majority word"]
    for r in rows:
        acc = "-" if r["accuracy"] is None else f"{r['accuracy']:.4f}"
        base = "-" if r["majority_baseline"] is None else f"{r['majority_baseline']:.4f}"
        lines.append(f"{'/'.join(r['set']):<26}{r['examples']:>10}{acc:>10}{base:>10}  {r['majority_label']}")
    return "\n".join(lines)


def format_classify_report(metrics: dict) -> str:
    acc = metrics["accuracy"]
    base = metrics["majority_baseline"]
    lines = [
        f"examples: {metrics['examples']:,} ({metrics['distinct_examples']:,} distinct)   "
        + "gold: "
        + ", ".join(f"{k}={v}" for k, v in metrics["gold_labels"].items()),
        f"accuracy: {acc:.4f}   majority baseline ({metrics['majority_label']}): {base:.4f}"
        if acc is not None
        else "accuracy: - (no test examples)",
        "",
        format_level_table(metrics),
    ]
    if metrics.get("sets"):
        lines += ["", format_sets_table(metrics["sets"])]
    if metrics["worked_examples"]:
        lines += ["", "worked examples:"]
        for w in metrics["worked_examples"]:
            unseen = f"; unseen at {', '.join(map(level_name, w['unseen_at']))}" if w["unseen_at"] else ""
            lines.append(
                f"  {w['pattern']:<36} -> {w['predicted']} ({w['probability']:.4f}) "
                f'at {level_name(w["subset"])} ("{w["context_used"]}"{unseen})'
            )
    return "\n".join(lines)


def format_query_report(result: dict) -> str:
    shown = " ".join(f"{c}={v}" for c, v in result["bindings"].items())
    fixed = (
        ", ".join(f"{c}={v}" for c, v in result["bindings"].items() if v not in ("_", "*")) or "nothing fixed"
    )
    varying = [c for c, v in result["bindings"].items() if v == "_"]
    lines = [
        f"query: {shown}   (from {result['source']}; * = summed over)",
        f"matching count: {result['matching_count']:,} of {result['all_count']:,}   share: "
        f"{result['share']:.6f}",
    ]
    if result["top"]:
        lines.append(
            f"top {len(result['top'])} of {result['distinct_bindings']:,} bindings of {' '.join(varying)}:"
        )
        lines.append(f"  {'binding':<40}{'count':>14}  P({','.join(varying)} | {fixed})")
        for item in result["top"]:
            binding = " ".join(f"{c}={v!r}" if v == "" else f"{c}={v}" for c, v in item["values"].items())
            lines.append(f"  {binding:<40}{item['count']:>14,}  {item['probability']:.6f}")
    stats = result.get("input_stats") or {}
    if stats.get("malformed"):
        lines.append(f"malformed lines skipped: {stats['malformed']:,}")
    if result.get("note"):
        lines.append(f"note: {result['note']}")
    return "\n".join(lines)


def format_density_curve(rows: list[dict]) -> str:
    """A density learning curve as a table: per fraction, the training rows and, for the joint and
    the naive estimator, the held-out log-likelihood per row and the test rows of probability 0."""

    def ll(value) -> str:
        return value if isinstance(value, str) else "-" if value is None else f"{value:.4f}"

    accuracy = "accuracy" in rows[0]["joint"]
    head = f"{'fraction':>9}{'rows':>10}{'distinct':>10}{'joint':>10}{'(zero)':>8}{'naive':>10}{'(zero)':>8}"
    lines = [head + (f"{'acc joint':>11}{'acc naive':>11}" if accuracy else "")]
    for r in rows:
        j, n = r["joint"], r["naive"]
        lines.append(
            f"{r['fraction']:>9}{r['training_rows']:>10,}{r['distinct_rows']:>10,}"
            f"{ll(j['held_out_log_likelihood']):>10}{j['zero_probability_rows']:>8,}"
            f"{ll(n['held_out_log_likelihood']):>10}{n['zero_probability_rows']:>8,}"
            + (f"{j['accuracy']:>11.4f}{n['accuracy']:>11.4f}" if accuracy else "")
        )
    return "\n".join(lines + ["(held-out log-likelihood per row, nats; (zero): test rows of probability 0)"])


def format_curve(rows: list[dict]) -> str:
    names = [lv["name"] for lv in rows[0]["levels"]]
    head = f"{'fraction':>9}{'counted':>14}{'accuracy':>10}{'baseline':>10}" + "".join(
        f"{level_name(n) if n else '∅':>8}" for n in names
    )
    lines = [head + "   (coverage by level)"]
    for r in rows:
        cov = "".join(f"{(lv['coverage'] or 0):>8.3f}" for lv in r["levels"])
        lines.append(
            f"{r['fraction']:>9}{r['weight']:>14,}{r['accuracy']:>10.4f}{r['majority_baseline']:>10.4f}{cov}"
        )
    return "\n".join(lines)


def format_nb_curve(rows: list[dict]) -> str:
    """A naive Bayes learning curve's rows as a table (``naive_bayes.curves.nb_learning_curve``)."""
    lines = [
        f"{'fraction':>9}{'documents':>12}{'accuracy':>10}{'macro-F1':>10}{'log-loss':>10}{'baseline':>10}"
    ]
    for r in rows:
        loss = "-" if r["log_loss"] is None else f"{r['log_loss']:.4f}"
        lines.append(
            f"{r['fraction']:>9}{r['documents']:>12,}{r['accuracy']:>10.4f}{r['macro_f1']:>10.4f}{loss:>10}"
            f"{r['majority_baseline']:>10.4f}"
        )
    return "\n".join(lines)
