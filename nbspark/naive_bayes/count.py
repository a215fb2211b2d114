"""The naive Bayes family's counting engines, behind one function: ``count_nb(spark, cfg, inputs, engine)
-> counting.Counted`` with the count table in ``naive_bayes.events.COUNT_DDL``.

* ``pairs`` / ``combine``: documents or rows (``naive_bayes.inputs``) flatMapped into ``((event, label,
  feature, value), count | (n, Σx, Σx²))`` and summed by ``spine.counting.count_events``; statistics
  ride the shuffle.
* ``dataframe``: Spark SQL only (split, explode, groupBy) for tsv/sms text with the words tokenizer.
* ``arrow``: the lines as Spark read them, each Arrow batch decoded, parsed (``inputs.lines``) and
  counted by pyarrow, summed in the task.
* ``local`` (``nbspark train --in-process``, ``nbspark.fit``): the arrow engine's rule, or the
  Python engines' where it does not apply, in this process, no Spark, for inputs that fit one
  (``_local_counts``).

The SQL engines sum statistics rows (``MARK``) beside the counts and name the first malformed lines
afterwards. Which engine applies, and what ``auto`` picks, is ``settings.capabilities.resolve_engine``.
"""

from __future__ import annotations

import dataclasses

from nbspark.inputs.files import text_frame
from nbspark.inputs.lines import parse_line
from nbspark.inputs.resolve import Inputs
from nbspark.inputs.stats import MARK, first_malformed_lines, is_stat, run_failfast, split_stats
from nbspark.inputs.tokens import NON_WORD_RUN, WORD_CHAR
from nbspark.naive_bayes.count_table import table_fields
from nbspark.naive_bayes.events import COUNT_DDL, add_values, event_row
from nbspark.naive_bayes.inputs import records_rdd, sampled_events, table_sums, text_lines
from nbspark.settings.capabilities import engine_problem
from nbspark.settings.config import ExperimentConfig
from nbspark.settings.naive_bayes import COUNTED_AS
from nbspark.spark.session import cache_coalescable
from nbspark.spine.counting import Counted, combine_partition, count_events
from nbspark.spine.frames import local_frame, schema_of

__all__ = ["count_nb"]


def count_nb(spark, cfg: ExperimentConfig, inputs: Inputs, engine: str) -> Counted:
    """Count the naive Bayes events of ``inputs`` with ``engine`` (resolved by the plan:
    ``settings.capabilities.resolve_engine``). A complement model counts as a multinomial one
    (``settings.naive_bayes.COUNTED_AS``): the two read one count table."""
    if cfg.nb.model in COUNTED_AS:
        cfg = dataclasses.replace(cfg, nb=dataclasses.replace(cfg.nb, model=COUNTED_AS[cfg.nb.model]))
    if engine == "local":
        return _local_counts(cfg, inputs)
    if engine in ("dataframe", "arrow"):
        return _sql_counts(spark, cfg, inputs, engine)
    return _python_counts(spark, cfg, inputs, engine)


def _python_counts(spark, cfg: ExperimentConfig, inputs: Inputs, engine: str) -> Counted:
    events_of = sampled_events(cfg.nb.model, cfg.sample, cfg.sample_seed)  # every record unless sampled
    summed = table_sums(spark, inputs, cfg) if engine == "combine" else None
    if summed is not None:  # a table, each partition's events summed already: only the shuffle's sum is left
        pairs, columns = summed
        reduced = count_events(pairs, cfg.partitions, "pairs", add_values).cache()
    else:
        mixed, columns, _ = records_rdd(spark, inputs, cfg)
        reduced = count_events(mixed.flatMap(events_of), cfg.partitions, engine, add_values).cache()
    try:
        stats, bad = split_stats(
            run_failfast(lambda: reduced.filter(is_stat).collect(), cfg.mode), cfg.max_bad_examples
        )
        rows = reduced.filter(lambda kv: not is_stat(kv)).map(lambda kv: event_row(kv[0], kv[1]))
        return Counted(
            engine,
            spark.createDataFrame(rows, schema=schema_of(COUNT_DDL)),
            stats,
            bad,
            {"columns": columns},
            reduced,
            rows,
        )
    except BaseException:
        reduced.unpersist()
        raise


