"""Scoring a test table's rows under a density model, in Spark: each row's log-density under the
joint and the naive estimator (``density.model.DensityModel``, broadcast), written as columns for
ranking anomalies, and the held-out log-likelihood that compares the two.

``score_density(spark, model, inputs, weight_column) -> spine.classifying.Scored``: the predictions
are the test rows' columns (the modelled ones as text, the others as typed, so that a row can be
found again), its weight, ``log_density_joint`` and ``log_density_naive``;
its ``stats()`` are the metrics: ``rows`` scored, their ``weight``, and per estimator the
``held_out_log_likelihood`` (the weighted mean of the rows' log-densities, ``-inf`` as soon as one
row has probability 0) with ``zero_probability_rows`` (how many rows, and their weight) and the mean
over the other rows. A row whose weight is not a number >= 0 is skipped and counted
(``malformed.weight``), and so is one with a binned cell that is no number (``malformed.bin``), as
training skips them.
"""

from __future__ import annotations

import math

from nbspark.density.count import bin_expressions, cell_types, checked_weight, read_table, refuse_missing
from nbspark.density.model import DensityModel
from nbspark.settings.config import DENSITY_MODELS
from nbspark.spine.classifying import Scored
from nbspark.spine.counting import Tally
from nbspark.spine.frames import carried_columns, named_column

__all__ = ["OUTPUTS", "add_scores", "density_metrics", "score_density"]

#: The columns the predictions add after the table's, with their types; the ``CLASSIFIED`` ones only
#: with a classifier. A table's column of one of these names is left out of the predictions.
OUTPUTS = {
    "weight": "double",
    **{f"log_density_{e}": "double" for e in DENSITY_MODELS},
    "predicted": "string",
    "probability": "double",
}
CLASSIFIED = ("predicted", "probability")


def score_density(
    spark, model: DensityModel, inputs, weight_column: str = "", width: int = 5, classifier=None
) -> Scored:
    """The rows of ``inputs`` (a CSV or Parquet table holding every column of ``model``) scored under
    both estimators; with a ``classifier`` (``density.classifier.DensityClassifier``), each row's
    ``predicted`` class and its ``probability`` too, and the ``accuracy`` against the row's own
    value of the class column."""

    df = read_table(spark, inputs, width)
    columns = list(model.columns)
    refuse_missing(inputs, columns, df.columns)
    cell_types(dict(df.dtypes), columns, model.bins, inputs.root)
    weight_column = weight_column if weight_column in df.columns else ""
    weight, valid = checked_weight(df, weight_column)
    numbers = bin_expressions(df, model.bins)[1]  # a binned cell that is no number: malformed, bin
    # the table's other columns (an id) ride along, so that a ranked row can be found again
    carried = carried_columns(df.columns, {*columns, weight_column}, OUTPUTS, inputs.named)
    ordered = [c for c in df.columns if c in columns or c in carried]  # the table's order
    shown = {c: carried.get(c, c) for c in ordered}  # a carried column's name in the predictions
    tally = spark.sparkContext.accumulator({}, Tally())
    shared = spark.sparkContext.broadcast((model, classifier))
    # positional names in: pyspark's mapInArrow names its input columns unquoted, so a column named
    # with a dot ("odd name.x") was not found; the output schema gives the table's names back
    rows = df.select(
        *(named_column(c).alias(f"__{i}") for i, c in enumerate([*columns, *carried])),
        weight.alias("__weight"),
        valid.alias("__valid"),
        numbers.alias("__numbers"),
    )
    width, ride = len(columns), len(carried)

    def scored(batches):
        import pyarrow as pa

        m, decide = shared.value
        counts: dict = {}
        for batch in batches:
            values = [batch.column(i).to_pylist() for i in range(width)]
            weights = batch.column(width + ride).to_pylist()
            ok = batch.column(width + ride + 1).to_pylist()
            numbers = batch.column(width + ride + 2).to_pylist()
            keep = [i for i, (good, n) in enumerate(zip(ok, numbers)) if good and n]
            counts["malformed.weight"] = counts.get("malformed.weight", 0) + ok.count(False)
            counts["malformed.bin"] = counts.get("malformed.bin", 0) + sum(
                g and not n for g, n in zip(ok, numbers)
            )
            cells = {c: [values[j][i] for i in keep] for j, c in enumerate(columns)}
            cells.update((c, batch.column(width + k).take(keep)) for k, c in enumerate(carried))
            out = {shown[c]: cells[c] for c in ordered}
            out["weight"] = [weights[i] for i in keep]
            records = [{c: cells[c][k] for c in columns} for k in range(len(keep))]
            for estimator in DENSITY_MODELS:
                logs = m.log_density(records, estimator)
                out[f"log_density_{estimator}"] = logs
                add_scores(counts, estimator, logs, out["weight"])
            if decide is not None:
                explained = decide.explain(records)
                out["predicted"] = [e["label"] for e in explained]
                out["probability"] = [e["probability"] for e in explained]
                gold = decide.gold(cells[decide.target])  # a binned class column's number: its bin
                counts["classified"] = counts.get("classified", 0) + sum(g is not None for g in gold)
                right = sum(g is not None and g == p for g, p in zip(gold, out["predicted"]))
                counts["correct"] = counts.get("correct", 0) + right
            counts["rows"] = counts.get("rows", 0) + len(keep)
            counts["weight"] = counts.get("weight", 0.0) + math.fsum(out["weight"])
            yield pa.RecordBatch.from_pydict(out)
        tally.add(counts)

    from pyspark.sql.types import DoubleType, StringType, StructField, StructType

    # a StructType, not DDL: a carried column keeps its type whatever its nested fields are named
    kinds = {"double": DoubleType(), "string": StringType()}
    fields = [  # a modelled column as text, but a binned one as the table typed it
        StructField(shown[c], StringType() if c in columns and c not in model.bins else df.schema[c].dataType)
        for c in ordered
    ]
    fields += [
        StructField(name, kinds[kind])
        for name, kind in OUTPUTS.items()
        if classifier is not None or name not in CLASSIFIED
    ]
    predictions = rows.mapInArrow(scored, StructType(fields))
    return Scored(predictions, lambda: density_metrics(dict(tally.value)))


