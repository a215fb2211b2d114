"""The naive Bayes family's scorers, behind one contract: each takes ``(spark, cfg, inputs, model
context)`` and returns a ``spine.classifying.Scored`` whose ``stats()`` gives, after the predictions are
written, ``input_stats``, ``malformed_examples`` and ``unknown_features``.

* ``broadcast``: the model as arrays (``naive_bayes.model.NBModel``), each partition scored in batches of
  ``BATCH`` records with one sparse matrix product.
* ``join``: multinomial and Bernoulli models too large to broadcast: the test tokens joined with
  the count table, the weights derived from the same smoothing formulas (``nb``).
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
from nbspark.naive_bayes.model import (
    NBModel,
    bernoulli_log_probs,
    class_log_prior,
    csr_rows,
    log_posteriors,
    multinomial_log_prob,
    ranked_columns,
    scalar_log,
    score_docs,
    score_rows,
    text_jll,
    top_labels,
    unexplained,
)
from nbspark.settings.config import ExperimentConfig
from nbspark.spine.classifying import Scored
from nbspark.spine.counting import Tally, count_events
from nbspark.spine.frames import carried_columns, local_frame
from nbspark.storage.tables import ddl_fields

__all__ = ["BATCH", "PREDICTION_DDL", "RANKED", "score"]

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
    mixed, columns, rows = records_rdd(spark, inputs, cfg)
    mixed = mixed.cache()
    try:
        stats, bad = split_stats(
            run_failfast(lambda: count_events(mixed.filter(is_stat)).collect()), cfg.max_bad_examples
        )
    except BaseException:
        mixed.unpersist()
        raise
    records = mixed.filter(lambda r: not is_stat(r))
    k, threshold = cfg.nb.top_k, cfg.nb.multilabel_threshold
    carry = _table_columns(spark, cfg, inputs, columns, rows)
    if scoring == "join":
        predictions, unknown = _join_predictions(
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

    def stats() -> dict:
        counted = tally.value
        line_stats = {k: v for k, v in counted.items() if v and k not in SCORING_COUNTS}
        malformed = sum(v for k, v in line_stats.items() if k.startswith("malformed."))
        if malformed:
            line_stats["malformed"] = malformed
        line_stats = dict(sorted(line_stats.items()))
        bad = first_malformed_lines(
            spark.sparkContext,
            inputs.files,
            lambda line: parse_line(line, fmt),
            line_stats,
            cfg.mode,
            cfg.max_bad_examples,
        )
        return {
            "input_stats": line_stats,
            "malformed_examples": bad,
            **{k: counted.get(k, 0) for k in SCORING_COUNTS},
        }

    return Scored(
        predictions, stats, bc.unpersist, lambda: lines.rdd.getNumPartitions()
    )  # mapInArrow keeps the input's partitions


def _doc_token_rows(keyed, binary):
    for rec, key in keyed:
        for token, count in Counter(rec.tokens).items():
            yield key, token, 1 if binary else count


def _join_predictions(
    spark,
    counts,
    docs_rdd,
    kind: str,
    alpha: float,
    k: int,
    threshold: float,
    prior_alpha: float,
    n_ranked: int,
):
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

    Every weight is derived from ``naive_bayes.model.multinomial_log_prob`` /
    ``naive_bayes.model.bernoulli_log_probs`` (the
    formulas the broadcast model is built from), evaluated on columns. Returns the predictions
    and the unknown-token count (a lazy DataFrame). The same predictions as the broadcast scorer
    (tested).
    """
    from pyspark.sql import functions as F

    vocab, weights, base = _join_weights(spark, counts, kind, alpha, prior_alpha)
    # each document joined and grouped by a key of its own: ids are the input's (a tsv's first
    # column may repeat one), and two documents under one id were scored as one, in silence
    keyed = docs_rdd.filter(lambda r: isinstance(r, Doc)).zipWithUniqueId()
    doc_tokens = spark.createDataFrame(
        keyed.mapPartitions(lambda it: _doc_token_rows(it, kind == "bernoulli")),
        "key BIGINT, token STRING, c BIGINT",
    )
    known = doc_tokens.join(vocab, "token")
    unknown = doc_tokens.join(vocab, "token", "left_anti").agg(F.coalesce(F.sum("c"), F.lit(0)).alias("u"))
    length = known.groupBy("key").agg(F.sum("c").alias("L"))
    pair = (
        known.join(weights, "token")
        .groupBy("key", "label")
        .agg(F.sum(F.col("c") * F.col("delta")).alias("s"))
    )
    gold = spark.createDataFrame(
        keyed.map(lambda rk: (rk[1], rk[0].id, list(rk[0].labels))),
        "key BIGINT, id STRING, gold ARRAY<STRING>",
    )
    scores = (
        gold.crossJoin(base)
        .join(length, "key", "left")
        .join(pair, ["key", "label"], "left")
        .select(
            "key",
            "id",
            "gold",
            "label",
            (
                F.col("prior")
                + F.col("bias")
                + F.coalesce("L", F.lit(0)) * F.col("zero")
                + F.coalesce("s", F.lit(0.0))
            ).alias("jll"),
        )
    )
    return _ranked_predictions(scores, k, threshold, n_ranked), unknown