def _sql_counts(spark, cfg: ExperimentConfig, inputs: Inputs, engine: str) -> Counted:
    """Count naive Bayes text events with Spark SQL only, in one pass: split, explode, groupBy.

    The same events and counts as the Python engines for ``tsv``/``sms`` input with the
    ``words`` tokenizer (lower-case, split on ``inputs.tokens.NON_WORD_RUN``, Python's ``\\W+``),
    and no Python per token. Each line explodes into its (label, token) pairs plus one marker
    pair per (document, label) and one per blank or malformed line, so a single
    ``groupBy(label, token).count()`` yields the counts and the statistics together (a line
    count is the only other pass). The ``arrow`` engine decodes and parses the lines by the same
    rules in pyarrow (``inputs.lines``) and counts each Arrow batch there (``_arrow_agg``).
    """
    from pyspark.sql import functions as F

    nb, spec = cfg.nb, inputs.spec
    lines = text_frame(spark, inputs.files)
    if engine == "arrow":
        return _finish_counts(
            spark, _arrow_agg(lines, spec.format, nb.model, cfg.partitions), cfg, inputs, engine
        )
    parsed_lines = text_lines(lines, spec.format)
    labels, text, category = F.col("labels"), F.col("text"), F.col("category")
    # split leaves empty strings at the edges; they are dropped after the explode (a higher-order
    # filter here would run interpreted, per element)
    tokens = F.split(F.lower(text), NON_WORD_RUN)
    if nb.model == "bernoulli":
        tokens = F.array_distinct(tokens)
    # the flatMap: a valid line gives (label, token) for its labels and tokens, plus a (label,
    # doc) marker per label; any other line gives one (statistic, marker) pair
    # each expensive expression once: the tokens and labels are columns before they are reused
    # (a document is empty when its text has no word character)
    parsed = parsed_lines.select(
        labels.alias("labels"),
        tokens.alias("tokens"),
        text.rlike(WORD_CHAR).alias("has_word"),
        category.alias("category"),
    )
    labels, tokens, category = F.col("labels"), F.col("tokens"), F.col("category")
    valid = category == "documents"
    markers = F.when(F.col("has_word"), F.array(F.lit(MARK + "doc"))).otherwise(
        F.array(F.lit(MARK + "doc"), F.lit(MARK + "empty_documents"))
    )
    agg = cache_coalescable(
        parsed.select(
            F.when(valid, labels).otherwise(F.array(F.concat(F.lit(MARK), category))).alias("labels"),
            F.when(valid, F.concat(tokens, markers)).otherwise(F.array(F.lit(MARK))).alias("tokens"),
        )
        .select(F.explode("labels").alias("label"), "tokens")
        .select("label", F.explode("tokens").alias("token"))
        .where(F.col("token") != "")
        .groupBy("label", "token")
        .count()
    )
    return _finish_counts(spark, agg, cfg, inputs, engine, lambda: _line_stats(lines))


def _line_stats(lines) -> dict:
    """The lines read and the U+FFFD their decoding gives (those of invalid UTF-8 and any the text
    holds), in one pass over a text DataFrame. The split decodes a line as the JVM does for the
    Python engines' lines and the SQL parse (``make_valid_utf8`` would follow Python's rule, which
    replaces some byte sequences with more U+FFFD)."""
    from pyspark.sql import functions as F

    value = F.col("value")
    replaced = F.when(
        ~F.is_valid_utf8(value) | value.contains("\ufffd"), F.size(F.split(value, "\ufffd", -1)) - 1
    )
    row = lines.agg(
        F.count(F.lit(1)).alias("n"), F.coalesce(F.sum(replaced), F.lit(0)).alias("replaced")
    ).first()
    return {"lines_read": row["n"], **({"decode_replacements": row["replaced"]} if row["replaced"] else {})}


