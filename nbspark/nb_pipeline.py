"""Naive Bayes jobs on Spark: count documents or table rows into Parquet, score with dot products.

Record shapes, stage by stage:

* train: lines ``(file, offset, text)`` / SGML files / table rows
  -> ``Doc(id, labels, tokens)`` or ``Row(id, label, categorical, numeric)``
  -> ``((event, label, feature, value), count | (n, Σx, Σx²))`` -> reduceByKey
  -> ``counts/`` Parquet (``nb.COUNT_DDL``) + ``manifest.json``.
* classify: ``counts/`` -> ``NBModel`` arrays (driver) -> broadcast; test records in batches
  -> sparse matrix product -> log-sum-exp -> ``predictions/`` Parquet (``PREDICTION_DDL``)
  -> ``metrics.json``, ``report.txt``.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from .config import ExperimentConfig, NBSpec
from .corpora import MalformedLine, decode_reuters, holdout_part, parse_labelled_line, parse_reuters_sgml, parse_sms_line
from .counting import MARK, PartitionStats, count_events, is_stat, split_stats
from .faults import maybe_inject
from .metrics import classification_metrics, format_classification_report
from .nb import (
    COUNT_DDL,
    NBModel,
    add_values,
    build_nb_model,
    csr_rows,
    doc_events,
    event_row,
    log_posteriors,
    ranked_columns,
    row_events,
    score_docs,
    score_rows,
    top_labels,
)
from .pipeline import (
    FAILFAST_TAG,
    InputError,
    Inputs,
    _run_failfast,
    check_update,
    first_malformed_lines,
    load_model_manifest,
    manifest_header,
    merge_counts,
    merged_manifest,
)
from .readers import line_number, ngram_lines, sgml_texts
from .tables import read_parquet_checked, staged_output, write_json
from .text import tokenize

__all__ = [
    "NB_MODEL_KIND",
    "PREDICTION_DDL",
    "REUTERS_TOP10",
    "Doc",
    "Row",
    "classify_nb",
    "load_nb_manifest",
    "load_nb_model",
    "records_rdd",
    "tokenizer",
    "train_nb",
    "write_nb_results",
]

NB_MODEL_KIND = "nbspark.nb-counts"
SCHEMA_VERSION = 1
#: The ten most frequent topics of the ModApte training stories (counted from Reuters-21578).
REUTERS_TOP10 = ("earn", "acq", "money-fx", "grain", "crude", "trade", "interest", "wheat", "ship", "corn")
PREDICTION_DDL = (
    "id STRING NOT NULL, gold ARRAY<STRING> NOT NULL, predicted ARRAY<STRING> NOT NULL, "
    "probability DOUBLE, ranked_labels ARRAY<STRING> NOT NULL, ranked_probabilities ARRAY<DOUBLE> NOT NULL"
)
BATCH = 4096  # records scored per matrix product
RANKED = 5  # ranked classes kept per prediction


class Doc(NamedTuple):
    id: str
    labels: tuple[str, ...]
    tokens: list[str]


class Row(NamedTuple):
    id: str
    label: str
    categorical: dict
    numeric: dict


def tokenizer(name: str):
    """``nbspark``: the one tokenizer (text.tokenize); ``words``: lower-cased runs of \\w."""
    if name == "words":
        import re

        pattern = re.compile(r"\w+")
        return lambda text: pattern.findall(text.lower())
    return tokenize


def _keep(spec_splits, holdout, seed, record_id) -> bool:
    if not holdout:
        return True
    part = holdout_part(record_id, seed, holdout)
    return not spec_splits or part in spec_splits


def _text_partition(records, fmt, nb: NBSpec, splits, holdout, seed, mode, keep_bad):
    maybe_inject()
    tok = tokenizer(nb.tokenizer)
    stats = PartitionStats(keep_bad)
    for source, offset, line in records:
        stats.add("lines_read")
        if "\ufffd" in line:
            stats.add("decode_replacements", line.count("\ufffd"))
        if not line.strip():
            stats.add("blank_lines")
            continue
        try:
            if fmt == "tsv":
                doc_id, labels, text = parse_labelled_line(line)
            else:
                label, text = parse_sms_line(line)
                doc_id, labels = f"{Path(source).name}@{offset}", (label,)
        except MalformedLine as exc:
            if mode == "failfast":
                raise ValueError(f"{FAILFAST_TAG}\t{source}\t{offset}\t{exc.reason}\t{line[:200]!r}") from None
            stats.bad_record(source, offset, exc.reason, line)
            continue
        if not _keep(splits, holdout, seed, doc_id):
            continue
        tokens = tok(text)
        stats.add("documents")
        if not tokens:
            stats.add("empty_documents")
        yield Doc(doc_id, labels, tokens)
    yield from stats.records()


def _topics_partition(records, nb: NBSpec, splits, keep_bad):
    tok = tokenizer(nb.tokenizer)
    stats = PartitionStats(keep_bad)
    top = frozenset(REUTERS_TOP10)
    for _source, data in records:
        for story in parse_reuters_sgml(decode_reuters(data)):
            stats.add("stories_read")
            # ModApte: TRAIN or TEST, TOPICS="YES", at least one topic
            if story.lewissplit not in ("TRAIN", "TEST") or story.topics_attr != "YES" or not story.topics:
                continue
            if splits and story.lewissplit not in splits:
                continue
            if nb.labels == "top10":
                if story.topics[0] not in top:
                    continue
                labels = (story.topics[0],)
            else:
                labels = story.topics
            tokens = tok(story.text)
            stats.add("documents")
            if not tokens:
                stats.add("empty_documents")
            yield Doc(f"reuters:{story.newid}", labels, tokens)
    yield from stats.records()


def _to_float(value):
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    if not text:
        return None
    return float(text)  # ValueError for a non-number


def _table_partition(records, label_col, numeric, categorical, splits, holdout, seed, mode, keep_bad):
    stats = PartitionStats(keep_bad)
    for index, record in records:
        stats.add("rows_read")
        row_id = str(index)
        label = record.get(label_col)
        if label is None or str(label).strip() == "":
            if mode == "failfast":
                raise ValueError(f"{FAILFAST_TAG}\ttable\t{index}\tlabel\t{record!r}")
            stats.bad_record("table", index, "label", repr(record))
            continue
        try:
            num = {c: x for c in numeric if (x := _to_float(record.get(c))) is not None and math.isfinite(x)}
        except ValueError:
            if mode == "failfast":
                raise ValueError(f"{FAILFAST_TAG}\ttable\t{index}\tnumeric\t{record!r}") from None
            stats.bad_record("table", index, "numeric", repr(record))
            continue
        cat = {c: str(record[c]) for c in categorical if record.get(c) is not None}
        if not _keep(splits, holdout, seed, row_id):
            continue
        stats.add("documents")
        yield Row(row_id, str(label), cat, num)
    yield from stats.records()


def _table_source(spark, inputs: Inputs, nb: NBSpec):
    """``(RDD of (index, dict), numeric columns, categorical columns)`` for csv, parquet, sklearn."""
    fmt = inputs.spec.format
    if fmt == "sklearn":
        from sklearn import datasets  # scikit-learn is needed only for this format

        loader = getattr(datasets, f"load_{inputs.spec.path}", None)
        if loader is None:
            raise InputError(f"sklearn has no dataset {inputs.spec.path!r} (try wine, iris, breast_cancer)")
        data = loader()
        names = [str(n).replace(" ", "_") for n in data.feature_names]
        target = [str(data.target_names[t]) for t in data.target]
        records = [dict(zip(names, map(float, x)), **{nb.label_column: y}) for x, y in zip(data.data, target)]
        rdd = spark.sparkContext.parallelize(list(enumerate(records)), max(2, spark.sparkContext.defaultParallelism))
        columns, numeric_types = names, set(names)
    else:
        paths = [str(f) for f in inputs.files]
        explicit = bool(nb.numeric_columns or nb.categorical_columns)
        if fmt == "csv":
            df = spark.read.csv(paths, header=True, inferSchema=not explicit, mode="PERMISSIVE")
        else:
            df = spark.read.parquet(*paths)
        if nb.label_column not in df.columns:
            raise InputError(f"{inputs.root}: no label column {nb.label_column!r} (columns: {', '.join(df.columns)})")
        from pyspark.sql.types import NumericType

        columns = [c for c in df.columns if c != nb.label_column]
        numeric_types = {f.name for f in df.schema.fields if isinstance(f.dataType, NumericType)}
        rdd = df.rdd.map(lambda r: r.asDict()).zipWithIndex().map(lambda kv: (kv[1], kv[0]))
    numeric = list(nb.numeric_columns)
    categorical = list(nb.categorical_columns)
    if not numeric and not categorical:
        if nb.model == "gaussian":
            numeric = columns
        elif nb.model == "categorical":
            categorical = columns
        else:
            numeric = [c for c in columns if c in numeric_types]
            categorical = [c for c in columns if c not in numeric_types]
    missing = [c for c in numeric + categorical if c not in columns]
    if missing:
        raise InputError(f"{inputs.root}: no column(s) {', '.join(missing)}")
    if nb.model == "gaussian":
        numeric, categorical = numeric + categorical, []
    elif nb.model == "categorical":
        numeric, categorical = [], categorical + numeric
    return rdd, numeric, categorical


def records_rdd(spark, inputs: Inputs, cfg: ExperimentConfig):
    """RDD mixing ``Doc`` or ``Row`` records with statistics records; also the table columns."""
    nb, spec = cfg.nb, inputs.spec
    splits, holdout, seed = frozenset(spec.splits), spec.holdout, spec.seed
    mode, keep = cfg.mode, cfg.max_bad_examples
    sc = spark.sparkContext
    if spec.format in ("tsv", "sms"):
        if spec.splits and not holdout:
            raise InputError(f"{spec.format} input has no split of its own: set holdout (and seed) to use splits")
        lines = ngram_lines(sc, list(inputs.files))
        if cfg.partitions:
            lines = lines.repartition(cfg.partitions)
        fmt = spec.format
        return lines.mapPartitions(lambda it: _text_partition(it, fmt, nb, splits, holdout, seed, mode, keep)), {}
    if spec.format == "reuters_topics":
        texts = sgml_texts(sc, list(inputs.files))
        return texts.mapPartitions(lambda it: _topics_partition(it, nb, splits, keep)), {}
    if spec.format in ("csv", "parquet", "sklearn"):
        rdd, numeric, categorical = _table_source(spark, inputs, nb)
        label = nb.label_column
        mixed = rdd.mapPartitions(lambda it: _table_partition(it, label, numeric, categorical, splits, holdout, seed, mode, keep))
        return mixed, {"numeric": numeric, "categorical": categorical}
    raise InputError(f"format {spec.format!r} is not a naive Bayes input (tsv, sms, reuters_topics, csv, parquet, sklearn)")


def _events(record, kind):
    if is_stat(record):
        return [record]
    if isinstance(record, Doc):
        return doc_events(record.labels, record.tokens, kind)
    return row_events(record.label, record.categorical, record.numeric)


# ---------------------------------------------------------------- the dataframe engine




def sql_engine_applies(cfg: ExperimentConfig, inputs: Inputs) -> bool:
    """Whether the dataframe and arrow engines can count this input (and arrow scoring score it)."""
    spec, nb = inputs.spec, cfg.nb
    return spec.format in ("tsv", "sms") and not spec.holdout and nb.tokenizer == "words" and nb.model in ("multinomial", "bernoulli")


def arrow_by_default(cfg: ExperimentConfig, inputs: Inputs) -> bool:
    """Whether ``auto`` takes the arrow engine or scorer: where it can read the input, and in
    permissive mode (failfast names the first bad line by file and line, which only the Python
    readers know)."""
    return cfg.mode == "permissive" and sql_engine_applies(cfg, inputs)


def resolve_engine(cfg: ExperimentConfig, inputs: Inputs) -> ExperimentConfig:
    """``engine = "auto"``: the arrow engine by default (``arrow_by_default``), else combine."""
    if cfg.engine != "auto":
        return cfg
    return replace(cfg, engine="arrow" if arrow_by_default(cfg, inputs) else "combine")


def dataframe_counts(spark, inputs: Inputs, cfg: ExperimentConfig):
    """Count naive Bayes text events with Spark SQL only, in one pass: split, explode, groupBy.

    The same events and counts as the Python engines for ``tsv``/``sms`` input with the
    ``words`` tokenizer (lower-case, split on ``(?U)\\W+``: Java's Unicode word characters),
    and no Python per token. Each line explodes into its (label, token) pairs plus one marker
    pair per (document, label) and one per blank or malformed line, so a single
    ``groupBy(label, token).count()`` yields the counts and the statistics together (a line
    count is the only other pass). Returns the count DataFrame (``nb.COUNT_DDL``), the cached
    aggregate to unpersist, the statistics, and the label counts and number of features.
    """
    from pyspark.sql import functions as F

    nb, spec = cfg.nb, inputs.spec
    if not sql_engine_applies(cfg, inputs):
        raise InputError(
            f"engine {cfg.engine} counts tsv or sms input without holdout, with nb.tokenizer = words and a "
            "multinomial or Bernoulli model; use engine combine for this config"
        )
    from .readers import hadoop_escape

    lines = spark.read.text([hadoop_escape(f"file://{f}") for f in inputs.files])
    if cfg.engine == "arrow":
        return _finish_counts(spark, _arrow_agg(lines, spec.format, nb.model), cfg, inputs)
    if spec.format == "sms":
        parts = F.split("value", "\t", 2)
        label = F.trim(F.get(parts, 0))
        labels = F.when(label != "", F.array(label)).otherwise(F.array().cast("array<string>"))
        text = F.get(parts, 1)
        fields_ok = F.size(parts) == 2
    else:
        parts = F.split("value", "\t", 3)
        labels = F.filter(F.transform(F.split(F.get(parts, 1), ","), lambda x: F.trim(x)), lambda x: x != "")
        text = F.get(parts, 2)
        fields_ok = (F.size(parts) == 3) & (F.trim(F.get(parts, 0)) != "")
    # split leaves empty strings at the edges; they are dropped after the explode (a higher-order
    # filter here would run interpreted, per element)
    tokens = F.split(F.lower(text), "(?U)\\W+")
    if nb.model == "bernoulli":
        tokens = F.array_distinct(tokens)
    # the flatMap: a valid line gives (label, token) for its labels and tokens, plus a (label,
    # doc) marker per label; any other line gives one (statistic, marker) pair
    # each expensive expression once: the tokens and labels are columns before they are reused
    # (a document is empty when its text has no word character)
    parsed = lines.select("value", labels.alias("labels"), tokens.alias("tokens"), text.rlike("(?U)\\w").alias("has_word"))
    labels, tokens = F.col("labels"), F.col("tokens")
    blank = F.trim("value") == ""
    valid = ~blank & fields_ok & (F.size(labels) > 0)
    category = F.when(blank, "blank_lines").when(~fields_ok, "malformed.fields").otherwise("malformed.labels")
    markers = F.when(F.col("has_word"), F.array(F.lit(MARK + "doc"))).otherwise(
        F.array(F.lit(MARK + "doc"), F.lit(MARK + "empty_documents"))
    )
    agg = (
        parsed.select(
            F.when(valid, labels).otherwise(F.array(F.concat(F.lit(MARK), category))).alias("labels"),
            F.when(valid, F.concat(tokens, markers)).otherwise(F.array(F.lit(MARK))).alias("tokens"),
        )
        .select(F.explode("labels").alias("label"), "tokens")
        .select("label", F.explode("tokens").alias("token"))
        .where(F.col("token") != "")
        .groupBy("label", "token")
        .count()
        .cache()
    )
    return _finish_counts(spark, agg, cfg, inputs, lines.count)


def _finish_counts(spark, agg, cfg: ExperimentConfig, inputs: Inputs, count_lines=None):
    """From a cached ``(label, token, count)`` aggregate with markers: the count table, the
    statistics (``count_lines`` counts the input lines where the aggregate has no ``lines_read``
    marker), and the manifest's ``label_counts`` and ``features``."""
    from pyspark.sql import functions as F

    nb = cfg.nb
    try:
        # one job: the marker rows, and the distinct features (for the manifest, no read-back)
        marker = F.col("label").startswith(MARK) | F.col("token").startswith(MARK)
        summary = agg.select(
            F.collect_list(F.when(marker, F.struct("label", "token", "count"))).alias("special"),
            F.count_distinct(F.when(~marker, F.col("token"))).alias("features"),
        ).first()
        special = summary["special"]
        stats: dict[str, int] = {}
        docs_y: dict[str, int] = {}
        if count_lines is not None:
            stats["lines_read"] = count_lines()
        for r in special:
            if r["label"].startswith(MARK):
                stats[r["label"][1:]] = r["count"]
            elif r["token"] == MARK + "doc":
                docs_y[r["label"]] = r["count"]
            else:  # empty documents, once per label
                stats["empty_documents"] = stats.get("empty_documents", 0) + r["count"]
        stats.pop("documents", None)
        stats["documents"] = stats["lines_read"] - sum(v for k, v in stats.items() if k == "blank_lines" or k.startswith("malformed."))
        malformed = {k: v for k, v in stats.items() if k.startswith("malformed.")}
        if malformed:
            stats["malformed"] = sum(malformed.values())
        yx = agg.where(~F.col("label").startswith(MARK) & ~F.col("token").startswith(MARK))
        null = F.lit(None).cast("string")
        rows = [("Y=ANY", None, None, None, sum(docs_y.values()))] + [("Y", y, None, None, n) for y, n in sorted(docs_y.items())]
        head = spark.createDataFrame(rows, "event STRING, label STRING, feature STRING, value STRING, n BIGINT")
        counts = head.unionByName(
            yx.select(F.lit("YX").alias("event"), "label", F.col("token").alias("feature"), null.alias("value"), F.col("count").alias("n"))
        )
        if nb.model == "multinomial":
            counts = counts.unionByName(
                yx.groupBy("label").agg(F.sum("count").alias("n")).select(F.lit("YX=ANY").alias("event"), "label", null.alias("feature"), null.alias("value"), "n")
            )
        counts = counts.select(
            "event", "label", "feature", "value", F.col("n").cast("long").alias("n"),
            F.lit(None).cast("double").alias("sum"), F.lit(None).cast("double").alias("sumsq"),
        )
        return counts, agg, stats, {"label_counts": docs_y, "features": summary["features"]}
    except BaseException:
        agg.unpersist()
        raise


def _arrow_count_batches(batches, model_kind):
    """mapInArrow: partial ``(label, token, n)`` counts of whole batches, markers included,
    summed inside the task (``arrow_text.PartialCounts``) before they reach the shuffle.

    Rows are (label, text, category, pos): one per (line, label); ``pos`` 0 marks a line's first
    row, where the line-level markers (lines read, blank, malformed, empty) are counted.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from .arrow_text import LABEL_TOKEN_SCHEMA as schema
    from .arrow_text import PartialCounts, count_label_tokens

    def table(labels, tokens, counts):
        return pa.table([pa.array(labels, pa.string()), pa.array(tokens, pa.string()), pa.array(counts, pa.int64())], schema=schema)

    partial = PartialCounts()
    for batch in batches:
        first = pc.equal(batch.column("pos"), 0)
        lines = batch.filter(first)
        cats = pa.table({"c": lines.column("category")}).group_by("c").aggregate([([], "count_all")])
        out = [
            table([MARK + "lines_read"], [MARK], [lines.num_rows]),
            table([MARK + c for c in cats.column("c").to_pylist()], [MARK] * cats.num_rows, cats.column("count_all").to_pylist()),
        ]
        docs = batch.filter(pc.equal(batch.column("category"), "documents"))
        if docs.num_rows:
            counted, has_tokens = count_label_tokens(docs.column("label"), docs.column("text"), model_kind == "bernoulli")
            empty = int((pc.equal(docs.column("pos"), 0).to_numpy(zero_copy_only=False) & ~has_tokens).sum())
            if empty:
                out.append(table([MARK + "empty_documents"], [MARK], [empty]))
            out.append(counted)
            per_label = pa.table({"label": docs.column("label")}).group_by("label").aggregate([([], "count_all")])
            out.append(pa.table([per_label.column("label"), pa.array([MARK + "doc"] * per_label.num_rows), per_label.column("count_all")], schema=schema))
        for t in out:
            for summed in partial.add(t):
                yield from summed.to_batches()
    for t in partial.flush():
        yield from t.to_batches()


def _arrow_agg(lines, fmt: str, model_kind: str):
    """The arrow engine's aggregate: lines parsed in SQL, then counted per Arrow batch by pyarrow."""
    from pyspark.sql import functions as F

    blank = F.trim("value") == ""
    if fmt == "sms":
        parts = F.split("value", "\t", 2)
        labels = F.array(F.trim(F.get(parts, 0)))
        fields_ok = F.size(parts) == 2
        labels_ok = F.trim(F.get(parts, 0)) != ""
        text = F.get(parts, 1)
    else:
        parts = F.split("value", "\t", 3)
        labels = F.filter(F.transform(F.split(F.get(parts, 1), ","), lambda x: F.trim(x)), lambda x: x != "")
        fields_ok = (F.size(parts) == 3) & (F.trim(F.get(parts, 0)) != "")
        labels_ok = F.size(labels) > 0
        text = F.get(parts, 2)
    category = F.when(blank, "blank_lines").when(~fields_ok, "malformed.fields").when(~labels_ok, "malformed.labels").otherwise("documents")
    rows = lines.select(
        category.alias("category"),
        F.when(category == "documents", labels).otherwise(F.array(F.lit(""))).alias("labels"),
        F.coalesce(text, F.lit("")).alias("text"),
    ).select("category", F.posexplode("labels").alias("pos", "label"), "text")
    partial = rows.mapInArrow(lambda it: _arrow_count_batches(it, model_kind), "label STRING, token STRING, n BIGINT")
    return partial.groupBy("label", "token").agg(F.sum("n").alias("count")).cache()


# ---------------------------------------------------------------- train


def train_nb(spark, cfg: ExperimentConfig, inputs: Inputs, out: Path, log=print, update: bool = False) -> dict:
    """Count naive Bayes events of ``inputs`` into the model directory ``out``.

    With ``update``, the counts are added to the existing model ``out`` (see ``pipeline.train``).
    """
    started = time.time()
    kind = cfg.nb.model
    cfg = resolve_engine(cfg, inputs)
    old = None
    if update:
        old = load_nb_manifest(out)
        check_update(old, cfg, ("nb.model", "nb.tokenizer", "nb.labels", "nb.label_column"))
    if kind in ("multinomial", "bernoulli") and inputs.spec.format in ("csv", "parquet", "sklearn"):
        raise InputError(f"nb.model {kind} needs text input (tsv, sms, reuters_topics), not {inputs.spec.format}")
    if kind in ("categorical", "gaussian", "mixed") and inputs.spec.format not in ("csv", "parquet", "sklearn"):
        raise InputError(f"nb.model {kind} needs a table (csv, parquet, sklearn), not {inputs.spec.format}")
    if cfg.engine in ("dataframe", "arrow"):
        counts, reduced, stats, known = dataframe_counts(spark, inputs, cfg)
        columns = {}
    else:
        known = None
        mixed, columns = records_rdd(spark, inputs, cfg)
        reduced = count_events(mixed.flatMap(lambda r: _events(r, kind)), cfg.partitions, cfg.engine, add_values).cache()
    try:
        if cfg.engine in ("dataframe", "arrow"):  # counted first; the bad lines are named afterwards
            parse = parse_labelled_line if inputs.spec.format == "tsv" else parse_sms_line
            bad = first_malformed_lines(spark.sparkContext, inputs.files, lambda line: line.strip() and parse(line), stats, cfg)
        else:
            stats, bad = split_stats(_run_failfast(lambda: reduced.filter(is_stat).collect()), cfg.max_bad_examples)
            for item in bad:
                item["line_number"] = line_number(item["source"], item["offset"]) if item["source"] != "table" else None
            rows = reduced.filter(lambda kv: not is_stat(kv)).map(lambda kv: event_row(kv[0], kv[1]))
            counts = spark.createDataFrame(rows, schema=COUNT_DDL)
        if not stats.get("documents"):
            raise InputError(f"{inputs.root}: no training documents; nothing written")
        if old is not None:
            counts = merge_counts(counts, read_parquet_checked(spark, out / "counts", COUNT_DDL), ["n", "sum", "sumsq"])
        with staged_output(out, "model") as stage:
            counts.write.parquet(str(stage / "counts"))
            if known is not None and old is None:  # the SQL engines summed these with the counts
                labels, features = known["label_counts"], known["features"]
            else:
                written = spark.read.parquet(str(stage / "counts"))
                labels = {r["label"]: r["n"] for r in written.where(written.event == "Y").select("label", "n").collect()}
                features = written.where(written.event.isin("YX", "YG")).select("feature", "value").distinct().count()
            manifest = {
                **manifest_header(NB_MODEL_KIND, SCHEMA_VERSION, cfg),
                "model": kind,
                "engine": cfg.engine,
                "columns": columns,
                "count_schema": COUNT_DDL,
                "inputs": {"format": inputs.spec.format, "root": str(inputs.root), "files": [str(f) for f in inputs.files]},
                "stats": stats,
                "malformed_examples": bad,
                "label_counts": dict(sorted(labels.items())),
                "features": features,
                "seconds": round(time.time() - started, 2),
            }
            write_json(stage / "manifest.json", merged_manifest(old, manifest))
    finally:
        reduced.unpersist()
    log(
        f"{kind} naive Bayes model written to {out} in {manifest['seconds']} s\n"
        f"documents: {stats['documents']:,}   classes: {len(labels)}   features: {features:,}   "
        f"malformed (skipped): {stats.get('malformed', 0):,}   empty documents: {stats.get('empty_documents', 0):,}"
        + "".join(f"\n  {b['source']}:{b.get('line_number') or b['offset']} ({b['reason']}): {b['line']!r}" for b in bad)
    )
    return manifest


# ---------------------------------------------------------------- classify


def load_nb_manifest(model_dir: Path) -> dict:
    return load_model_manifest(model_dir, kind=NB_MODEL_KIND, version=SCHEMA_VERSION)


def load_nb_model(spark, model_dir: Path, manifest: dict, cfg: ExperimentConfig) -> NBModel:
    counts = read_parquet_checked(spark, model_dir / "counts", COUNT_DDL)
    return build_nb_model(counts.collect(), manifest["model"], cfg.nb.alpha, cfg.nb.var_smoothing)


def _score_batch(model: NBModel, batch, k, threshold):
    if isinstance(batch[0], Doc):
        jll, unknown = score_docs(model, [d.tokens for d in batch])
        gold = [d.labels for d in batch]
    else:
        jll, unknown = score_rows(model, [(r.categorical, r.numeric) for r in batch])
        gold = [(r.label,) for r in batch]
    log_post = log_posteriors(jll)
    picked = top_labels(log_post, model.classes, k, threshold)
    ranked = top_labels(log_post, model.classes, min(RANKED, len(model.classes)))
    for rec, g, pick, rank in zip(batch, gold, picked, ranked):
        yield (rec.id, list(g), [p[0] for p in pick], pick[0][1], [r[0] for r in rank], [r[1] for r in rank])
    yield ("__unknown__", unknown)


def _score_partition(records, bc_model, k, threshold):
    model = bc_model.value
    batch = []
    for rec in records:
        batch.append(rec)
        if len(batch) >= BATCH:
            yield from _score_batch(model, batch, k, threshold)
            batch = []
    if batch:
        yield from _score_batch(model, batch, k, threshold)


def _doc_token_rows(records, binary):
    for rec in records:
        if isinstance(rec, Doc):
            for token, count in Counter(rec.tokens).items():
                yield rec.id, token, 1 if binary else count


def join_predictions(spark, counts, docs_rdd, kind: str, alpha: float, k: int, threshold: float):
    """Text scoring without a broadcast: the test documents' tokens joined with the count table.

    Only the non-zero counts are joined. With ``V`` the vocabulary, ``L_d`` the in-vocabulary
    tokens of document d (distinct ones for Bernoulli) and ``c(d,w)`` their counts, the joint
    log-likelihood is ``prior_y + bias_y + L_d · zero_y + Σ_{w: C(y,w)>0} c(d,w) · delta_yw``:

    * multinomial: ``zero_y = log α − log(N_y + α|V|)`` (``N_y`` the tokens of class y), ``bias_y = 0``,
      ``delta_yw = log(C(y,w) + α) − log α``;
    * Bernoulli (``D_y`` the documents of class y, ``p = (C+α)/(D_y+2α)``): the weight of a
      present word is ``log p − log(1−p)``, so ``zero_y`` is that weight at C = 0, ``delta_yw``
      the difference, and ``bias_y = Σ_{w∈V} log(1−p_yw)``, summed over the non-zero counts plus
      ``(|V| − nnz_y)`` times its value at C = 0.

    The same predictions as the broadcast scorer (tested).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    yx = counts.where(F.col("event") == "YX").select("label", F.col("feature").alias("token"), "n")
    vocab_size = yx.select("token").distinct().count()
    docs_y = {r["label"]: r["n"] for r in counts.where(F.col("event") == "Y").collect()}
    total = sum(docs_y.values())
    classes = sorted(docs_y)
    log_a = math.log(alpha)
    if kind == "multinomial":
        tokens_y = {r["label"]: r["n"] for r in counts.where(F.col("event") == "YX=ANY").collect()}
        rows = [(c, math.log(docs_y[c] / total), 0.0, log_a - math.log(tokens_y.get(c, 0) + alpha * vocab_size)) for c in classes]
        weights = yx.select("label", "token", (F.log(F.col("n") + alpha) - log_a).alias("delta"))
    else:  # bernoulli
        d = F.col("d")
        per_class = yx.join(F.broadcast(spark.createDataFrame(list(docs_y.items()), "label STRING, d BIGINT")), "label")
        q = F.log(d - F.col("n") + alpha) - F.log(d + 2 * alpha)
        sums = {r["label"]: (r["nnz"], r["q"]) for r in per_class.groupBy("label").agg(F.count("n").alias("nnz"), F.sum(q).alias("q")).collect()}
        rows = []
        for c in classes:
            dc = docs_y[c]
            q0 = math.log(dc + alpha) - math.log(dc + 2 * alpha)
            nnz, q_sum = sums.get(c, (0, 0.0))
            rows.append((c, math.log(dc / total), (vocab_size - nnz) * q0 + q_sum, log_a - math.log(dc + alpha)))
        weights = per_class.select(
            "label", "token", (F.log(F.col("n") + alpha) - F.log(d - F.col("n") + alpha) - log_a + F.log(d + alpha)).alias("delta")
        )
    base = spark.createDataFrame(rows, "label STRING, prior DOUBLE, bias DOUBLE, zero DOUBLE")
    doc_tokens = spark.createDataFrame(docs_rdd.mapPartitions(lambda it: _doc_token_rows(it, kind == "bernoulli")), "id STRING, token STRING, c BIGINT")
    known = doc_tokens.join(yx.select("token").distinct(), "token")
    length = known.groupBy("id").agg(F.sum("c").alias("L"))
    pair = known.join(weights, "token").groupBy("id", "label").agg(F.sum(F.col("c") * F.col("delta")).alias("s"))
    ids = docs_rdd.filter(lambda r: isinstance(r, Doc)).map(lambda r: (r.id, list(r.labels)))
    gold = spark.createDataFrame(ids, "id STRING, gold ARRAY<STRING>")
    scores = (
        gold.crossJoin(base)
        .join(length, "id", "left")
        .join(pair, ["id", "label"], "left")
        .select("id", "gold", "label", (F.col("prior") + F.col("bias") + F.coalesce("L", F.lit(0)) * F.col("zero") + F.coalesce("s", F.lit(0.0))).alias("jll"))
    )
    w = Window.partitionBy("id")
    scores = scores.withColumn("top", F.max("jll").over(w))
    scores = scores.withColumn("logp", F.col("jll") - F.col("top") - F.log(F.sum(F.exp(F.col("jll") - F.col("top"))).over(w)))
    ranked = scores.groupBy("id", "gold").agg(
        F.sort_array(F.collect_list(F.struct((-F.col("logp")).alias("neg"), "label"))).alias("r")
    )
    probs = F.transform("r", lambda x: F.exp(-x["neg"]))
    labels = F.transform("r", lambda x: x["label"])
    keep = F.filter(
        F.transform("r", lambda x, i: F.struct(x["label"].alias("label"), F.exp(-x["neg"]).alias("p"), i.alias("i"))),
        lambda x: (x["i"] < k) | ((F.lit(threshold) > 0) & (x["p"] >= threshold)),
    )
    return ranked.select(
        "id",
        "gold",
        F.transform(keep, lambda x: x["label"]).alias("predicted"),
        F.get(probs, 0).alias("probability"),
        F.slice(labels, 1, RANKED).alias("ranked_labels"),
        F.slice(probs, 1, RANKED).alias("ranked_probabilities"),
    )


def _arrow_score_batches(batches, bc_model, k, threshold, tally):
    """mapInArrow: tokenize, look up and score whole Arrow batches; the prediction columns are
    built as Arrow arrays from numpy (no Python per document or token). Rows are every input
    line (``id, gold, text, blank, ok``); blank and malformed ones are counted into ``tally``
    with the out-of-vocabulary tokens, and only documents are scored."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from .arrow_text import word_tokens

    model: NBModel = bc_model.value
    vocab = pa.array(sorted(model.vocab, key=model.vocab.get))
    classes = pa.array(model.classes, pa.string())
    n_ranked = min(RANKED, len(model.classes))

    def lists(values, lengths):
        offsets = np.zeros(len(lengths) + 1, np.int32)
        np.cumsum(lengths, out=offsets[1:])
        return pa.ListArray.from_arrays(pa.array(offsets), values)

    seen = Counter()
    for lines in batches:
        blank = lines.column("blank").to_numpy(zero_copy_only=False)
        ok = lines.column("ok").to_numpy(zero_copy_only=False) & ~blank
        seen.update(lines_read=lines.num_rows, blank_lines=int(blank.sum()), malformed=int((~blank & ~ok).sum()))
        batch = lines.filter(pa.array(ok))
        n = batch.num_rows
        if n == 0:
            continue
        tokens, rows = word_tokens(batch.column("text"))
        seen["empty_documents"] += int(n - np.count_nonzero(np.bincount(rows, minlength=n)))
        idx = pc.index_in(tokens, value_set=vocab)
        known = idx.is_valid().to_numpy(zero_copy_only=False)
        seen["unknown_features"] += int(len(known) - known.sum())
        X = csr_rows(rows[known], idx.fill_null(0).to_numpy()[known], n, len(vocab), model.kind == "bernoulli")
        log_post = log_posteriors(np.asarray(X @ model.weights.T) + model.bias + model.class_log_prior)
        order, probs, picked = ranked_columns(log_post, k, threshold, n_ranked)
        prefix = np.arange(order.shape[1])[None, :] < picked[:, None]
        ranked = np.full(n, n_ranked)
        yield pa.RecordBatch.from_arrays(
            [
                batch.column("id"),
                batch.column("gold"),
                lists(pc.take(classes, pa.array(order[prefix])), picked),
                pa.array(probs[:, 0]),
                lists(pc.take(classes, pa.array(order[:, :n_ranked].ravel())), ranked),
                lists(pa.array(probs[:, :n_ranked].ravel()), ranked),
            ],
            names=["id", "gold", "predicted", "probability", "ranked_labels", "ranked_probabilities"],
        )
    tally.add(dict(seen))


class _TallyParam:
    """An accumulator's parameter (pyspark's AccumulatorParam protocol): counts by name, summed."""

    def zero(self, value):
        return {}

    def addInPlace(self, a, b):
        for key, n in b.items():
            a[key] = a.get(key, 0) + n
        return a


def arrow_predictions(spark, inputs: Inputs, cfg: ExperimentConfig, bc, k: int, threshold: float):
    """Score ``tsv``/``sms`` test text in one pass without Python per token: Spark reads the
    lines, and each Arrow batch is tokenized (``arrow_text.word_tokens``), looked up and scored
    by vectorised code. Ids: tsv's own; for sms ``FILE#ROW`` (a row id unique within the run).

    Returns the predictions and ``tally``, an accumulator of the line statistics (lines read,
    blank, malformed) and the out-of-vocabulary tokens. Read it after the one action that writes
    the predictions: the scoring runs in that job's result stage, where Spark applies each
    task's accumulator update exactly once (a failed or retried attempt's updates are dropped).
    """
    from pyspark.sql import functions as F

    from .readers import hadoop_escape

    spec = inputs.spec
    lines = spark.read.text([hadoop_escape(f"file://{f}") for f in inputs.files])
    if spec.format == "sms":
        parts = F.split("value", "\t", 2)
        label = F.trim(F.get(parts, 0))
        doc_id = F.concat(F.regexp_extract(F.input_file_name(), r"([^/]*)$", 1), F.lit("#"), F.monotonically_increasing_id().cast("string"))
        gold = F.array(label)
        ok = (F.size(parts) == 2) & (label != "")
        text = F.get(parts, 1)
    else:
        parts = F.split("value", "\t", 3)
        doc_id = F.trim(F.get(parts, 0))
        gold = F.filter(F.transform(F.split(F.get(parts, 1), ","), lambda x: F.trim(x)), lambda x: x != "")
        ok = (F.size(parts) == 3) & (doc_id != "") & (F.size(gold) > 0)
        text = F.get(parts, 2)
    blank = F.trim("value") == ""
    flagged = lines.select(
        F.coalesce(doc_id, F.lit("")).alias("id"),
        F.coalesce(gold, F.array().cast("array<string>")).alias("gold"),
        F.coalesce(text, F.lit("")).alias("text"),
        blank.alias("blank"),
        F.coalesce(ok, F.lit(False)).alias("ok"),
    )
    tally = spark.sparkContext.accumulator({}, _TallyParam())
    predictions = flagged.mapInArrow(lambda it: _arrow_score_batches(it, bc, k, threshold, tally), PREDICTION_DDL)
    return predictions, tally


def line_stats(tally: dict) -> dict:
    """The input statistics of a classify run from ``arrow_predictions``' tally."""
    stats = {k: v for k, v in tally.items() if v and k != "unknown_features"}
    stats["documents"] = tally.get("lines_read", 0) - tally.get("blank_lines", 0) - tally.get("malformed", 0)
    return stats


def write_nb_results(spark, predictions, out: Path, classes, extra: dict, started: float, late=None) -> dict:
    """Write predictions (staged), compute the metrics from what was written, add ``extra``
    (model, scoring, input statistics …) and what ``late()`` returns once the predictions are
    written (statistics counted by that job), and write metrics.json and report.txt beside them."""
    with staged_output(out, "results") as stage:
        predictions.write.parquet(str(stage / "predictions"))
        if late is not None:
            extra = {**extra, **late()}
        written = spark.read.parquet(str(stage / "predictions"))
        pairs = [(tuple(r["gold"]), tuple(r["predicted"]), r["count"]) for r in written.groupBy("gold", "predicted").count().collect()]
        metrics = classification_metrics(pairs, classes)
        metrics.update(extra)
        metrics["unknown_label_count"] = sum(n for g, _, n in pairs if any(x not in classes for x in g))
        metrics["seconds"] = round(time.time() - started, 2)
        write_json(stage / "metrics.json", metrics)
        (stage / "report.txt").write_text(format_classification_report(metrics) + "\n", encoding="utf-8")
    return metrics


def classify_nb(spark, cfg: ExperimentConfig, model_dir: Path, inputs: Inputs, out: Path, log=print) -> dict:
    """Score the test records of ``inputs``; write predictions, metrics.json and report.txt.

    ``cfg.scoring``: ``broadcast`` (the model as arrays, scored per partition in batches),
    ``join`` (multinomial and Bernoulli: test tokens joined with the count table), ``arrow``
    (tsv/sms text, whole Arrow batches), or ``auto`` (join when a text model exceeds
    ``broadcast_limit_mb``, else arrow where it can read the input, else broadcast).
    """
    started = time.time()
    manifest = load_nb_manifest(model_dir)
    model_cfg = manifest["config"]["nb"]
    # the features must be made as in training: tokenizer, label view and table columns come from the model
    nb = NBSpec(**{**model_cfg, "numeric_columns": tuple(manifest["columns"].get("numeric", ())),
                   "categorical_columns": tuple(manifest["columns"].get("categorical", ())),
                   "alpha": cfg.nb.alpha, "var_smoothing": cfg.nb.var_smoothing, "top_k": cfg.nb.top_k,
                   "threshold": cfg.nb.threshold})
    cfg = ExperimentConfig(**{**{f: getattr(cfg, f) for f in cfg.__dataclass_fields__}, "nb": nb})
    estimated = len(manifest["label_counts"]) * manifest["features"] * 8
    text_model = manifest["model"] in ("multinomial", "bernoulli")
    scoring = cfg.scoring
    if scoring == "auto":
        if estimated > cfg.broadcast_limit_mb * 2**20 and text_model:
            scoring = "join"
        else:  # table models are always broadcast: their tables are features x values
            scoring = "arrow" if arrow_by_default(cfg, inputs) else "broadcast"
    if scoring == "join" and not text_model:
        raise InputError(f"join scoring is for multinomial and Bernoulli models; this one is {manifest['model']} (use scoring = broadcast)")
    if scoring == "arrow" and not sql_engine_applies(cfg, inputs):
        raise InputError(
            "scoring arrow reads tsv or sms test text without holdout, with nb.tokenizer = words and a "
            "multinomial or Bernoulli model; use scoring broadcast for this config"
        )
    counts = read_parquet_checked(spark, model_dir / "counts", COUNT_DDL)
    k, threshold = nb.top_k, nb.threshold
    model = bc = scored = mixed = None
    unknown, bad = None, []
    try:
        if scoring != "join":  # broadcast and arrow scoring both ship the model as arrays
            model = build_nb_model(counts.collect(), manifest["model"], nb.alpha, nb.var_smoothing)
            bc = spark.sparkContext.broadcast(model)
        late = None
        if scoring == "arrow":
            predictions, tally = arrow_predictions(spark, inputs, cfg, bc, k, threshold)
            stats = None

            def late():
                return {"input_stats": line_stats(tally.value), "unknown_features": tally.value.get("unknown_features", 0)}
        else:
            mixed = records_rdd(spark, inputs, cfg)[0].cache()
            stats, bad = split_stats(_run_failfast(lambda: count_events(mixed.filter(is_stat)).collect()), cfg.max_bad_examples)
            records = mixed.filter(lambda r: not is_stat(r))
            if scoring == "join":
                predictions = join_predictions(spark, counts, records, manifest["model"], nb.alpha, k, threshold)
            else:
                scored = records.mapPartitions(lambda it: _score_partition(it, bc, k, threshold)).cache()
                unknown = int(scored.filter(lambda r: r[0] == "__unknown__").map(lambda r: r[1]).sum())
                predictions = spark.createDataFrame(scored.filter(lambda r: r[0] != "__unknown__"), schema=PREDICTION_DDL)
        classes = model.classes if model is not None else tuple(sorted(manifest["label_counts"]))
        extra = {
            "model": str(model_dir),
            "kind": manifest["model"],
            "scoring": scoring,
            "test_input": str(inputs.root),
            "input_stats": stats,
            "malformed_examples": bad,
            "unknown_features": unknown,
            "broadcast_bytes": None if model is None else model.nbytes(),
        }
        metrics = write_nb_results(spark, predictions, out, classes, extra, started, late)
    finally:
        for cached in (mixed, scored):
            if cached is not None:
                cached.unpersist()
        if bc is not None:
            bc.unpersist()
    log(format_classification_report(metrics))
    log(f"results written to {out}")
    return metrics
