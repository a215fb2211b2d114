"""The naive Bayes family's scorers, behind one contract: each takes ``(spark, cfg, inputs, model
context)`` and returns a ``spine.classifying.Scored`` whose ``stats()`` gives, after the predictions are
written, ``input_stats``, ``malformed_examples`` and ``unknown_features``.

* ``broadcast``: the model as arrays (``naive_bayes.model.NBModel``), each partition scored in batches of
  ``BATCH`` records with one sparse matrix product; a csv or parquet table in permissive mode a
  whole Arrow batch at a time, its plain rows read by columns (``_table_scored``).
* ``join``: multinomial and Bernoulli models too large to broadcast: the test tokens joined with
  the count table, the weights derived from the same smoothing formulas (``join_scorer``).
* ``arrow``: tsv text, whole Arrow batches tokenized, looked up and scored by vectorised code.

Counts a scorer makes while scoring (unknown tokens, the arrow scorer's line statistics) go into
an accumulator updated in the write's result stage, where Spark applies each task's update exactly
once; it is read after the write. Which scorer applies is ``settings.capabilities.resolve_scoring``.
"""

from __future__ import annotations

from collections import Counter
from itertools import islice

from nbspark.inputs.files import text_frame
from nbspark.inputs.lines import parse_line
from nbspark.inputs.resolve import Inputs
from nbspark.inputs.stats import first_malformed_lines, is_stat, run_failfast, split_stats
from nbspark.naive_bayes.inputs import Doc, records_rdd
from nbspark.naive_bayes.join_scorer import join_predictions
from nbspark.naive_bayes.model import (
    NBModel,
    csr_rows,
    log_posteriors,
    ranked_columns,
    score_docs,
    text_jll,
    top_labels,
    unexplained,
)
from nbspark.naive_bayes.table_scores import score_rows
from nbspark.settings.config import ExperimentConfig
from nbspark.spine.classifying import Scored, predictions_table, scored_here
from nbspark.spine.counting import Tally, count_events
from nbspark.spine.frames import carried_columns, schema_of
from nbspark.storage.tables import ddl_fields

__all__ = ["BATCH", "PREDICTION_DDL", "RANKED", "score", "score_here"]

PREDICTION_DDL = (
    "id STRING NOT NULL, gold ARRAY<STRING> NOT NULL, predicted ARRAY<STRING> NOT NULL, "
    "probability DOUBLE, ranked_labels ARRAY<STRING> NOT NULL, ranked_probabilities ARRAY<DOUBLE> NOT NULL"
)
#: The predictions' own columns; a test table's column of one of these names is not carried into them.
PREDICTION_COLUMNS = tuple(name for name, _, _ in ddl_fields(PREDICTION_DDL))
BATCH = 4096  # records scored per matrix product
RANKED = 5  # ranked classes kept per prediction
#: What scoring counts beside the input's line statistics: tokens or values the model never saw,
#: and documents that no class can explain (every class scored −inf: ``naive_bayes.model.unexplained``).
SCORING_COUNTS = ("unknown_features", "unexplained_documents")