def add_scores(counts: dict, estimator: str, logs: list[float], weights: list[float]) -> None:
    """Add a batch's weighted log-densities of ``estimator`` to ``counts``: those of rows of
    probability 0 apart (their number and weight), so that the mean over the others is kept too."""
    finite = [(x, w) for x, w in zip(logs, weights) if x != -math.inf]
    zero = [w for x, w in zip(logs, weights) if x == -math.inf]
    for key, value in (
        (f"{estimator}.sum", math.fsum(x * w for x, w in finite)),
        (f"{estimator}.weight", math.fsum(w for _, w in finite)),
        (f"{estimator}.zero_rows", len(zero)),
        (f"{estimator}.zero_weight", math.fsum(zero)),
    ):
        counts[key] = counts.get(key, 0) + value


def density_metrics(counts: dict) -> dict:
    """The metrics of a scoring's ``counts`` (``_add``'s sums): per estimator the held-out
    log-likelihood per unit of weight (``"-inf"`` when a row of weight > 0 has probability 0), the
    mean over the rows of probability > 0, and how many rows (and how much weight) had probability 0."""
    out: dict = {"rows": counts.get("rows", 0), "weight": counts.get("weight", 0.0)}
    if "classified" in counts:  # a classifier ran: its accuracy over the rows with a class
        out["classified"], out["correct"] = counts["classified"], counts.get("correct", 0)
        out["accuracy"] = out["correct"] / out["classified"] if out["classified"] else None
    skipped = {k: counts[k] for k in ("malformed.weight", "malformed.bin") if counts.get(k)}
    if skipped:
        out["input_stats"] = {"malformed": sum(skipped.values()), **skipped}
    for e in DENSITY_MODELS:
        kept, zero_weight = counts.get(f"{e}.weight", 0.0), counts.get(f"{e}.zero_weight", 0.0)
        total = kept + zero_weight
        out[e] = {  # "-inf" as text: JSON has no infinity (float("-inf") reads it back)
            "held_out_log_likelihood": (
                "-inf" if zero_weight > 0 else counts.get(f"{e}.sum", 0.0) / total if total else None
            ),
            "log_likelihood_of_seen_rows": counts.get(f"{e}.sum", 0.0) / kept if kept else None,
            "zero_probability_rows": counts.get(f"{e}.zero_rows", 0),
            "zero_probability_weight": zero_weight,
        }
    return out
