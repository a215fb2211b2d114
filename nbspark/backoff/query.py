"""Query the joint distribution: ``P(varying positions | fixed positions)`` from a backoff model's
full-context count table or straight from a raw n-gram file (``jobs/query.py``).

Record shapes: full-context count rows (or n-gram lines -> ``(*tokens, count)`` plus statistics
records) -> filter the fixed positions -> ``groupBy`` the varying ones -> the top bindings.
"""

from __future__ import annotations

from nbspark.backoff.events import context_letters
from nbspark.backoff.jobs import BACKOFF, load_backoff_manifest
from nbspark.errors import InputError, OutputError
from nbspark.inputs.files import ngram_lines
from nbspark.inputs.parsers import MalformedLine, blank_line, parse_ngram_line
from nbspark.inputs.resolve import Inputs
from nbspark.inputs.stats import PartitionStats, is_stat, run_failfast, split_stats
from nbspark.settings.capabilities import QUERY_TOP
from nbspark.spine.counting import count_events
from nbspark.spine.training import read_counts
from nbspark.storage.locations import Location, location

__all__ = ["answer_rows", "query", "query_model"]


def _ngram_rows(records, width, fold_case, mode, keep_bad):
    """(file, offset, line) -> ``(*tokens, count)`` rows, then the partition's statistics records."""
    stats = PartitionStats(keep_bad, mode)
    for source, offset, line in records:
        stats.add("lines_read")
        if blank_line(line):
            stats.add("blank_lines")
            continue
        try:
            tokens, count = parse_ngram_line(line, width)
        except MalformedLine as exc:
            stats.bad_record(source, offset, exc.reason, line)
            continue
        if fold_case:
            tokens = tuple(t.lower() for t in tokens)
        yield (*tokens, count)
    yield from stats.records()