def score(
    spark, cfg: ExperimentConfig, inputs: Inputs, scoring: str, counts, model: NBModel | None, n_classes: int
) -> Scored:
    """Score the test records of ``inputs`` with ``scoring`` (resolved); ``model`` is the broadcast
    model (None for ``join``), ``counts`` the model's count table. The ranked columns keep the
    ``RANKED`` best classes, or all ``n_classes`` with ``nb.posteriors = "all"``."""
    ranked = n_classes if cfg.nb.posteriors == "all" else min(RANKED, n_classes)
    if scoring == "arrow":
        return _arrow_scored(spark, cfg, inputs, model, ranked)
    if scoring == "broadcast" and (batched := _table_scored(spark, cfg, inputs, model, ranked)) is not None:
        return batched
    mixed, columns, rows = records_rdd(spark, inputs, cfg)
    mixed = mixed.cache()
    try:
        stats, bad = split_stats(
            run_failfast(lambda: count_events(mixed.filter(is_stat)).collect(), cfg.mode),
            cfg.max_bad_examples,
        )
    except BaseException:
        mixed.unpersist()
        raise
    records = mixed.filter(lambda r: not is_stat(r))
    k, threshold = cfg.nb.top_k, cfg.nb.multilabel_threshold
    carry = _table_columns(spark, cfg, inputs, columns, rows)
    if scoring == "join":
        predictions, unknown = join_predictions(
            spark, counts, records, cfg.nb.model, cfg.nb.alpha, k, threshold, cfg.nb.prior_alpha, ranked
        )
        return Scored(
            carry(predictions),
            # join scoring needs alpha > 0 (capabilities), so every document has a class it can explain
            lambda: {
                "input_stats": stats,
                "malformed_examples": bad,
                "unknown_features": int(unknown.first()["u"]),
                "unexplained_documents": 0,
            },
            mixed.unpersist,
        )
    bc = spark.sparkContext.broadcast(model)
    tally = spark.sparkContext.accumulator({}, Tally())
    scored = records.mapPartitions(lambda it: _score_partition(it, bc, k, threshold, ranked, tally))

    def release():
        mixed.unpersist()
        bc.unpersist()

    predictions = spark.createDataFrame(scored, schema=PREDICTION_DDL)
    carried = carry(predictions)
    return Scored(
        carried,
        lambda: {
            "input_stats": stats,
            "malformed_examples": bad,
            **{k: tally.value.get(k, 0) for k in SCORING_COUNTS},
        },
        release,
        scored.getNumPartitions if carried is predictions else None,
    )


def _table_columns(spark, cfg: ExperimentConfig, inputs: Inputs, columns: dict, rows):
    """What adds to a table's predictions its columns that the model does not read (an id kept out of
    the features, a date: ``spine.frames.carried_columns``, a table's own ``id`` as ``table_id``),
    after ``id``, in the table's order and
    typed as the table reads them (a CSV's cells as the file writes them), joined by the row's index;
    ``rows`` are ``records_rdd``'s. The predictions as they are for text, or a table without such
    columns."""
    fields = rows[1] if rows is not None else []
    used = {cfg.nb.label_column, *columns.get("numeric", ()), *columns.get("categorical", ())}
    carried = carried_columns([f.name for f in fields], used, PREDICTION_COLUMNS, inputs.named)
    if not carried:
        return lambda predictions: predictions
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    kept = [f for f in fields if f.name in carried]
    names = [f.name for f in kept]
    # positional names in the join: a column may be named anything (a dot, "__row")
    schema = T.StructType(
        [
            T.StructField("__row", T.StringType(), False),
            *(T.StructField(f"__{i}", f.dataType, f.nullable) for i, f in enumerate(kept)),
        ]
    )
    cells = spark.createDataFrame(rows[0].map(lambda r: (str(r[0]), *(r[1].get(c) for c in names))), schema)

    def carry(predictions):
        joined = predictions.join(cells, predictions["id"] == cells["__row"], "left")
        return joined.select(
            "id", *(F.col(f"__{i}").alias(carried[c]) for i, c in enumerate(names)), *PREDICTION_COLUMNS[1:]
        )

    return carry


def _score_batch(model: NBModel, batch, k, threshold, n_ranked):
    """Prediction rows of a batch of ``Doc`` or ``Row`` records, and its ``SCORING_COUNTS``."""
    if isinstance(batch[0], Doc):
        jll, unknown = score_docs(model, [d.tokens for d in batch])
        gold = [d.labels for d in batch]
    else:
        jll, unknown = score_rows(model, [(r.categorical, r.numeric) for r in batch])
        gold = [(r.label,) for r in batch]
    dead = unexplained(jll)
    log_post = log_posteriors(jll)
    picked = top_labels(log_post, model.classes, k, threshold)
    ranked = top_labels(log_post, model.classes, n_ranked)
    rows = [
        (rec.id, list(g), [p[0] for p in pick], pick[0][1], [r[0] for r in rank], [r[1] for r in rank])
        for rec, g, pick, rank in zip(batch, gold, picked, ranked)
    ]
    return rows, Counter(unknown_features=unknown, unexplained_documents=dead)


