"""The ``join`` scorer: multinomial and Bernoulli models too large to broadcast. The test tokens
are joined with the count table, each weight derived from the same smoothing formulas
(``naive_bayes.model``), and the posteriors ranked in Spark SQL (``_ranked_predictions``, the SQL
twin of ``naive_bayes.model.ranked_columns``)."""

from __future__ import annotations

from collections import Counter

from nbspark.naive_bayes.inputs import Doc
from nbspark.naive_bayes.model import bernoulli_log_probs, class_log_prior, multinomial_log_prob, scalar_log
from nbspark.spine.frames import local_frame

__all__ = ["join_predictions"]


def _doc_token_rows(keyed, binary):
    for rec, key in keyed:
        for token, count in Counter(rec.tokens).items():
            yield key, token, 1 if binary else count


def join_predictions(
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
