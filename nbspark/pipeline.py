"""The jobs' bodies: train (count), classify (score with backoff) and query (the joint table).

Record shapes, stage by stage:

* train: lines ``(file, offset, text)`` or SGML files ``(file, bytes)``
  -> ``Example(source, window, weight)`` -> ``((subset, *context, label), weight)``
  -> reduceByKey -> ``counts/`` Parquet (``events.count_ddl``) + ``manifest.json``.
* classify: ``counts/`` -> ``BackoffModel`` (driver, small) -> broadcast;
  test ``Example`` -> ``mapPartitions(predict)`` -> ``predictions/`` Parquet
  (``PREDICTION_DDL``) -> ``metrics.json``, ``report.txt``.
* query: full-context count rows (or a raw n-gram file) -> filter fixed positions ->
  groupBy the varying positions -> top bindings.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .backoff import parse_pattern, predict
from .config import DataNotFound, ExperimentConfig, InputSpec, resolve_data_dir
from .corpora import (
    MalformedLine,
    decode_reuters,
    parse_brown_zip,
    parse_google_v2,
    parse_google_v3,
    parse_ngram_line,
    parse_reuters_sgml,
    strip_pos,
)
from .counting import MARK, STAT, PartitionStats, count_events, is_stat, split_stats
from .events import (
    Example,
    in_sample,
    context_letters,
    count_columns,
    count_ddl,
    example_events,
    ngram_example,
    story_examples,
    token_examples,
)
from .faults import maybe_inject
from .metrics import backoff_metrics, format_level_table, level_name
from .model import BackoffModel, build_model
from .readers import line_number, list_files, ngram_lines, reuters_files, sgml_texts
from .tables import OutputError, local_path, read_json, read_parquet_checked, staged_output, write_json

__all__ = [
    "MODEL_KIND",
    "SCHEMA_VERSION",
    "InputError",
    "Inputs",
    "classify",
    "load_model_manifest",
    "manifest_header",
    "merge_counts",
    "query",
    "resolve_input",
    "train",
]

MODEL_KIND = "nbspark.backoff-counts"
SCHEMA_VERSION = 1
FAILFAST_TAG = "NBSPARK-MALFORMED"


class InputError(Exception):
    """Bad or missing input; the message is one line meant for the user."""


@dataclass(frozen=True)
class Inputs:
    spec: InputSpec
    root: Path
    files: tuple[Path, ...] = field(default_factory=tuple)


def resolve_input(spec: InputSpec, data_dir: str | None) -> Inputs:
    """Find an input's files: absolute paths as given, relative ones under the data dir.

    ``sklearn`` inputs name a dataset that scikit-learn ships (``wine``), not a path.
    """
    if spec.format == "sklearn":
        return Inputs(spec, Path(f"sklearn:{spec.path}"), ())
    if Path(spec.path).is_absolute() or spec.path.startswith("file:"):
        root = local_path(spec.path)
        if not root.exists():
            raise InputError(f"{root}: input does not exist")
    else:
        try:
            root = resolve_data_dir(spec.path, data_dir) / spec.path
        except DataNotFound as exc:
            raise InputError(str(exc)) from None
    if spec.format == "parquet":
        return Inputs(spec, root, (root,))
    files = reuters_files(root) if spec.format in ("reuters", "reuters_topics") else list_files(root)
    if not files:
        raise InputError(f"{root}: no input files ({'*.sgm ' if spec.format.startswith('reuters') else ''}not starting with _ or .)")
    return Inputs(spec, root, tuple(files))


# ---------------------------------------------------------------- examples from inputs


def _ngram_partition(records, confusion, width, lowercase, mode, keep_bad):
    """(file, offset, line) -> Example, or stats records; failfast raises on the first bad line."""
    maybe_inject()
    stats = PartitionStats(keep_bad)
    for source, offset, line in records:
        stats.add("lines_read")
        if "\ufffd" in line:
            stats.add("decode_replacements", line.count("\ufffd"))
        try:
            example = ngram_example(line, f"{source}@{offset}", confusion, width, lowercase)
        except MalformedLine as exc:
            if mode == "failfast":
                raise ValueError(f"{FAILFAST_TAG}\t{source}\t{offset}\t{exc.reason}\t{line[:200]!r}") from None
            stats.bad_record(source, offset, exc.reason, line)
            continue
        if example is None:
            stats.add("lines_not_in_confusion_set")
            continue
        stats.add("examples")
        stats.add("weight", example.weight)
        yield example
    yield from stats.records()


def _google_partition(records, spec: InputSpec, confusion, width, lowercase, mode, keep_bad):
    """Google Books lines -> ``(("ngram", tokens), match count in the year range)``, filtered to
    the confusion set here, in the map, so only matching n-grams reach the shuffle."""
    maybe_inject()
    stats = PartitionStats(keep_bad)
    parse = parse_google_v2 if spec.format == "google_v2" else parse_google_v3
    strip = spec.pos == "strip"
    for source, offset, line in records:
        stats.add("lines_read")
        try:
            parsed = parse(line, width)
        except MalformedLine as exc:
            if mode == "failfast":
                raise ValueError(f"{FAILFAST_TAG}\t{source}\t{offset}\t{exc.reason}\t{line[:200]!r}") from None
            stats.bad_record(source, offset, exc.reason, line)
            continue
        tokens = parsed[0]
        if strip:
            tokens = tuple(strip_pos(t) for t in tokens)
            if None in tokens:
                stats.add("lines_with_pos_tag_tokens")
                continue
        if lowercase:
            tokens = tuple(t.lower() for t in tokens)
        if tokens[width // 2] not in confusion:
            stats.add("lines_not_in_confusion_set")
            continue
        if spec.format == "google_v2":
            years = [(parsed[1], parsed[2])]
        else:
            years = parsed[1]
        count = sum(c for year, c in years if spec.year_min <= year <= spec.year_max)
        if count:
            yield ("ngram", tokens), count
        else:
            stats.add("lines_outside_year_range")
    yield from stats.records()


def _min_count_partition(records, min_count, keep_bad):
    """Summed ``(("ngram", tokens), count)`` -> ``Example`` when count >= min_count; stats pass through."""
    stats = PartitionStats(keep_bad)
    for key, value in records:
        if key[0] != "ngram":
            yield key, value
            continue
        stats.add("ngrams")
        if value < min_count:
            stats.add("ngrams_below_min_count")
            continue
        stats.add("examples")
        stats.add("weight", value)
        yield Example("google", key[1], value)
    yield from stats.records()


def _brown_partition(records, confusion, width, lowercase, keep_bad):
    maybe_inject()
    stats = PartitionStats(keep_bad)
    for _source, data in records:
        for file_id, words in parse_brown_zip(data):
            stats.add("documents_read")
            stats.add("tokens", len(words))
            for example in token_examples(f"brown:{file_id}", words, confusion, width, lowercase):
                stats.add("examples")
                stats.add("weight", 1)
                yield example
    yield from stats.records()


def _reuters_partition(records, confusion, width, lowercase, splits, keep_bad):
    maybe_inject()
    stats = PartitionStats(keep_bad)
    for _source, data in records:
        for story in parse_reuters_sgml(decode_reuters(data)):
            stats.add("stories_read")
            if splits and story.lewissplit not in splits:
                continue
            stats.add("stories_used")
            if not story.body.strip():
                stats.add("empty_bodies")
            for example in story_examples(story, confusion, width, lowercase):
                stats.add("examples")
                stats.add("weight", example.weight)
                yield example
    yield from stats.records()


def examples_rdd(sc, inputs: Inputs, confusion, width: int, lowercase: bool, mode: str, keep_bad: int, partitions: int = 0):
    """RDD mixing ``Example`` records and statistics records (``counting.is_stat``).

    ``partitions`` > 0 spreads n-gram lines over that many partitions before parsing (a
    ``.gz`` file is one unsplittable partition otherwise).
    """
    confusion = frozenset(confusion)
    if inputs.spec.format in ("google_v2", "google_v3"):
        spec = inputs.spec
        lines = ngram_lines(sc, list(inputs.files))
        if partitions:
            lines = lines.repartition(partitions)
        summed = lines.mapPartitions(
            lambda it: _google_partition(it, spec, confusion, width, lowercase, mode, keep_bad)
        ).reduceByKey(lambda a, b: a + b, numPartitions=partitions or None)
        min_count = spec.min_count
        return summed.mapPartitions(lambda it: _min_count_partition(it, min_count, keep_bad))
    if inputs.spec.format == "brown":
        zips = sgml_texts(sc, list(inputs.files))
        return zips.mapPartitions(lambda it: _brown_partition(it, confusion, width, lowercase, keep_bad))
    if inputs.spec.format == "ngrams":
        lines = ngram_lines(sc, list(inputs.files))
        if partitions:
            lines = lines.repartition(partitions)
        return lines.mapPartitions(lambda it: _ngram_partition(it, confusion, width, lowercase, mode, keep_bad))
    splits = frozenset(inputs.spec.splits)
    texts = sgml_texts(sc, list(inputs.files))
    return texts.mapPartitions(lambda it: _reuters_partition(it, confusion, width, lowercase, splits, keep_bad))


def resolve_backoff_engine(cfg: ExperimentConfig, inputs: Inputs) -> str:
    """The counting engine of a backoff model: ``auto`` takes ``arrow`` for ``ngrams`` input in
    permissive mode without sampling (failfast stops at the first bad line, which the Python
    engines do in the job itself), else ``combine``."""
    arrow_ok = inputs.spec.format == "ngrams" and cfg.sample >= 1.0
    if cfg.engine == "auto":
        return "arrow" if arrow_ok and cfg.mode == "permissive" else "combine"
    if cfg.engine == "arrow" and not arrow_ok:
        raise InputError("engine arrow counts ngrams input without sampling; use engine combine for this config")
    if cfg.engine == "dataframe":
        raise InputError("engine dataframe counts naive Bayes text only; use arrow, combine or pairs")
    return cfg.engine


def _arrow_ngram_batches(batches, width, centres, lowercase, subsets, letters):
    """mapInArrow: the events of whole batches of n-gram lines (``arrow_text.ngram_events``),
    summed inside the task, then the task's statistics as rows ``(MARK + name, …, "", n)``."""
    from collections import Counter

    import pyarrow as pa

    from .arrow_text import PartialCounts, ngram_events, ngram_schema

    maybe_inject()
    names = count_columns(letters)
    partial = PartialCounts(names[:-1], "count")
    stats: Counter = Counter()
    for batch in batches:
        table, batch_stats = ngram_events(batch.column("value"), width, centres, lowercase, subsets, letters)
        stats.update(batch_stats)
        for summed in partial.add(table):
            yield from summed.to_batches()
    for summed in partial.flush():
        yield from summed.to_batches()
    if stats:
        rows = {name: [None] * len(stats) for name in names}
        rows["subset"] = [MARK + k for k in stats]
        rows["label"] = [""] * len(stats)
        rows["count"] = list(stats.values())
        yield from pa.table(rows, schema=ngram_schema(letters)).to_batches()


