"""Scoring a test table's rows under a density model, in Spark: each row's log-density under the
joint and the naive estimator (``density.model.DensityModel``, broadcast), written as columns for
ranking anomalies, and the held-out log-likelihood that compares the two.

``score_density(spark, cfg, model, inputs, classifier) -> spine.classifying.Scored``, in Spark or in
this process (``spark`` None: a CSV or an n-gram file, by the same batch function): the predictions
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

from nbspark.density.count import (
    bin_expressions,
    cell_types,
    checked_weight,
    read_table,
    refuse_missing,
    weight_column,
)
from nbspark.density.model import DensityModel
from nbspark.settings.config import DENSITY_MODELS
from nbspark.spine.classifying import Scored, predictions_table
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


def score_density(spark, cfg, model: DensityModel, inputs, classifier=None) -> Scored:
    """The rows of ``inputs`` (a table holding every column of ``model``) scored under both
    estimators; with a ``classifier`` (``density.classifier.DensityClassifier``), each row's
    ``predicted`` class and its ``probability`` too, and the ``accuracy`` against the row's own
    value of the class column. With ``spark`` None, in this process (a CSV or n-gram file: the
    predictions a pyarrow Table, ``_score_here``); both by ``_scored_batches``."""
    if spark is None:
        return _score_here(cfg, model, inputs, classifier)
    df = read_table(spark, inputs, cfg.width)
    columns = list(model.columns)
    refuse_missing(inputs, columns, df.columns)
    cell_types(dict(df.dtypes), columns, model.bins, inputs.root)
    weight_column, carried, ordered, shown = _layout(cfg, inputs, columns, df.columns)
    weight, valid = checked_weight(df, weight_column)
    numbers = bin_expressions(df, model.bins)[1]  # a binned cell that is no number: malformed, bin
    tally = spark.sparkContext.accumulator({}, Tally())
    # positional names in: pyspark's mapInArrow names its input columns unquoted, so a column named
    # with a dot ("odd name.x") was not found; the output schema gives the table's names back
    rows = df.select(
        *(named_column(c).alias(f"__{i}") for i, c in enumerate([*columns, *carried])),
        weight.alias("__weight"),
        valid.alias("__valid"),
        numbers.alias("__numbers"),
    )
    from pyspark.sql.types import DoubleType, StringType, StructField, StructType

    # a StructType, not DDL: a carried column keeps its type whatever its nested fields are named
    kinds = {"double": DoubleType(), "string": StringType()}
    typed = _typed(ordered, shown, columns, model.bins, lambda c: df.schema[c].dataType, kinds, classifier)
    shared = spark.sparkContext.broadcast((model, classifier))
    laid_out = (columns, list(carried), ordered, shown)
    predictions = rows.mapInArrow(
        lambda batches: _scored_batches(batches, *shared.value, *laid_out, tally),
        StructType([StructField(*f) for f in typed]),
    )
    return Scored(predictions, lambda: density_metrics(dict(tally.value)))


def _layout(cfg, inputs, columns: list[str], names: list[str]) -> tuple:
    """``(weight column, carried, ordered, shown)`` of a test table with columns ``names``: its weight
    column (``count.weight_column``; none where the table has none), the other columns that ride along
    (an id: so that a ranked row can be found again; ``spine.frames.carried_columns``), the modelled
    and carried ones in the table's order, and each one's name in the predictions."""
    weight = weight_column(cfg, inputs.spec.format)
    weight = weight if weight in names else ""
    carried = carried_columns(names, {*columns, weight}, OUTPUTS, inputs.named)
    ordered = [c for c in names if c in columns or c in carried]
    return weight, carried, ordered, {c: carried.get(c, c) for c in ordered}


def _typed(ordered, shown, columns, bins, type_of, kinds: dict, classifier) -> list[tuple]:
    """The predictions' ``(name, type)`` in order: the table's columns that they keep (a modelled
    column as text, ``kinds["string"]``, but a binned one as the table typed it, ``type_of(column)``),
    then ``OUTPUTS`` (the ``CLASSIFIED`` ones only with a ``classifier``)."""
    kept = [(shown[c], kinds["string"] if c in columns and c not in bins else type_of(c)) for c in ordered]
    added = [(n, kinds[kind]) for n, kind in OUTPUTS.items() if classifier is not None or n not in CLASSIFIED]
    return kept + added


def _scored_batches(batches, model, decide, columns, carried, ordered, shown, tally):
    """mapInArrow, in Spark and in process: batches of a test table's modelled cells (``__0`` …),
    its carried columns, each row's weight, whether that weight is a number >= 0 and whether its
    binned cells are numbers, scored a batch at a time (``model.log_density``; ``decide``, a
    classifier or None); the statistics into ``tally`` (the rows skipped: ``malformed.weight``,
    ``malformed.bin``)."""
    import pyarrow as pa

    width, ride = len(columns), len(carried)
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
            logs = model.log_density(records, estimator)
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


def _score_here(cfg, model: DensityModel, inputs, classifier) -> Scored:
    """``score_density`` in this process: the table read as a train in process reads it
    (``count.read_local_table``: a CSV's cells as text, an n-gram file's positions), each row's
    weight and binned cells judged by the rules training applies (``count.weight_of``,
    ``inputs.bins.cell_number``), then ``_scored_batches`` over batches laid out as Spark's."""
    import pyarrow as pa

    from nbspark.density.count import read_local_table, weight_of
    from nbspark.inputs.bins import cell_number
    from nbspark.spine.counting import LocalTally

    columns = list(model.columns)
    table, _ = read_local_table(cfg, inputs, columns)
    cell_types({f.name: str(f.type) for f in table.schema}, columns, model.bins, inputs.root)
    weight_column, carried, ordered, shown = _layout(cfg, inputs, columns, table.column_names)
    weights = [weight_of(c) for c in table.column(weight_column).to_pylist()] if weight_column else None

    def number(cell) -> bool:
        try:
            cell_number(cell)
            return True
        except ValueError:
            return False

    binned = [table.column(c).to_pylist() for c in model.bins]
    numbers = [all(number(col[i]) for col in binned) for i in range(table.num_rows)]
    laid_out = pa.table(
        [
            *(table.column(c) for c in [*columns, *carried]),
            pa.array([1.0] * table.num_rows if weights is None else weights, pa.float64()),
            pa.array([True] * table.num_rows if weights is None else [w is not None for w in weights]),
            pa.array(numbers, pa.bool_()),
        ],
        names=[f"__{i}" for i in range(len(columns) + len(carried) + 3)],
    )
    tally, chunks = LocalTally(), laid_out.to_batches(max_chunksize=BATCH)
    out = _scored_batches(chunks, model, classifier, columns, list(carried), ordered, shown, tally)
    kinds = {"double": pa.float64(), "string": pa.string()}
    type_of = table.schema.field
    schema = pa.schema(
        _typed(ordered, shown, columns, model.bins, lambda c: type_of(c).type, kinds, classifier)
    )
    return Scored(predictions_table(out, schema), lambda: density_metrics(dict(tally.value)))


#: The rows scored together in process (``_score_here``).
BATCH = 10_000


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