def _score_partition(records, bc_model, k, threshold, n_ranked, tally):
    model = bc_model.value
    seen = Counter()
    records = iter(records)
    while batch := list(islice(records, BATCH)):  # BATCH records at a time, the last batch shorter
        rows, counts = _score_batch(model, batch, k, threshold, n_ranked)
        seen.update(counts)
        yield from rows
    tally.add(dict(seen))


def _arrow_scored(spark, cfg: ExperimentConfig, inputs: Inputs, model: NBModel, n_ranked: int) -> Scored:
    """Score ``tsv`` test text in one pass without Python per token: Spark reads the
    lines, each Arrow batch is tokenized (``inputs.arrow_tokens.token_codes``), looked up and scored by
    vectorised code; the lines reach Python as Spark read them, to be decoded and cut there
    (``inputs.lines``). Line statistics and unknown tokens are counted into the accumulator; the
    first malformed lines are named after the write (in failfast mode the first one stops the run
    before the results are renamed into place)."""
    spec = inputs.spec
    lines = text_frame(spark, inputs.files)
    bc = spark.sparkContext.broadcast(model)
    tally = spark.sparkContext.accumulator({}, Tally())
    k, threshold, fmt = cfg.nb.top_k, cfg.nb.multilabel_threshold, spec.format
    predictions = lines.mapInArrow(
        lambda it: _arrow_score_batches(it, fmt, bc, k, threshold, n_ranked, tally), PREDICTION_DDL
    )
    return Scored(
        predictions,
        lambda: _arrow_stats(spark.sparkContext, cfg, inputs, tally.value),
        bc.unpersist,
        lambda: lines.rdd.getNumPartitions(),  # mapInArrow keeps the input's partitions
    )


def _arrow_stats(sc, cfg: ExperimentConfig, inputs: Inputs, counted: dict) -> dict:
    """The arrow scorer's ``Scored.stats`` from what it ``counted``: the line statistics, the first
    malformed lines (found by a scan of the files that stops at them: ``sc`` None, in this process)
    and the scoring counts."""
    fmt = inputs.spec.format
    line_stats = {k: v for k, v in counted.items() if v and k not in SCORING_COUNTS}
    malformed = sum(v for k, v in line_stats.items() if k.startswith("malformed."))
    if malformed:
        line_stats["malformed"] = malformed
    line_stats = dict(sorted(line_stats.items()))
    bad = first_malformed_lines(
        sc, inputs.files, lambda line: parse_line(line, fmt), line_stats, cfg.mode, cfg.max_bad_examples
    )
    return {
        "input_stats": line_stats,
        "malformed_examples": bad,
        **{k: counted.get(k, 0) for k in SCORING_COUNTS},
    }