def arrow_ngram_counts(spark, inputs: Inputs, cfg: ExperimentConfig):
    """The arrow engine for ``ngrams`` input: Spark reads the lines, each Arrow batch is parsed
    and counted by pyarrow, partial counts are summed by ``groupBy``. The same table and
    statistics as the Python engines (tested); the first malformed lines are found afterwards,
    only when there are any (``first_malformed_lines``). Returns the count DataFrame, the
    cached aggregate (to unpersist) and the statistics."""
    from pyspark.sql import functions as F

    from .readers import hadoop_escape

    letters, names = cfg.letters, count_columns(cfg.letters)
    lines = spark.read.text([hadoop_escape(f"file://{f}") for f in inputs.files])
    if cfg.partitions:
        lines = lines.repartition(cfg.partitions)
    width, centres, lowercase, subsets = cfg.width, tuple(cfg.centres), cfg.lowercase, tuple(cfg.counted_subsets)
    partial = lines.mapInArrow(
        lambda it: _arrow_ngram_batches(it, width, centres, lowercase, subsets, letters), count_ddl(letters).replace(" NOT NULL", "")
    )
    agg = partial.groupBy(*names[:-1]).agg(F.sum("count").alias("count")).cache()
    try:
        marker = F.col("subset").startswith(MARK)
        stats = {r["subset"][1:]: r["count"] for r in agg.where(marker).collect()}
        counts = agg.where(~marker)
        return counts, agg, dict(sorted(stats.items()))
    except BaseException:
        agg.unpersist()
        raise


