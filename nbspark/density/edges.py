"""A density's edges from the data (``density.bins = ["age=quantiles:4"]``): ``settle_bins`` reads
the numbers of each quantile column, with their weights, over the rows a count keeps, and cuts at
``inputs.bins.quantile_edges``; ``counted_with_edges`` is the family's count: the edges settled,
then the table counted with them (``density.count.count_density``) and the edges recorded. The
first training settles them; the model records them, and an update counts at the model's
(``density.jobs``)."""

from __future__ import annotations

import logging

from nbspark.density.count import (
    cell_types,
    checked_weight,
    count_density,
    modelled_columns,
    number_of,
    read_local_table,
    read_table,
    weight_column,
    weight_of,
)
from nbspark.errors import InputError
from nbspark.inputs.bins import (
    crossings,
    edges_crossed,
    no_edge,
    parse_bins,
    quantile_edges,
    quantile_thresholds,
    quantiles_asked,
    row_edges,
    settled_bins,
)
from nbspark.spark.session import cache_coalescable
from nbspark.spine.frames import named_column

log = logging.getLogger(__name__)

__all__ = ["GATHERED", "counted_with_edges", "frame_edges", "settle_bins"]


def counted_with_edges(spark, cfg, inputs, engine: str):
    """``density.count.count_density`` of ``cfg`` with its bins settled (``settle_bins``), the
    edges counted with in ``Counted.settled``: what the manifest records for the run's config."""
    cfg = settle_bins(None if engine == "local" else spark, cfg, inputs)
    counted = count_density(spark, cfg, inputs, engine)
    if cfg.density.bins:
        counted.settled = {"density.bins": tuple(cfg.density.bins)}
    return counted


def settle_bins(spark, cfg, inputs):
    """``cfg`` with ``density.bins`` as edges (``inputs.bins.settled_bins``): each ``COLUMN=quantiles:K``
    cut at ``inputs.bins.quantile_edges`` of the column's numbers in ``inputs``, over the rows a count
    keeps (a weight >= 0, every binned cell a number or empty), each weighted as counted; read by
    pyarrow (``spark`` None) or by Spark (``frame_edges``). The one rule of what a model's edges are;
    a config without quantiles comes back with its edges as written."""
    import dataclasses

    bins = parse_bins(cfg.density.bins)
    if asked := quantiles_asked(bins):
        try:
            edges = (
                _local_edges(cfg, inputs, bins) if spark is None else _spark_edges(spark, cfg, inputs, bins)
            )
        except ValueError as exc:
            raise InputError(f"{inputs.named}: {exc}") from None
        settled = settled_bins(cfg.density.bins, edges)
        for item in settled:
            if item.partition("=")[0].strip() in asked:
                log.info("density.bins: %s", item)
        cfg = dataclasses.replace(cfg, density=dataclasses.replace(cfg.density, bins=settled))
    return cfg


def _local_edges(cfg, inputs, bins: dict) -> dict[str, tuple[float, ...]]:
    """The edges of each quantile column over the rows a count keeps, read with pyarrow
    (``inputs.bins.row_edges``)."""
    table, columns = read_local_table(cfg, inputs)
    cell_types({f.name: str(f.type) for f in table.schema}, columns, bins, inputs.root)
    weight = weight_column(cfg, inputs.spec.format)
    weights = table.column(weight).to_pylist() if weight else [1.0] * table.num_rows
    cells = zip(*(table.column(c).to_pylist() for c in bins))
    return row_edges(bins, zip(cells, map(weight_of, weights)))


def _spark_edges(spark, cfg, inputs, bins: dict) -> dict[str, tuple[float, ...]]:
    """``_local_edges`` in Spark (``frame_edges`` of the table as the count reads it)."""
    df = read_table(spark, inputs, cfg.width)
    columns = modelled_columns(cfg, df.columns, inputs.root, inputs.spec.format)
    cell_types(dict(df.dtypes), columns, bins, inputs.root)
    return frame_edges(df, weight_column(cfg, inputs.spec.format), bins)


#: A quantile column of at most this many distinct numbers (of positive weight) is cut in the
#: driver, its numbers gathered there (about 100 bytes each in Python); one of more is sorted and cut
#: by Spark, a range of the numbers to a task, and the driver holds a weight per range.
GATHERED = 200_000


def frame_edges(df, weight_column: str, bins: dict) -> dict[str, tuple[float, ...]]:
    """``inputs.bins.quantile_edges`` of each quantile column of ``bins`` (``inputs.bins.parse_bins``'
    answer) over the rows of ``df`` a count keeps, weighted by ``weight_column`` (1 without one),
    each distinct number's weight summed by Spark (the train job's, and pyspark.ml's
    ``CountingDensity``). ``ValueError`` naming a column that cannot be cut."""
    from pyspark.sql import functions as F

    weight, valid = checked_weight(df, weight_column)
    xs = {c: number_of(df, c) for c in bins}
    for c in bins:
        valid = valid & (named_column(c).isNull() | xs[c].isNotNull())
    kept = df.where(valid)
    edges = {}
    for c, k in quantiles_asked(bins).items():
        pairs = (
            kept.where(xs[c].isNotNull())
            .groupBy(xs[c].alias("x"))
            .agg(F.sum(weight).alias("w"))
            .where((F.col("w") > 0) & (F.abs("x") < float("inf")))
        )
        edges[c] = _column_edges(pairs, k, c)
    return edges


def _column_edges(pairs, k: int, column: str) -> tuple[float, ...]:
    """The edges of a frame of distinct numbers ``x`` and their weights ``w`` (kept while cut):
    gathered and cut by ``quantile_edges`` when there are at most ``GATHERED``; else sorted by
    Spark and kept sorted, each range's weight summed (one job), and each range cut by
    ``inputs.bins.crossings`` from the weight below it (a second job over the same kept ranges:
    sorted once, so the weight below each range is the weight of the ranges the cut reads before
    it), the first range to reach a threshold deciding its edge: the same edges, the driver holding
    a number per range and edge."""
    import math

    pairs = cache_coalescable(pairs)  # its partitions fit its size, not spark.sql.shuffle.partitions
    ordered = None
    try:
        n = pairs.count()
        if n <= GATHERED:
            return quantile_edges(((r[0], r[1]) for r in pairs.collect()), k, column)
        ordered = pairs.orderBy("x").rdd.map(lambda r: (r[0], r[1])).persist()  # ranges in order
        sums = ordered.mapPartitions(lambda it: [math.fsum(w for _, w in it)]).collect()
        pairs.unpersist()  # the sorted ranges hold the numbers now
        thresholds = quantile_thresholds(math.fsum(sums), k)
        below = [math.fsum(sums[:i]) for i in range(len(sums))]
        crossed = ordered.mapPartitionsWithIndex(
            lambda i, it: ((i, j, x) for j, x in crossings(it, thresholds, below[i]))
        ).collect()
        edges = edges_crossed((j, x) for _, j, x in sorted(crossed))
        return edges or no_edge(column, n, ordered.map(lambda p: p[0]).max())
    finally:
        pairs.unpersist()
        if ordered is not None:
            ordered.unpersist()
