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
from nbspark.inputs.bins import parse_bins, quantiles_asked, settled_bins, weighted_numbers
from nbspark.spine.frames import named_column

log = logging.getLogger(__name__)

__all__ = ["counted_with_edges", "frame_numbers", "settle_bins"]


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
    pyarrow (``spark`` None) or by Spark (each distinct number's weight summed, then gathered: a
    column of many distinct numbers costs the driver about 16 bytes each). The one rule of what a
    model's edges are; a config without quantiles comes back with its edges as written."""
    import dataclasses

    bins = parse_bins(cfg.density.bins)
    if asked := quantiles_asked(bins):
        numbers = (
            _local_numbers(cfg, inputs, bins) if spark is None else _spark_numbers(spark, cfg, inputs, bins)
        )
        try:
            settled = settled_bins(cfg.density.bins, numbers)
        except ValueError as exc:
            raise InputError(f"{inputs.named}: {exc}") from None
        for item in settled:
            if item.partition("=")[0].strip() in asked:
                log.info("density.bins: %s", item)
        cfg = dataclasses.replace(cfg, density=dataclasses.replace(cfg.density, bins=settled))
    return cfg


def _local_numbers(cfg, inputs, bins: dict) -> dict[str, list[tuple[float, float]]]:
    """``(number, weight)`` of each quantile column's non-empty cells in the rows a count keeps, read
    with pyarrow (``settle_bins``; ``inputs.bins.weighted_numbers``)."""
    table, columns = read_local_table(cfg, inputs)
    cell_types({f.name: str(f.type) for f in table.schema}, columns, bins, inputs.root)
    weight = weight_column(cfg, inputs.spec.format)
    weights = table.column(weight).to_pylist() if weight else [1.0] * table.num_rows
    cells = zip(*(table.column(c).to_pylist() for c in bins))
    return weighted_numbers(bins, zip(cells, map(weight_of, weights)))


def _spark_numbers(spark, cfg, inputs, bins: dict) -> dict[str, list[tuple[float, float]]]:
    """``_local_numbers`` in Spark (``frame_numbers`` of the table as the count reads it)."""
    df = read_table(spark, inputs, cfg.width)
    columns = modelled_columns(cfg, df.columns, inputs.root, inputs.spec.format)
    cell_types(dict(df.dtypes), columns, bins, inputs.root)
    return frame_numbers(df, weight_column(cfg, inputs.spec.format), bins)


def frame_numbers(df, weight_column: str, bins: dict) -> dict[str, list[tuple[float, float]]]:
    """``(number, weight)`` of each quantile column of ``bins`` (``inputs.bins.parse_bins``' answer)
    in the rows of ``df`` a count keeps, weighted by ``weight_column`` (1 without one): one Spark
    job per quantile column, each distinct number's weight summed (the train job's, and pyspark.ml's
    ``CountingDensity``)."""
    from pyspark.sql import functions as F

    weight, valid = checked_weight(df, weight_column)
    xs = {c: number_of(df, c) for c in bins}
    for c in bins:
        valid = valid & (named_column(c).isNull() | xs[c].isNotNull())
    kept = df.where(valid)
    return {
        c: [(r[0], r[1]) for r in kept.where(xs[c].isNotNull()).groupBy(xs[c]).agg(F.sum(weight)).collect()]
        for c in quantiles_asked(bins)
    }