def first_malformed_lines(sc, files, parse, stats: dict, cfg: ExperimentConfig) -> list[dict]:
    """For the engines that only count malformed lines: the first ``max_bad_examples`` of them by
    file and byte offset, with line numbers, from a ``take`` over the lines that reads partitions
    only until it has found them (no scan when ``stats`` has no malformed line). In failfast mode
    the first one raises ``InputError``. ``parse(line)`` raises ``MalformedLine`` for a malformed line."""
    if not stats.get("malformed"):
        return []

    def malformed(record):
        source, offset, line = record
        try:
            parse(line)
        except MalformedLine as exc:
            return [{"source": source, "offset": offset, "reason": exc.reason, "line": line[:300]}]
        return []

    keep = 1 if cfg.mode == "failfast" else cfg.max_bad_examples
    found = sorted(ngram_lines(sc, list(files)).flatMap(malformed).take(keep) if keep else [], key=lambda b: (b["source"], b["offset"]))
    for item in found:
        item["line_number"] = line_number(item["source"], item["offset"])
    if found and cfg.mode == "failfast":
        first = found[0]
        where = f"{first['source']}:{first['line_number']}" if first["line_number"] else f"{first['source']} at byte {first['offset']}"
        raise InputError(f"{where}: malformed line ({first['reason']}): {first['line']!r}")
    return found


