"""The checker's evaluation, LanguageTool's protocol (its ``ConfusionRuleEvaluator``). Pure.

Every occurrence of a confusion-set word in clean text is checked twice per other word of its
set: as written, where a flag is a false alarm, and with the word swapped for the other one,
where a flag is a catch. For the direction "``x`` written for ``y``" (y the word in the clean
text, x the swap), over the ``n`` occurrences of y and for each factor:

* ``false_alarms``: occurrences of y flagged as written; ``p = 1 − false_alarms / n`` (the share
  of correct uses left alone);
* ``catches``: occurrences flagged once swapped to x; ``r = catches / n`` (the share of swapped
  words caught); ``precision = catches / (catches + false_alarms)`` (flags that are right, on
  equal numbers of correct and swapped words).

A context no level has seen is never flagged, nor one decided with fewer than two context words
below the rule's ``thin_factor`` (``backoff.rules.flag_ratio``, the checker's own test). The
verdicts of all factors come from one ratio per occurrence and rule, so a table of many factors
costs one pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from nbspark.backoff.rules import flag_ratio, judge
from nbspark.inputs.tokens import centred_windows, tokenize
from nbspark.settings.check import Rule

__all__ = ["FACTORS", "clean_documents", "evaluate", "format_evaluation", "plot_pr", "pooled"]

FACTORS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1000.0, 1e4, 1e5, 1e7)


def clean_documents(fmt: str, path) -> Iterator[tuple[str, str | list[str]]]:
    """``(document id, text or tokens)`` of clean text: ``reuters`` (a directory of ``.sgm`` or one
    file: story bodies), ``brown`` (NLTK's ``brown.zip``: its words) or ``text`` (files, one
    document each, ``.gz`` read transparently, binary files left out)."""
    from nbspark.inputs.files import decode_text, list_files, reuters_files
    from nbspark.inputs.parsers import decode_reuters, parse_brown_zip, parse_reuters_sgml
    from nbspark.storage.locations import location

    root = location(path)
    for f in reuters_files(root) if fmt == "reuters" else list_files(root):
        if fmt == "reuters":
            for story in parse_reuters_sgml(decode_reuters(f.read_bytes(), str(f))):
                yield f"reuters:{story.newid}", story.body
        elif fmt == "brown":
            yield from ((f"brown:{i}", words) for i, words in parse_brown_zip(f.read_bytes(), str(f)))
        elif fmt == "text" and not (read := decode_text(f.read_bytes(), str(f))).binary:
            yield str(f), read.text
        elif fmt not in ("reuters", "brown", "text"):
            raise ValueError(f"clean text format must be reuters, brown or text, got {fmt!r}")


def evaluate(
    model,
    documents: Iterable[tuple[str, str | Sequence[str]]],
    rules: Mapping[str, Rule],
    factors: Sequence[float] = FACTORS,
) -> list[dict]:
    """The evaluation table of a backoff model (``backoff.predictor.BackoffPredictor``) on clean ``documents``
    (texts are tokenized as the model was; token lists are lower-cased as it was): one row per
    rule, direction and factor."""
    centre = model.width // 2
    ratios: dict[tuple, tuple[list, list]] = {}
    for _doc, content in documents:
        tokens = (
            tokenize(content, model.lowercase)
            if isinstance(content, str)
            else [t.lower() if model.lowercase else t for t in content]
        )
        for _, window in centred_windows(tokens, model._set_of, model.width):
            written = window[centre]
            words = sorted(model._set_of[written])
            levels = model.levels(window)
            for name, rule in rules.items():
                as_written = flag_ratio(rule, judge(rule, levels, written, words))
                for swap in words:
                    if swap != written:
                        correct, swapped = ratios.setdefault((name, " ".join(words), swap, written), ([], []))
                        correct.append(as_written)
                        swapped.append(flag_ratio(rule, judge(rule, levels, swap, words)))
    rows = []
    for (name, words, swap, intended), (correct, swapped) in sorted(ratios.items()):
        n = len(correct)
        for f in factors:
            fa, caught = sum(r >= f for r in correct), sum(r >= f for r in swapped)
            rows.append(_row(name, words, swap, intended, f, n, fa, caught))
    return rows


def _row(rule, words, written, intended, factor, n: int, fa: int, caught: int) -> dict:
    """One line of the table: a rule, a direction, a factor, and what it flagged."""
    return {
        "rule": rule,
        "set": words,
        "written": written,
        "intended": intended,
        "factor": factor,
        "occurrences": n,
        "false_alarms": fa,
        "catches": caught,
        "p": 1 - fa / n,
        "r": caught / n,
        "precision": caught / (caught + fa) if caught + fa else None,
    }


def pooled(rows: list[dict]) -> list[dict]:
    """The rows of every set and direction added up, per rule and factor (``written`` and
    ``intended`` are ``"all"``): what a writer sees over a whole text."""
    sums: dict[tuple, list[int]] = {}
    for r in rows:
        acc = sums.setdefault((r["rule"], r["factor"]), [0, 0, 0])
        acc[0] += r["occurrences"]
        acc[1] += r["false_alarms"]
        acc[2] += r["catches"]
    return [_row(rule, "all", "all", "all", f, n, fa, caught) for (rule, f), (n, fa, caught) in sums.items()]


def format_evaluation(rows: list[dict], title: str) -> str:
    """LanguageTool's table: per rule and direction, a line per factor, then every direction
    pooled (``pooled``). ``prec`` is the share of flags that are right (``-`` when none)."""
    out = [
        title,
        f"{'rule':<12} {'direction':<26} {'factor':>8} {'n':>6} {'false':>6} {'caught':>6} {'p':>7} {'r':>7} "
        f"{'prec':>7}",
    ]
    for r in [*rows, *pooled(rows)]:
        direction = "all, pooled" if r["written"] == "all" else f"{r['written']} for {r['intended']}"
        precision = "-" if r["precision"] is None else f"{r['precision']:.4f}"
        out.append(
            f"{r['rule']:<12} {direction:<26} {r['factor']:>8g} {r['occurrences']:>6} {r['false_alarms']:>6} "
            f"{r['catches']:>6} {r['p']:>7.4f} {r['r']:>7.4f} {precision:>7}"
        )
    return "\n".join(out)


#: panels per row of ``pr.png``
PANELS_PER_ROW = 4


def plot_pr(rows: list[dict], path, title: str) -> None:
    """``r`` against ``p``, one panel per direction and one curve per rule (a point per factor), in
    rows of ``PANELS_PER_ROW``, then every direction pooled. ``r`` runs from 0 to 1; ``p`` from a
    little under the lowest point to 1, so that points all at p = 1 stay readable."""
    from nbspark.report.plots import require_matplotlib, save_png

    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [*rows, *pooled(rows)]
    directions = sorted({(r["written"], r["intended"]) for r in rows if r["written"] != "all"})
    directions.append(("all", "all"))
    across = min(PANELS_PER_ROW, len(directions))
    down = -(-len(directions) // across)
    fig, axes = plt.subplots(down, across, figsize=(4.6 * across, 3.9 * down), squeeze=False)
    low = min(r["p"] for r in rows)
    for ax, (written, intended) in zip(axes.flat, directions):
        for rule in sorted({r["rule"] for r in rows}):
            mine = [
                r for r in rows if r["rule"] == rule and (r["written"], r["intended"]) == (written, intended)
            ]
            ax.plot([r["p"] for r in mine], [r["r"] for r in mine], marker="o", label=rule)
        ax.set_xlim(max(0.0, low - (1 - low) * 0.1 - 0.005), 1.0 + (1 - low) * 0.05 + 0.0025)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("p: correct uses left alone")
        ax.set_ylabel("r: swapped words caught")
        pooled_title = "every direction, pooled"
        ax.set_title(
            pooled_title if written == "all" else f"'{written}' written for '{intended}'", fontsize=10
        )
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower left", fontsize=8)
    for ax in list(axes.flat)[len(directions) :]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / (3.9 * down)))  # room for the title above the panels
    save_png(fig, path)