def _join_weights(spark, counts, kind: str, alpha: float, prior_alpha: float):
    """The join scorer's tables: the vocabulary, ``(label, token, delta)`` for the non-zero counts
    and ``(label, prior, bias, zero)`` per class, all from the smoothing formulas of ``nb``."""
    from pyspark.sql import functions as F

    yx = counts.where(F.col("event") == "YX").select("label", F.col("feature").alias("token"), "n")
    vocab = yx.select("token").distinct()
    vocab_size = vocab.count()
    docs_y = {r["label"]: r["n"] for r in counts.where(F.col("event") == "Y").collect()}
    total = sum(docs_y.values())
    classes = sorted(docs_y)
    if kind == "multinomial":
        tokens_y = {r["label"]: r["n"] for r in counts.where(F.col("event") == "YX=ANY").collect()}
        per_class = local_frame(spark, [(c, tokens_y.get(c, 0)) for c in classes], "label STRING, t BIGINT")
        t = F.col("t")

        def weight(n):
            return multinomial_log_prob(n, t, alpha, vocab_size, F.log)

        rows = [
            (
                c,
                class_log_prior(docs_y[c], total, scalar_log, prior_alpha, len(classes)),
                0.0,
                multinomial_log_prob(0, tokens_y.get(c, 0), alpha, vocab_size),
            )
            for c in classes
        ]
    else:  # bernoulli: a present word weighs log p − log(1−p); every word adds log(1−p) to the bias
        per_class = local_frame(spark, list(docs_y.items()), "label STRING, t BIGINT")
        t = F.col("t")

        def weight(n):
            p_log, q_log = bernoulli_log_probs(n, t, alpha, F.log)
            return p_log - q_log

        q_sums = {
            r["label"]: (r["nnz"], r["q"])
            for r in yx.join(F.broadcast(per_class), "label")
            .groupBy("label")
            .agg(
                F.count("n").alias("nnz"),
                F.sum(bernoulli_log_probs(F.col("n"), t, alpha, F.log)[1]).alias("q"),
            )
            .collect()
        }
        rows = []
        for c in classes:
            p0, q0 = bernoulli_log_probs(0, docs_y[c], alpha)
            nnz, q_sum = q_sums.get(c, (0, 0.0))
            rows.append(
                (
                    c,
                    class_log_prior(docs_y[c], total, scalar_log, prior_alpha, len(classes)),
                    (vocab_size - nnz) * q0 + q_sum,
                    p0 - q0,
                )
            )
    weights = yx.join(F.broadcast(per_class), "label").select(
        "label", "token", (weight(F.col("n")) - weight(F.lit(0))).alias("delta")
    )
    return vocab, weights, local_frame(spark, rows, "label STRING, prior DOUBLE, bias DOUBLE, zero DOUBLE")


def _ranked_predictions(scores, k: int, threshold: float, n_ranked: int):
    """Prediction rows (``PREDICTION_DDL``) from ``(key, id, gold, label, jll)`` (``key``: one per
    document): posteriors by a log-sum-exp over each document's classes, ranked."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy("key")
    scores = scores.withColumn("top", F.max("jll").over(w))
    scores = scores.withColumn(
        "logp", F.col("jll") - F.col("top") - F.log(F.sum(F.exp(F.col("jll") - F.col("top"))).over(w))
    )
    ranked = scores.groupBy("key", "id", "gold").agg(
        F.sort_array(F.collect_list(F.struct((-F.col("logp")).alias("neg"), "label"))).alias("r")
    )
    probs = F.transform("r", lambda x: F.exp(-x["neg"]))
    labels = F.transform("r", lambda x: x["label"])
    keep = F.filter(
        F.transform(
            "r", lambda x, i: F.struct(x["label"].alias("label"), F.exp(-x["neg"]).alias("p"), i.alias("i"))
        ),
        lambda x: (x["i"] < k) | ((F.lit(threshold) > 0) & (x["p"] >= threshold)),
    )
    return ranked.select(
        "id",
        "gold",
        F.transform(keep, lambda x: x["label"]).alias("predicted"),
        F.get(probs, 0).alias("probability"),
        F.slice(labels, 1, n_ranked).alias("ranked_labels"),
        F.slice(probs, 1, n_ranked).alias("ranked_probabilities"),
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

    def lists(values, lengths):
        offsets = np.zeros(len(lengths) + 1, np.int32)
        np.cumsum(lengths, out=offsets[1:])
        return pa.ListArray.from_arrays(pa.array(offsets), values)

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
        order, probs, picked = ranked_columns(log_post, k, threshold, n_ranked)
        prefix = np.arange(order.shape[1])[None, :] < picked[:, None]
        ranked = np.full(n, n_ranked)
        yield pa.RecordBatch.from_arrays(
            [
                batch.column("id"),
                batch.column("labels"),
                lists(pc.take(classes, pa.array(order[prefix])), picked),
                pa.array(probs[:, 0]),
                lists(pc.take(classes, pa.array(order[:, :n_ranked].ravel())), ranked),
                lists(pa.array(probs[:, :n_ranked].ravel()), ranked),
            ],
            names=["id", "gold", "predicted", "probability", "ranked_labels", "ranked_probabilities"],
        )
    tally.add(dict(seen))