def _run_failfast(action):
    """Run a Spark action; turn a failfast task error into a one-line ``InputError``."""
    try:
        return action()
    except Exception as exc:  # Py4JJavaError / PythonException carry the worker's message
        text = str(exc)
        at = text.find(FAILFAST_TAG)
        if at < 0:
            raise
        _, source, offset, reason, line = text[at:].split("\n", 1)[0].split("\t", 4)
        number = line_number(source, int(offset))
        where = f"{source}:{number}" if number else f"{source} at byte {offset}"
        raise InputError(f"{where}: malformed line ({reason}): {line}") from None


# ---------------------------------------------------------------- train


def manifest_header(kind: str, version: int, cfg: ExperimentConfig) -> dict:
    """The fields every model manifest starts with: what it is, which version, when, and the config."""
    return {
        "kind": kind,
        "schema_version": version,
        "nbspark_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "config": cfg.to_dict(),
    }


def merge_counts(new, old, sums: list[str]):
    """Add two count tables: rows with equal keys (every column but ``sums``; NULLs equal) summed."""
    from pyspark.sql import functions as F

    keys = [c for c in new.columns if c not in sums]
    merged = new.unionByName(old).groupBy(*keys).agg(*[F.sum(c).alias(c) for c in sums])
    return merged.select(*new.columns)


def merged_manifest(old: dict | None, manifest: dict) -> dict:
    """The manifest of an updated model: statistics added, the inputs of every update listed."""
    if old is None:
        manifest["updates"] = [{"created": manifest["created"], "inputs": manifest["inputs"], "stats": manifest["stats"]}]
        return manifest
    stats = dict(old["stats"])
    for key, value in manifest["stats"].items():
        stats[key] = stats.get(key, 0) + value
    manifest["updates"] = old.get("updates", []) + [
        {"created": manifest["created"], "inputs": manifest["inputs"], "stats": manifest["stats"]}
    ]
    manifest["stats"] = dict(sorted(stats.items()))
    manifest["malformed_examples"] = (old.get("malformed_examples", []) + manifest["malformed_examples"])[:10]
    return manifest


def check_update(old: dict, cfg: ExperimentConfig, keys: tuple[str, ...]) -> None:
    """Refuse to add counts made with other settings to a model (``keys`` like ``"width"``, ``"nb.model"``)."""

    def setting(config: dict, key: str):
        value = config
        for part in key.split("."):
            value = value[part]
        return list(value) if isinstance(value, (list, tuple)) else value

    for key in keys:
        theirs, mine = setting(old["config"], key), setting(cfg.to_dict(), key)
        if theirs != mine:
            raise InputError(f"cannot update: the model was counted with {key} = {theirs!r}, this run has {mine!r}")