def score_here(cfg: ExperimentConfig, inputs: Inputs, scoring: str, model: NBModel, n_classes: int) -> Scored:
    """``score`` in this process, for a classify run planned in process: test text, or a table (a
    CSV, a Parquet table typed as Spark types it, a scikit-learn dataset), in either mode
    (``settings.capabilities.classify_here_problem``), by the Spark scorers' own rules over the local
    files: ``arrow`` (tsv) the lines in Arrow batches (``spine.arrow_counts.local_batches``) through
    ``_arrow_score_batches``; ``broadcast`` the records of ``naive_bayes.inputs.local_records`` (the
    Spark readers' partition functions) through ``_score_partition``, their statistics summed as
    ``count_events`` sums them, and a table's rows through the table scorer's batches
    (``_table_here``). The predictions are a pyarrow Table of ``PREDICTION_DDL`` (a table's columns
    that ride along after ``id``)."""
    from types import SimpleNamespace

    from nbspark.naive_bayes.inputs import local_records
    from nbspark.spine.counting import LocalTally
    from nbspark.storage.tables import arrow_schema

    ranked = n_classes if cfg.nb.posteriors == "all" else min(RANKED, n_classes)
    k, threshold, tally, model = (
        cfg.nb.top_k,
        cfg.nb.multilabel_threshold,
        LocalTally(),
        SimpleNamespace(value=model),
    )
    if inputs.spec.format in ("csv", "sklearn", "parquet"):
        return _table_here(cfg, inputs, model, k, threshold, ranked, tally)
    if scoring == "arrow":
        from nbspark.spine.arrow_counts import local_batches

        batches = _arrow_score_batches(
            local_batches(inputs.files), inputs.spec.format, model, k, threshold, ranked, tally
        )
        predictions = predictions_table(batches, arrow_schema(PREDICTION_DDL))
        return Scored(predictions, lambda: _arrow_stats(None, cfg, inputs, tally.value))
    records, _ = local_records(inputs, cfg)
    predictions, stats, bad = scored_here(
        records,
        lambda docs: _score_partition(docs, model, k, threshold, ranked, tally),
        PREDICTION_DDL,
        cfg.mode,
        cfg.max_bad_examples,
    )
    return Scored(
        predictions,
        lambda: {
            "input_stats": stats,
            "malformed_examples": bad,
            **{k: tally.value.get(k, 0) for k in SCORING_COUNTS},
        },
    )


def _arrow_score_batches(batches, fmt, bc_model, k, threshold, n_ranked, tally):
    """mapInArrow: tokenize, look up and score whole Arrow batches; the prediction columns are
    built as Arrow arrays from numpy (no Python per document or token). Rows are every input
    line (``value``) of tsv text, its bytes as read: decoded and parsed here
    (``inputs.lines``); every line is counted into ``tally`` by its category, with the lines read,
    U+FFFD, empty documents and out-of-vocabulary tokens, and only documents are scored."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from nbspark.inputs.arrow_tokens import decode_replacements, documents, token_codes
    from nbspark.inputs.lines import jvm_decoded, parse_lines

    model: NBModel = bc_model.value
    vocab = pa.array(sorted(model.vocab, key=model.vocab.get))
    classes = pa.array(model.classes, pa.string())
    seen = Counter()
    for raw in batches:
        value = jvm_decoded(raw.column("value"))
        lines = parse_lines(value, fmt)
        categories = pc.value_counts(lines.column("category"))
        seen.update(dict(zip(categories.field("values").to_pylist(), categories.field("counts").to_pylist())))
        seen["lines_read"] += lines.num_rows
        seen["decode_replacements"] += decode_replacements(value)
        batch = documents(lines)
        n = batch.num_rows
        if n == 0:
            continue
        codes, batch_vocab, rows = token_codes(batch.column("text"))
        seen["empty_documents"] += int(n - np.count_nonzero(np.bincount(rows, minlength=n)))
        idx = (
            pc.index_in(batch_vocab, value_set=vocab).fill_null(-1).to_numpy()[codes]
        )  # each distinct token looked up once
        known = idx >= 0
        seen["unknown_features"] += int(len(known) - known.sum())
        X = csr_rows(rows[known], idx[known], n, len(vocab), model.kind == "bernoulli")
        per_row = None
        if (
            model.unseen_totals is not None
        ):  # Cohen's v2: the unknown tokens of each row, and the distinct ones
            unknown_rows = rows[~known]
            pairs = pa.table({"r": unknown_rows, "t": codes[~known]}).group_by(["r", "t"]).aggregate([])
            per_row = np.vstack(
                [
                    np.bincount(unknown_rows, minlength=n),
                    np.bincount(pairs.column("r").to_numpy(), minlength=n),
                ]
            )
        jll = text_jll(model, X, per_row)
        seen["unexplained_documents"] += unexplained(jll)
        log_post = log_posteriors(jll)
        yield _prediction_batch(
            batch.column("id"), batch.column("labels"), log_post, classes, k, threshold, n_ranked
        )
    tally.add(dict(seen))


def _lists(values, lengths):
    """A pyarrow list array of ``values`` cut into ``lengths``."""
    import numpy as np
    import pyarrow as pa

    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def _prediction_batch(ids, gold, log_post, classes, k, threshold, n_ranked, carried: dict | None = None):
    """The prediction columns (``PREDICTION_DDL``, with a table's ``carried`` columns, name -> array,
    after ``id``) of rows' log-posteriors, built as Arrow arrays from numpy: ``ranked_columns``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    order, probs, picked = ranked_columns(log_post, k, threshold, n_ranked)
    prefix = np.arange(order.shape[1])[None, :] < picked[:, None]
    ranked = np.full(len(log_post), n_ranked)
    carried = carried or {}
    return pa.RecordBatch.from_arrays(
        [
            ids,
            *carried.values(),
            gold,
            _lists(pc.take(classes, pa.array(order[prefix])), picked),
            pa.array(probs[:, 0]),
            _lists(pc.take(classes, pa.array(order[:, :n_ranked].ravel())), ranked),
            _lists(pa.array(probs[:, :n_ranked].ravel()), ranked),
        ],
        names=["id", *carried, "gold", "predicted", "probability", "ranked_labels", "ranked_probabilities"],
    )