def _finish_counts(
    spark, agg, cfg: ExperimentConfig, inputs: Inputs, engine: str, count_lines=None
) -> Counted:
    """From a cached ``(label, token, count)`` aggregate with markers: the count table, the
    statistics (``count_lines`` gives ``lines_read`` and ``decode_replacements`` where the aggregate
    has no markers for them), the first malformed lines (a second scan, only when there are any), and the
    manifest's ``label_counts`` and ``features``."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    nb = cfg.nb
    try:
        # one job: the marker rows, the distinct features (for the manifest, no read-back) and the
        # (label, token) rows (for the table's file count, no count job). Grouped by token (and a
        # marker row's label, so that each marker row stays a group of its own): on the arrow
        # engine's aggregate, partitioned by token, that needs no shuffle, where a global
        # count_distinct shuffles twice. The two sums are observed on the way, so no global
        # aggregate (a shuffle, and a job more) follows
        marker = F.col("label").startswith(MARK) | F.col("token").startswith(MARK)
        per_token = agg.groupBy("token", F.when(marker, F.col("label")).alias("marked")).agg(
            F.count_if(~marker).alias("pairs"),
            F.sum(F.when(marker, F.col("count"))).alias("count"),
        )
        sums = Observation("nbspark_count_summary")
        observed = per_token.observe(
            sums,
            F.count_if(F.col("pairs") > 0).alias("features"),
            F.coalesce(F.sum("pairs"), F.lit(0)).alias("pairs"),
        )
        special = (
            observed.where(F.col("marked").isNotNull())
            .select(F.col("marked").alias("label"), "token", "count")
            .collect()
        )
        summary = sums.get
        stats, docs_y, tokens_y = _read_markers(special, count_lines() if count_lines is not None else {})
        yx = agg.where(~F.col("label").startswith(MARK) & ~F.col("token").startswith(MARK))
        null = F.lit(None).cast("string")
        rows = [("Y=ANY", None, None, None, sum(docs_y.values()))] + [
            ("Y", y, None, None, n) for y, n in sorted(docs_y.items())
        ]
        if (
            nb.model == "multinomial" and engine == "arrow"
        ):  # YX=ANY from the markers: no shuffle in the write
            rows += [("YX=ANY", y, None, None, n) for y, n in sorted(tokens_y.items())]
        head = local_frame(spark, rows, "event STRING, label STRING, feature STRING, value STRING, n BIGINT")
        counts = head.unionByName(
            yx.select(
                F.lit("YX").alias("event"),
                "label",
                F.col("token").alias("feature"),
                null.alias("value"),
                F.col("count").alias("n"),
            )
        )
        if nb.model == "multinomial" and engine != "arrow":  # YX=ANY: the sum of each label's YX counts
            counts = counts.unionByName(
                yx.groupBy("label")
                .agg(F.sum("count").alias("n"))
                .select(
                    F.lit("YX=ANY").alias("event"), "label", null.alias("feature"), null.alias("value"), "n"
                )
            )
        counts = counts.select(
            "event",
            "label",
            "feature",
            "value",
            F.col("n").cast("long").alias("n"),
            F.lit(None).cast("double").alias("sum"),
            F.lit(None).cast("double").alias("sumsq"),
        )
        fmt = inputs.spec.format
        bad = first_malformed_lines(
            spark.sparkContext,
            inputs.files,
            lambda line: parse_line(line, fmt),
            stats,
            cfg.mode,
            cfg.max_bad_examples,
        )
        # the rows written: Y=ANY, one Y per label, the YX pairs and (multinomial) at most one YX=ANY per
        # label
        rows = 1 + len(docs_y) + summary["pairs"] + (len(docs_y) if nb.model == "multinomial" else 0)
        return Counted(
            engine,
            counts,
            stats,
            bad,
            {"label_counts": docs_y, "features": summary["features"], "rows": rows},
            agg,
        )
    except BaseException:
        agg.unpersist()
        raise


def _read_markers(special, line_stats: dict) -> tuple[dict, dict, dict]:
    """The run's statistics (from ``line_stats`` and the statistic markers), the documents per
    label and (the arrow engine, multinomial) the tokens per label, from the marker rows."""
    stats, docs_y, tokens_y = dict(line_stats), {}, {}
    for r in special:
        if r["label"].startswith(MARK):
            stats[r["label"][1:]] = r["count"]
        elif r["token"] == MARK + "doc":
            docs_y[r["label"]] = r["count"]
        elif r["token"] == MARK + "tokens":
            tokens_y[r["label"]] = r["count"]
        else:  # empty documents, once per label
            stats["empty_documents"] = stats.get("empty_documents", 0) + r["count"]
    stats.pop("documents", None)
    stats["documents"] = stats.get("lines_read", 0) - sum(  # an empty input has no line to count
        v for k, v in stats.items() if k == "blank_lines" or k.startswith("malformed.")
    )
    malformed = {k: v for k, v in stats.items() if k.startswith("malformed.")}
    if malformed:
        stats["malformed"] = sum(malformed.values())
    return stats, docs_y, tokens_y


def _arrow_count_batches(batches, fmt, model_kind):
    """mapInArrow: partial ``(label, token, n)`` counts of whole batches, markers included,
    summed inside the task (``spine.arrow_counts.PartialCounts``) before they reach the shuffle.

    Rows are input lines (``value``) as Spark read them, decoded and parsed here
    (``inputs.lines``); a document's tokens count under each of its labels here, in pyarrow (an
    ``explode`` in Spark would copy the text once per label). The markers: lines read and by
    category, U+FFFD, empty documents, documents per label and, for a multinomial model, tokens per
    label (its ``YX=ANY`` count, which the write then takes from the summary instead of a shuffle of
    the pairs by label).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from nbspark.inputs.arrow_tokens import decode_replacements, documents
    from nbspark.inputs.lines import jvm_decoded, parse_lines
    from nbspark.naive_bayes.arrow_count import LABEL_TOKEN_SCHEMA as schema
    from nbspark.naive_bayes.arrow_count import count_label_tokens
    from nbspark.spine.arrow_counts import PartialCounts

    def table(labels, tokens, counts):
        return pa.table(
            [pa.array(labels, pa.string()), pa.array(tokens, pa.string()), pa.array(counts, pa.int64())],
            schema=schema,
        )

    def per_label(
        grouped, token, counts
    ):  # one marker row per label of a group-by: (label, token, its count)
        return pa.table(
            [
                grouped.column("label"),
                pa.array([token] * grouped.num_rows, pa.string()),
                grouped.column(counts),
            ],
            schema=schema,
        )

    partial = PartialCounts()
    for lines in batches:
        value = jvm_decoded(lines.column("value"))
        batch = parse_lines(value, fmt)
        cats = pa.table({"c": batch.column("category")}).group_by("c").aggregate([([], "count_all")])
        out = [
            table([MARK + "lines_read"], [MARK], [batch.num_rows]),
            table(
                [MARK + c for c in cats.column("c").to_pylist()],
                [MARK] * cats.num_rows,
                cats.column("count_all").to_pylist(),
            ),
        ]
        replaced = decode_replacements(value)
        if replaced:
            out.append(table([MARK + "decode_replacements"], [MARK], [replaced]))
        docs = documents(batch)
        if docs.num_rows:
            counted, has_tokens = count_label_tokens(
                docs.column("labels"), docs.column("text"), model_kind == "bernoulli"
            )
            empty = int(len(has_tokens) - has_tokens.sum())
            if empty:
                out.append(table([MARK + "empty_documents"], [MARK], [empty]))
            out.append(counted)
            if (
                model_kind == "multinomial"
            ):  # YX=ANY: each label's tokens, the sum of its (label, token) counts
                out.append(
                    per_label(counted.group_by("label").aggregate([("n", "sum")]), MARK + "tokens", "n_sum")
                )
            docs_per_label = (
                pa.table({"label": pc.list_flatten(docs.column("labels"))})
                .group_by("label")
                .aggregate([([], "count_all")])
            )
            out.append(per_label(docs_per_label, MARK + "doc", "count_all"))
        for t in out:
            for summed in partial.add(t):
                yield from summed.to_batches()
    for t in partial.flush():
        yield from t.to_batches()