def train(spark, cfg: ExperimentConfig, inputs: Inputs, out: Path, log=print, update: bool = False) -> dict:
    """Count ``inputs`` into a model directory ``out`` (checked and staged); return the manifest.

    With ``update``, ``out`` is an existing model: the new counts are added to its tables
    (Cohen's streaming property: no recounting of the old data) and the model is replaced whole.
    """
    sc = spark.sparkContext
    started = time.time()
    letters, subsets = cfg.letters, cfg.counted_subsets
    old = None
    if update:
        old = load_model_manifest(out)
        check_update(old, cfg, ("confusion_set", "confusion_sets", "width", "lowercase", "sample", "sample_seed"))
        if list(subsets) != old["subsets"]:
            raise InputError(f"cannot update: the model counted subsets {old['subsets']}, this run counts {list(subsets)}")
    engine = resolve_backoff_engine(cfg, inputs)

    fraction, seed = cfg.sample, cfg.sample_seed

    def to_pairs(record):
        if is_stat(record):
            return [record]
        if fraction < 1.0 and not in_sample(record, seed, fraction):
            return [((STAT, "examples_not_sampled"), 1)]
        return example_events(record, subsets, letters)

    if engine == "arrow":
        counts, reduced, stats = arrow_ngram_counts(spark, inputs, cfg)
    else:
        mixed = examples_rdd(sc, inputs, cfg.centres, cfg.width, cfg.lowercase, cfg.mode, cfg.max_bad_examples, cfg.partitions)
        reduced = count_events(mixed.flatMap(to_pairs), cfg.partitions, engine).cache()
    try:
        if engine == "arrow":  # counted first; the bad lines are named afterwards
            width = cfg.width
            bad = first_malformed_lines(sc, inputs.files, lambda line: parse_ngram_line(line, width), stats, cfg)
        else:
            stats, bad = split_stats(_run_failfast(lambda: reduced.filter(is_stat).collect()), cfg.max_bad_examples)
            for item in bad:
                item["line_number"] = line_number(item["source"], item["offset"])
        if not stats.get("examples"):
            raise InputError(
                f"{inputs.root}: no training examples (no window centred on {', '.join(cfg.centres)}); "
                "nothing written"
            )
        if engine != "arrow":
            rows = reduced.filter(lambda kv: not is_stat(kv)).map(lambda kv: (*kv[0], kv[1]))
            counts = spark.createDataFrame(rows, schema=count_ddl(letters))
        if old is not None:
            counts = merge_counts(counts, read_counts(spark, out, old), ["count"])
        with staged_output(out, "model") as stage:
            counts.write.parquet(str(stage / "counts"))
            written = spark.read.parquet(str(stage / "counts"))
            per_subset = {r["subset"]: r["n"] for r in written.groupBy("subset").count().withColumnRenamed("count", "n").collect()}
            label_counts = {
                r["label"]: r["total"]
                for r in written.where(written.subset == "").groupBy("label").agg({"count": "sum"}).withColumnRenamed("sum(count)", "total").collect()
            } if "" in subsets else {}
            manifest = {
                **manifest_header(MODEL_KIND, SCHEMA_VERSION, cfg),
                "letters": letters,
                "engine": engine,
                "subsets": list(subsets),
                "count_schema": count_ddl(letters),
                "inputs": {"format": inputs.spec.format, "root": str(inputs.root), "files": [str(f) for f in inputs.files]},
                "stats": stats,
                "malformed_examples": bad,
                "distinct_events": dict(sorted(per_subset.items())),
                "label_counts": dict(sorted(label_counts.items())),
                "seconds": round(time.time() - started, 2),
            }
            write_json(stage / "manifest.json", merged_manifest(old, manifest))
    finally:
        reduced.unpersist()
    log(format_train_report(manifest, out))
    return manifest


def format_train_report(manifest: dict, out: Path) -> str:
    stats = manifest["stats"]
    lines = [f"model written to {out} in {manifest['seconds']} s"]
    if "lines_read" in stats:
        lines.append(
            f"lines read: {stats['lines_read']:,}   malformed (skipped): {stats.get('malformed', 0):,}   "
            f"not centred on the confusion set: {stats.get('lines_not_in_confusion_set', 0):,}"
        )
        reasons = {k.split('.', 1)[1]: v for k, v in stats.items() if k.startswith("malformed.")}
        if reasons:
            lines.append("malformed by reason: " + ", ".join(f"{k}={v:,}" for k, v in sorted(reasons.items())))
    shown = {"lines_read", "malformed", "lines_not_in_confusion_set", "stories_read", "stories_used", "examples", "weight", "decode_replacements"}
    other = {k: v for k, v in stats.items() if k not in shown and not k.startswith("malformed.")}
    if other:
        lines.append("also: " + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in other.items()))
    if "stories_read" in stats:
        lines.append(f"stories read: {stats['stories_read']:,}   used: {stats.get('stories_used', 0):,}")
    lines.append(f"examples: {stats.get('examples', 0):,}   total weight: {stats.get('weight', 0):,}")
    if stats.get("decode_replacements"):
        lines.append(f"undecodable bytes replaced by U+FFFD: {stats['decode_replacements']:,}")
    lines.append("distinct events per subset: " + ", ".join(f"{level_name(k)}={v:,}" for k, v in manifest["distinct_events"].items()))
    if manifest["malformed_examples"]:
        lines.append("first malformed lines:")
        lines += [
            f"  {b['source']}:{b['line_number'] or '@' + str(b['offset'])} ({b['reason']}): {b['line']!r}"
            for b in manifest["malformed_examples"]
        ]
    return "\n".join(lines)