def _table_scored(
    spark, cfg: ExperimentConfig, inputs: Inputs, model: NBModel, n_ranked: int
) -> Scored | None:
    """A csv or parquet test table scored a batch at a time, in one pass (permissive mode): its rows
    reach Python in Arrow batches (``tables.TableRows.map_batches``), the plain ones are read by
    columns (``table_batches.read_plain``) and every other by the row rule, all scored by
    ``table_scores.score_columns``, and the columns that ride along (``carried_columns``) are taken
    from the batch. Input statistics, malformed rows and scoring counts go into the accumulator.
    None where the rows do not come through Arrow, or in failfast mode (record by record, then)."""
    from pyspark.sql import types as T

    from nbspark.naive_bayes.inputs import table_rule
    from nbspark.naive_bayes.tables import table_source

    if inputs.spec.format not in ("csv", "parquet") or cfg.mode != "permissive":
        return None
    source, numeric, categorical, fields = table_source(spark, inputs, cfg.nb)
    rule = table_rule(inputs, cfg, numeric, categorical)
    used = {cfg.nb.label_column, *numeric, *categorical}
    carried = carried_columns([f.name for f in fields], used, PREDICTION_COLUMNS, inputs.named)
    schema = schema_of(PREDICTION_DDL)
    kept = [T.StructField(carried[f.name], f.dataType, True) for f in fields if f.name in carried]
    schema = T.StructType([schema.fields[0], *kept, *schema.fields[1:]])
    bc = spark.sparkContext.broadcast(model)
    tally = spark.sparkContext.accumulator({}, Tally())
    k, threshold = cfg.nb.top_k, cfg.nb.multilabel_threshold
    predictions = source.map_batches(
        lambda it, _: _table_score_batches(it, rule, bc, k, threshold, n_ranked, carried, tally), schema
    )
    if predictions is None:
        bc.unpersist()
        return None

    return Scored(
        predictions,
        lambda: _table_stats(tally.value, cfg.max_bad_examples),
        bc.unpersist,
        lambda: source.frame.rdd.getNumPartitions(),
    )


def _table_stats(counted: dict, keep_bad: int) -> dict:
    """The table scorer's ``Scored.stats`` from what it ``counted``: the input's statistics, its first
    malformed rows and the scoring counts."""
    input_stats, bad = split_stats([(key, n) for key, n in counted.items() if is_stat((key, n))], keep_bad)
    return {
        "input_stats": input_stats,
        "malformed_examples": bad,
        **{c: counted.get(c, 0) for c in SCORING_COUNTS},
    }