def _arrow_agg(lines, fmt: str, model_kind: str, partitions: int = 0):
    """The arrow engine's aggregate: lines decoded, parsed and counted per Arrow batch by pyarrow,
    in ``partitions`` partitions (0: Spark's shuffle partitions)."""
    from pyspark.sql import functions as F

    partial = lines.mapInArrow(
        lambda it: _arrow_count_batches(it, fmt, model_kind), "label STRING, token STRING, n BIGINT"
    )
    # shuffled by token alone (each task has already summed its rows, so no map-side combining is
    # lost): the summary then groups by token without another shuffle
    by_token = partial.repartition(partitions, "token") if partitions else partial.repartition("token")
    return cache_coalescable(by_token.groupBy("label", "token").agg(F.sum("n").alias("count")))


def _local_counts(cfg: ExperimentConfig, inputs: Inputs) -> Counted:
    """Counting in this process, no Spark: the arrow engine's rule where it applies (tsv or sms text
    without holdout, the words tokenizer), else the Python engines' (``_local_python_counts``)."""
    if engine_problem(cfg, "arrow") is None:
        return _local_arrow_counts(cfg, inputs)
    return _local_python_counts(cfg, inputs)


def _local_python_counts(cfg: ExperimentConfig, inputs: Inputs) -> Counted:
    """The Python engines without Spark: the records of ``naive_bayes.inputs.local_records`` (the
    Spark readers' partition functions over local files), their events (``record_events``) summed
    by ``add_values`` in a dict, as ``reduceByKey`` sums them; statistics and bad records ride along."""
    from nbspark.naive_bayes.inputs import local_records, local_table_sums
    from nbspark.storage.counts import rows_table

    events_of = sampled_events(cfg.nb.model, cfg.sample, cfg.sample_seed)  # every record unless sampled

    def reduce():
        if (summed := local_table_sums(inputs, cfg)) is not None:  # a table: by batches, as in Spark
            return summed
        records, columns = local_records(inputs, cfg)
        return dict(combine_partition((kv for r in records for kv in events_of(r)), add_values)), columns

    sums, columns = run_failfast(reduce, cfg.mode)  # failfast's worker error, as the Spark engines raise it
    stats, bad = split_stats([kv for kv in sums.items() if is_stat(kv)], cfg.max_bad_examples)
    rows = [event_row(k, v) for k, v in sums.items() if not is_stat((k, v))]
    table = rows_table(rows, COUNT_DDL)
    known = {"columns": columns, **table_fields(table), "rows": len(rows)}
    return Counted("local", table, stats, bad, known)