# ---------------------------------------------------------------- model loading


def load_model_manifest(model_dir: Path, kind: str = MODEL_KIND, version: int = SCHEMA_VERSION) -> dict:
    """The manifest of a model directory, refusing anything that is not a complete model of ``kind``."""
    path = model_dir / "manifest.json"
    if not model_dir.is_dir():
        raise OutputError(f"{model_dir}: no such model directory; run jobs/train.py first")
    if not path.is_file():
        raise OutputError(f"{model_dir}: not an nbspark model (no manifest.json)")
    try:
        manifest = read_json(path)
    except ValueError:
        raise OutputError(f"{path}: not valid JSON") from None
    if manifest.get("kind") != kind:
        raise OutputError(f"{model_dir}: a model of kind {manifest.get('kind')!r}, expected {kind!r}")
    if manifest.get("schema_version") != version:
        raise OutputError(
            f"{model_dir}: model schema version {manifest.get('schema_version')!r}, this nbspark reads {version}"
        )
    return manifest


def read_counts(spark, model_dir: Path, manifest: dict):
    return read_parquet_checked(spark, model_dir / "counts", count_ddl(manifest["letters"]))


# ---------------------------------------------------------------- classify

PREDICTION_COLUMNS = ("source", "gold", "predicted", "probability", "subset")


def prediction_ddl(letters: str) -> str:
    tokens = ", ".join(f"{c.lower()} STRING" for c in letters)
    return f"source STRING NOT NULL, {tokens}, gold STRING NOT NULL, predicted STRING, probability DOUBLE NOT NULL, subset STRING NOT NULL"


def _score_partition(examples, bc_model, set_of):
    model: BackoffModel = bc_model.value
    centre = len(model.letters) // 2
    for ex in examples:
        decision = predict(model, ex.window, set_of.get(ex.window[centre]))
        yield (ex.source, *ex.window, ex.window[centre], decision.label, decision.probability, decision.subset)


def classify(spark, cfg: ExperimentConfig, model_dir: Path, inputs: Inputs, out: Path, log=print) -> dict:
    """Score every test example of ``inputs`` with the model; write predictions and metrics."""
    started = time.time()
    manifest = load_model_manifest(model_dir)
    mcfg = manifest["config"]
    letters = manifest["letters"]
    missing = [s for s in cfg.backoff if s not in manifest["subsets"]]
    if missing:
        raise OutputError(
            f"{model_dir}: the backoff chain needs subsets {', '.join(map(level_name, missing))}, "
            f"which this model did not count (it has {', '.join(map(level_name, manifest['subsets']))})"
        )
    counts = read_counts(spark, model_dir, manifest)
    rows = counts.where(counts.subset.isin(list(cfg.backoff))).collect()
    model = build_model(rows, letters, cfg.backoff)
    bc = spark.sparkContext.broadcast(model)
    sets = [tuple(s) for s in mcfg.get("confusion_sets") or [mcfg["confusion_set"]]]
    set_of: dict[str, frozenset] = {}
    for words in sets:
        for w in words:
            set_of.setdefault(w, frozenset(words))
    confusion, width, lowercase = tuple(set_of), mcfg["width"], mcfg["lowercase"]
    mixed = examples_rdd(spark.sparkContext, inputs, confusion, width, lowercase, cfg.mode, cfg.max_bad_examples)
    mixed = mixed.cache()
    try:
        stats, bad = split_stats(
            _run_failfast(lambda: count_events(mixed.filter(is_stat)).collect()), cfg.max_bad_examples
        )
        scored = mixed.filter(lambda r: not is_stat(r)).mapPartitions(lambda it: _score_partition(it, bc, set_of))
        predictions = spark.createDataFrame(scored, schema=prediction_ddl(letters))
        label_counts = manifest.get("label_counts") or {}
        majority = min(label_counts, key=lambda k: (-label_counts[k], k)) if label_counts else None
        with staged_output(out, "results") as stage:
            predictions.write.parquet(str(stage / "predictions"))
            written = spark.read.parquet(str(stage / "predictions"))
            triples = [
                (r["gold"], r["predicted"], r["subset"], r["count"])
                for r in written.groupBy("gold", "predicted", "subset").count().collect()
            ]
            metrics = backoff_metrics(triples, cfg.backoff, majority)
            if len(sets) > 1:
                metrics["sets"] = per_set_metrics(triples, sets, cfg.backoff, label_counts)
            metrics["distinct_examples"] = written.select(*[c.lower() for c in letters]).distinct().count()
            metrics["worked_examples"] = worked_examples(model, cfg.worked_examples, width)
            metrics["input_stats"] = stats
            metrics["malformed_examples"] = bad
            metrics["model"] = str(model_dir)
            metrics["test_input"] = str(inputs.root)
            metrics["seconds"] = round(time.time() - started, 2)
            report = format_classify_report(metrics)
            write_json(stage / "metrics.json", metrics)
            (stage / "report.txt").write_text(report + "\n", encoding="utf-8")
    finally:
        mixed.unpersist()
        bc.unpersist()
    log(report)
    log(f"results written to {out}")
    return metrics