def _table_here(cfg: ExperimentConfig, inputs: Inputs, model, k, threshold, n_ranked: int, tally) -> Scored:
    """``_table_scored`` in this process, in either mode (failfast: the first malformed row stops
    it, as the row rule raises): a table's rows read as a train in process reads them
    (``tables.local_table_rows``), in numbered batches (``inputs.numbered_batches``) through
    ``_table_score_batches``; the columns that ride along typed as read (a CSV's: text)."""
    import pyarrow as pa

    from nbspark.naive_bayes.inputs import numbered_batches, table_rule
    from nbspark.naive_bayes.tables import local_table_rows
    from nbspark.storage.tables import arrow_schema

    table, places, numeric, categorical = local_table_rows(inputs, cfg.nb)
    rule = table_rule(inputs, cfg, numeric, categorical)
    used = {cfg.nb.label_column, *numeric, *categorical}
    carried = carried_columns(table.column_names, used, PREDICTION_COLUMNS, inputs.named)
    out = _table_score_batches(
        numbered_batches(table, places), rule, model, k, threshold, n_ranked, carried, tally
    )
    own = list(arrow_schema(PREDICTION_DDL))
    kept = [pa.field(carried[f.name], f.type) for f in table.schema if f.name in carried]
    predictions = run_failfast(lambda: predictions_table(out, pa.schema([own[0], *kept, *own[1:]])), cfg.mode)
    return Scored(predictions, lambda: _table_stats(tally.value, cfg.max_bad_examples))


def _table_score_batches(batches, rule, bc_model, k, threshold, n_ranked, carried: dict, tally):
    """mapInArrow: a table's numbered batches scored (``_table_scored``), each row in its place."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from nbspark.naive_bayes.table_batches import split_batch
    from nbspark.naive_bayes.table_scores import score_columns

    model: NBModel = bc_model.value
    classes = pa.array(model.classes, pa.string())
    seen = Counter()
    for batch, index, place in batches:
        read, rest, records = split_batch(batch, index, place, rule)
        parts = []  # (positions in the batch, joint log-likelihoods, labels)
        if read is not None:
            seen.update(dict(read.stat_records()))
            numbers = {
                c: np.where(
                    read.finite[c].to_numpy(zero_copy_only=False), x.to_numpy(zero_copy_only=False), np.nan
                )
                for c, x in read.numbers.items()
            }
            cats = {c: v.to_pylist() for c, v in read.categories.items()}
            jll, unknown = score_columns(model, len(read.at), numbers, cats)
            seen["unknown_features"] += unknown
            parts.append((read.at, jll, read.label.to_pylist()))
        if records:
            at = dict(zip(index[rest].tolist(), rest.tolist()))
            docs = []
            for record in rule.rows(records):
                if is_stat(record):
                    seen[record[0]] += record[1]
                else:
                    docs.append(record)
            if docs:
                jll, unknown = score_rows(model, [(d.categorical, d.numeric) for d in docs])
                seen["unknown_features"] += unknown
                parts.append(
                    (np.array([at[int(d.id)] for d in docs], np.int64), jll, [d.label for d in docs])
                )
        if not parts:
            continue
        where = np.concatenate([p[0] for p in parts])
        order = np.argsort(where, kind="stable")
        where = where[order]
        jll = np.vstack([p[1] for p in parts])[order]
        labels = pa.array([x for p in parts for x in p[2]], pa.string()).take(pa.array(order))
        seen["unexplained_documents"] += unexplained(jll)
        ids = pc.cast(pa.array(index[where]), pa.string())
        gold = _lists(labels, np.ones(len(where), np.int64))
        kept = {alias: batch.column(c).take(pa.array(where)) for c, alias in carried.items()}
        yield _prediction_batch(ids, gold, log_posteriors(jll), classes, k, threshold, n_ranked, kept)
    tally.add(dict(seen))