def _local_arrow_counts(cfg: ExperimentConfig, inputs: Inputs) -> Counted:
    """The arrow engine without Spark: every file's lines as Spark's text reader gives them
    (``spine.arrow_counts.local_batches``) through ``_arrow_count_batches`` (the engine's own rule) on
    a thread per core (``spine.arrow_counts.count_on_threads``), summed by pyarrow, then the count
    table assembled as ``_finish_counts`` assembles it in Spark. That assembly is a true twin of
    ``_finish_counts``, kept for inputs that fit one process (no JVM to start): tests hold the two
    tables and manifests equal."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from nbspark.naive_bayes.arrow_count import LABEL_TOKEN_SCHEMA
    from nbspark.spine.arrow_counts import checked_sum, count_on_threads, local_batches
    from nbspark.storage.tables import arrow_schema

    fmt, kind = inputs.spec.format, cfg.nb.model
    count = lambda batches: _arrow_count_batches(batches, fmt, kind)  # noqa: E731
    partial = pa.Table.from_batches(count_on_threads(local_batches(inputs.files), count), LABEL_TOKEN_SCHEMA)
    agg = checked_sum(partial, ["label", "token"], "n")
    marker = pc.or_(pc.starts_with(agg.column("label"), MARK), pc.starts_with(agg.column("token"), MARK))
    special = agg.filter(marker).rename_columns(["label", "token", "count"]).to_pylist()
    stats, docs_y, tokens_y = _read_markers(special, {})
    yx = agg.filter(pc.invert(marker))
    head = [("Y=ANY", None, None, sum(docs_y.values()))] + [
        ("Y", y, None, n) for y, n in sorted(docs_y.items())
    ]
    tail = [("YX=ANY", y, None, n) for y, n in sorted(tokens_y.items())] if kind == "multinomial" else []
    schema = arrow_schema(COUNT_DDL)
    ends = pa.Table.from_pylist(
        [dict(zip(("event", "label", "feature", "n"), r)) for r in head + tail], schema=schema
    )
    given = {
        "event": pa.array(["YX"] * yx.num_rows, pa.string()),
        "label": yx["label"],
        "feature": yx["token"],
        "n": yx["n_sum"],
    }  # the other columns NULL, as the SQL engine leaves them
    middle = pa.Table.from_arrays(
        [given.get(f.name, pa.nulls(yx.num_rows, f.type)) for f in schema], schema=schema
    )
    table = pa.concat_tables([ends.slice(0, len(head)), middle, ends.slice(len(head))])
    n = table.num_rows
    bad = first_malformed_lines(
        None, inputs.files, lambda line: parse_line(line, fmt), stats, cfg.mode, cfg.max_bad_examples
    )
    known = {"label_counts": docs_y, "features": pc.count_distinct(yx.column("token")).as_py(), "rows": n}
    return Counted("local", table, stats, bad, known)