def _model_table(spark, model_dir: Location):
    """The joint table ``(A, …, E, count)`` of a model's full-context counts; its letters and
    whether its words are lower-cased."""
    from pyspark.sql import functions as F

    manifest = load_backoff_manifest(model_dir)
    letters = manifest["letters"]
    full = context_letters(letters)
    if full not in manifest["subsets"]:
        raise OutputError(f"{model_dir}: the model has no full-context table ({full})")
    counts = read_counts(spark, model_dir, BACKOFF, manifest)
    centre = letters[len(letters) // 2]
    cols = [F.col("label" if c == centre else c.lower()).alias(c) for c in letters]
    return (
        counts.where(counts.subset == full).select(*cols, "count"),
        letters,
        manifest["config"]["lowercase"],
    )


def query(
    spark,
    bindings: dict[str, str],
    top: int = QUERY_TOP,
    model_dir: Location | None = None,
    ngram_inputs: Inputs | None = None,
    fold_case: bool = False,
    mode: str = "permissive",
    keep_bad: int = 5,
) -> dict:
    """Answer ``P(varying positions | fixed positions)`` from a model or a raw n-gram file.

    ``bindings`` maps a position letter to a word (must match) or ``"_"`` (varies); positions
    not named are summed over. Returns the total matching count, its share of all n-grams and
    the ``top`` bindings of the ``_`` positions with their conditional probabilities, and a
    ``note`` when a word can never match (an upper-case word against lower-cased counts).
    """

    stats: dict = {}
    mixed = None
    if model_dir is not None:
        model_dir = location(model_dir)
        table, letters, lowercase = _model_table(spark, model_dir)
        source = str(model_dir)
    else:
        width, letters, lowercase = 5, "ABCDE", fold_case
        mixed = (
            ngram_lines(spark.sparkContext, list(ngram_inputs.files))
            .mapPartitions(lambda it: _ngram_rows(it, width, fold_case, mode, keep_bad))
            .cache()
        )
        stats, bad = split_stats(
            run_failfast(lambda: count_events(mixed.filter(is_stat)).collect(), mode), keep_bad
        )
        stats["malformed_examples"] = bad
        table = spark.createDataFrame(
            mixed.filter(lambda r: not is_stat(r)),
            schema=", ".join(f"{c} STRING" for c in letters) + ", count BIGINT",
        )
        source = str(ngram_inputs.root)
    try:
        result = _answer(table, bindings, letters, top)
    finally:
        if mixed is not None:
            mixed.unpersist()
    return _finished(result, source, stats, bindings, lowercase)


def query_model(model_dir, bindings: dict[str, str], top: int = QUERY_TOP) -> dict:
    """``query``'s answer from a model, in this process (no Spark, no JVM for a local model): its
    full-context table read by pyarrow, checked as every reader checks it (``storage.counts``), and
    answered by ``answer_rows``. What ``nbspark query --model`` runs."""
    import pyarrow.compute as pc

    from nbspark.backoff.events import count_ddl
    from nbspark.storage.counts import read_count_table
    from nbspark.storage.manifests import BACKOFF_KIND, load_manifest

    model_dir = location(model_dir)
    manifest = load_manifest(model_dir, BACKOFF_KIND)
    letters = manifest["letters"]
    full = context_letters(letters)
    if full not in manifest["subsets"]:
        raise OutputError(f"{model_dir}: the model has no full-context table ({full})")
    table = read_count_table(model_dir, count_ddl(letters), manifest)
    table = table.filter(pc.equal(table.column("subset"), full))
    centre = letters[len(letters) // 2]
    columns = [table.column("label" if c == centre else c.lower()).to_pylist() for c in letters]
    rows = zip(*columns, table.column("count").to_pylist())
    result = answer_rows(rows, bindings, letters, top)
    return _finished(result, str(model_dir), {}, bindings, manifest["config"]["lowercase"])


def _finished(result: dict, source: str, stats: dict, bindings: dict, lowercase: bool) -> dict:
    result.update(source=source, input_stats=stats)
    folded = [w for w in bindings.values() if w != "_" and w != w.lower()] if lowercase else []
    spaced = [w for w in bindings.values() if any(c.isspace() for c in w)]  # tokens are cut at spaces
    notes = [
        f"the words here are lower-cased, so {', '.join(map(repr, folded))} cannot match; "
        f"ask for {', '.join(repr(w.lower()) for w in folded)}"
    ] * bool(folded) + [
        f"a position holds one word, so {', '.join(map(repr, spaced))} (a space in it) cannot match; "
        "give each word its own position (--A would --B not)"
    ] * bool(spaced)
    if notes:
        result["note"] = "; ".join(notes)
    return result


def _unknown(bindings: dict, letters: str) -> None:
    unknown = set(bindings) - set(letters)
    if unknown:
        raise InputError(
            f"unknown position(s) {', '.join(sorted(unknown))}; positions are {', '.join(letters)}"
        )


def answer_rows(rows, bindings: dict[str, str], letters: str, top: int) -> dict:
    """``_answer`` over rows ``(*tokens, count)`` in this process: the same fields, the bindings
    ranked alike (count down, then the values up). The in-process twin of ``_answer``'s SQL, which
    an n-gram file larger than one process needs."""
    from collections import Counter

    _unknown(bindings, letters)
    fixed = [(i, bindings[c]) for i, c in enumerate(letters) if c in bindings and bindings[c] != "_"]
    varying = [c for c in letters if bindings.get(c) == "_"]
    at = [letters.index(c) for c in varying]
    grand = total = 0
    grouped: Counter = Counter()
    for row in rows:
        grand += row[-1]
        if all(row[i] == w for i, w in fixed):
            total += row[-1]
            if varying:
                grouped[tuple(row[i] for i in at)] += row[-1]
    best = sorted(grouped.items(), key=lambda kv: (-kv[1], kv[0]))[:top] if varying and total else None
    return _result(bindings, letters, total, grand, varying, best, len(grouped))


def _result(bindings, letters: str, total, grand, varying, best, distinct: int) -> dict:
    """The answer: the bindings asked, the matching and the whole count, and the ``best`` bindings
    ``(values, count)`` of the varying positions (None: nothing varies or nothing matched)."""
    result = {
        "bindings": {c: bindings.get(c, "*") for c in letters},
        "matching_count": int(total),
        "all_count": int(grand),
        "share": total / grand if grand else 0.0,
        "top": [],
    }
    if best is not None:
        result["top"] = [
            {"values": dict(zip(varying, values)), "count": int(n), "probability": n / total}
            for values, n in best
        ]
        result["distinct_bindings"] = distinct
    return result


def _answer(table, bindings: dict[str, str], letters: str, top: int) -> dict:
    from pyspark.sql import functions as F

    _unknown(bindings, letters)
    varying = [c for c in letters if bindings.get(c) == "_"]
    cond = F.lit(True)
    for c in letters:
        if c in bindings and bindings[c] != "_":
            cond = cond & (F.col(c) == bindings[c])
    grand = table.agg(F.sum("count")).first()[0] or 0
    matching = table.where(cond)
    total = matching.agg(F.sum("count")).first()[0] or 0
    if not (varying and total):
        return _result(bindings, letters, total, grand, varying, None, 0)
    grouped = matching.groupBy(*varying).agg(F.sum("count").alias("n"))
    rows = grouped.orderBy(F.col("n").desc(), *[F.col(c).asc() for c in varying]).limit(top).collect()
    best = [(tuple(r[c] for c in varying), r["n"]) for r in rows]
    return _result(bindings, letters, total, grand, varying, best, grouped.count())
