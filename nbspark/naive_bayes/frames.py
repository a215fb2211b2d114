"""The naive Bayes count table from a DataFrame, with Spark SQL only: ``count_documents(df,
"tokens", "label")`` takes an ``array<string>`` of tokens per document and a label column (any
type; compared as strings) and gives the table in ``events.COUNT_DDL`` with the events of
``events.doc_events``, multinomial or Bernoulli. Tokens are taken as given: lower-case them
(``RegexTokenizer`` does) first if the model should. The result is a lazy DataFrame."""

from __future__ import annotations

from nbspark.spine.frames import checked_tokens, checked_weight

__all__ = ["count_documents"]


def count_documents(
    df,
    tokens_col: str = "tokens",
    label_col: str = "label",
    weight_col: str | None = None,
    *,
    model: str = "multinomial",
):
    """The naive Bayes count table of ``df``'s documents, in ``naive_bayes.events.COUNT_DDL``: ``Y=ANY``,
    ``Y`` per
    label, ``YX`` per (label, token) (token count, or documents containing it for ``bernoulli``)
    and, for ``multinomial``, ``YX=ANY`` per label. ``n`` is the count (weighted counts rounded);
    ``sum`` holds the exact weighted count when ``weight_col`` is given."""
    from pyspark.sql import functions as F

    if model not in ("multinomial", "bernoulli"):
        raise ValueError(f"model must be multinomial or bernoulli, got {model!r}")
    tokens = checked_tokens(df, tokens_col, "count_documents")
    if label_col not in df.columns:
        raise ValueError(f"no label column {label_col!r} (columns: {', '.join(df.columns)})")
    if model == "bernoulli":
        tokens = F.array_distinct(tokens)
    label = F.col(label_col).cast("string")
    no_label = F.raise_error(F.lit(f"count_documents: the label column {label_col!r} holds a null"))
    docs = df.select(
        F.when(label.isNull(), no_label).otherwise(label).alias("label"),
        tokens.alias("t"),
        checked_weight(df, weight_col, "count_documents").alias("w"),
    )
    null = F.lit(None).cast("string")
    per_class = docs.groupBy("label").agg(F.sum("w").alias("s"))
    terms = (
        docs.select("label", F.explode("t").alias("feature"), "w")
        .groupBy("label", "feature")
        .agg(F.sum("w").alias("s"))
    )
    parts = [
        per_class.agg(F.sum("s").alias("s")).select(
            F.lit("Y=ANY").alias("event"), null.alias("label"), null.alias("feature"), "s"
        ),
        per_class.select(F.lit("Y").alias("event"), "label", null.alias("feature"), "s"),
        terms.select(F.lit("YX").alias("event"), "label", "feature", "s"),
    ]
    if model == "multinomial":
        parts.append(
            terms.groupBy("label")
            .agg(F.sum("s").alias("s"))
            .select(F.lit("YX=ANY").alias("event"), "label", null.alias("feature"), "s")
        )
    table = parts[0]
    for part in parts[1:]:
        table = table.unionByName(part)
    exact = F.col("s") if weight_col else F.lit(None).cast("double")
    table = table.select(
        "event",
        "label",
        "feature",
        null.alias("value"),
        F.round("s").cast("long").alias("n"),
        exact.alias("sum"),
        F.lit(None).cast("double").alias("sumsq"),
    )
    return table