def per_set_metrics(triples, sets, chain, label_counts) -> list[dict]:
    """One row per confusion set: its test examples, accuracy and majority baseline (the
    set's most frequent word in training)."""
    rows = []
    for words in sets:
        majority = min(words, key=lambda w: (-label_counts.get(w, 0), w))
        m = backoff_metrics([t for t in triples if t[0] in words], chain, majority)
        rows.append({"set": list(words), **{k: m[k] for k in ("examples", "correct", "accuracy", "majority_label", "majority_baseline", "gold_labels")}})
    return rows


def format_sets_table(rows: list[dict]) -> str:
    lines = [f"{'confusion set':<26}{'examples':>10}{'accuracy':>10}{'majority':>10}  majority word"]
    for r in rows:
        acc = "-" if r["accuracy"] is None else f"{r['accuracy']:.4f}"
        base = "-" if r["majority_baseline"] is None else f"{r['majority_baseline']:.4f}"
        lines.append(f"{'/'.join(r['set']):<26}{r['examples']:>10}{acc:>10}{base:>10}  {r['majority_label']}")
    return "\n".join(lines)


def worked_examples(model: BackoffModel, patterns, width: int) -> list[dict]:
    """How the model decides each ``"w w _ w w"`` pattern, with the levels it passed."""
    out = []
    for pattern in patterns:
        window = parse_pattern(pattern, width)
        decision = predict(model, window)
        passed = list(model.chain[: model.chain.index(decision.subset)]) if decision.subset in model.chain else list(model.chain)
        shown = " ".join(w if model.letters[i] in decision.subset or i == width // 2 else "_" for i, w in enumerate(window))
        out.append(
            {
                "pattern": pattern,
                "predicted": decision.label,
                "probability": decision.probability,
                "subset": decision.subset,
                "unseen_at": passed,
                "context_used": shown,
            }
        )
    return out


def format_classify_report(metrics: dict) -> str:
    acc = metrics["accuracy"]
    base = metrics["majority_baseline"]
    lines = [
        f"examples: {metrics['examples']:,} ({metrics['distinct_examples']:,} distinct)   "
        + "gold: " + ", ".join(f"{k}={v}" for k, v in metrics["gold_labels"].items()),
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
                f"at {level_name(w['subset'])} (\"{w['context_used']}\"{unseen})"
            )
    return "\n".join(lines)


# ---------------------------------------------------------------- query


def _ngram_rows(records, width, fold_case, mode, keep_bad):
    stats = PartitionStats(keep_bad)
    for source, offset, line in records:
        stats.add("lines_read")
        try:
            tokens, count = parse_ngram_line(line, width)
        except MalformedLine as exc:
            if mode == "failfast":
                raise ValueError(f"{FAILFAST_TAG}\t{source}\t{offset}\t{exc.reason}\t{line[:200]!r}") from None
            stats.bad_record(source, offset, exc.reason, line)
            continue
        if fold_case:
            tokens = tuple(t.lower() for t in tokens)
        yield ("row", (*tokens, count))
    for key, n in stats.records():
        yield ("stat", (key, n))


def query(spark, bindings: dict[str, str], top: int = 10, model_dir: Path | None = None,
          ngram_inputs: Inputs | None = None, fold_case: bool = False, mode: str = "permissive",
          keep_bad: int = 5, log=print) -> dict:
    """Answer ``P(varying positions | fixed positions)`` from a model or a raw n-gram file.

    ``bindings`` maps a position letter to a word (must match) or ``"_"`` (varies); positions
    not named are summed over. Returns the total matching count, its share of all n-grams and
    the ``top`` bindings of the ``_`` positions with their conditional probabilities.
    """
    from pyspark.sql import functions as F

    stats: dict = {}
    if model_dir is not None:
        manifest = load_model_manifest(model_dir)
        letters = manifest["letters"]
        full = context_letters(letters)
        if full not in manifest["subsets"]:
            raise OutputError(f"{model_dir}: the model has no full-context table ({full})")
        counts = read_counts(spark, model_dir, manifest)
        centre = letters[len(letters) // 2]
        cols = [F.col("label" if c == centre else c.lower()).alias(c) for c in letters]
        table = counts.where(counts.subset == full).select(*cols, "count")
        source = str(model_dir)
    else:
        width = 5
        letters = "ABCDE"
        mixed = ngram_lines(spark.sparkContext, list(ngram_inputs.files)).mapPartitions(
            lambda it: _ngram_rows(it, width, fold_case, mode, keep_bad)
        ).cache()
        stats, bad = split_stats(
            _run_failfast(lambda: count_events(mixed.filter(lambda r: r[0] == "stat").map(lambda r: r[1])).collect()),
            keep_bad,
        )
        stats["malformed_examples"] = bad
        rows = mixed.filter(lambda r: r[0] == "row").map(lambda r: r[1])
        table = spark.createDataFrame(rows, schema=", ".join(f"{c} STRING" for c in letters) + ", count BIGINT")
        source = str(ngram_inputs.root)
    unknown = set(bindings) - set(letters)
    if unknown:
        raise InputError(f"unknown position(s) {', '.join(sorted(unknown))}; positions are {', '.join(letters)}")
    varying = [c for c in letters if bindings.get(c) == "_"]
    cond = F.lit(True)
    for c in letters:
        if c in bindings and bindings[c] != "_":
            cond = cond & (F.col(c) == bindings[c])
    grand = table.agg(F.sum("count")).first()[0] or 0
    matching = table.where(cond)
    total = matching.agg(F.sum("count")).first()[0] or 0
    result = {
        "source": source,
        "bindings": {c: bindings.get(c, "*") for c in letters},
        "matching_count": int(total),
        "all_count": int(grand),
        "share": total / grand if grand else 0.0,
        "top": [],
        "input_stats": stats,
    }
    if varying and total:
        grouped = matching.groupBy(*varying).agg(F.sum("count").alias("n"))
        best = grouped.orderBy(F.col("n").desc(), *[F.col(c).asc() for c in varying]).limit(top).collect()
        result["top"] = [{"values": {c: r[c] for c in varying}, "count": int(r["n"]), "probability": r["n"] / total} for r in best]
        result["distinct_bindings"] = grouped.count()
    if model_dir is None:
        mixed.unpersist()
    log(format_query_report(result, letters))
    return result


def format_query_report(result: dict, letters: str) -> str:
    shown = " ".join(f"{c}={v}" for c, v in result["bindings"].items())
    fixed = ", ".join(f"{c}={v}" for c, v in result["bindings"].items() if v not in ("_", "*")) or "nothing fixed"
    varying = [c for c, v in result["bindings"].items() if v == "_"]
    lines = [
        f"query: {shown}   (from {result['source']}; * = summed over)",
        f"matching count: {result['matching_count']:,} of {result['all_count']:,}   share: {result['share']:.6f}",
    ]
    if result["top"]:
        lines.append(f"top {len(result['top'])} of {result['distinct_bindings']:,} bindings of {' '.join(varying)}:")
        lines.append(f"  {'binding':<40}{'count':>14}  P({','.join(varying)} | {fixed})")
        for item in result["top"]:
            binding = " ".join(f"{c}={v!r}" if v == "" else f"{c}={v}" for c, v in item["values"].items())
            lines.append(f"  {binding:<40}{item['count']:>14,}  {item['probability']:.6f}")
    stats = result.get("input_stats") or {}
    if stats.get("malformed"):
        lines.append(f"malformed lines skipped: {stats['malformed']:,}")
    return "\n".join(lines)
