"""The density family on the spine's train skeleton: ``DENSITY`` (what the family supplies) and
``train_density`` (Spark) / ``train_density_in_process`` (no Spark)."""

from __future__ import annotations

from nbspark.density.count import count_density
from nbspark.density.model import COUNT_DDL
from nbspark.errors import ConfigError
from nbspark.spine.training import Family, plan_training, refuse_remote, train_model
from nbspark.storage.manifests import DENSITY_KIND

__all__ = ["DENSITY", "train_density", "train_density_in_process"]


def _fields(spark, cfg, counted, read_written, updated: bool) -> dict:
    known = counted.known
    return {
        "columns": known["columns"],
        "total": known["total"],
        "distinct_rows": known["distinct_rows"],
        "values": known["values"],
    }


def _no_update(old, cfg) -> None:
    raise ConfigError("a density model is not --updated yet: train it again with --overwrite")


DENSITY = Family(
    kind=DENSITY_KIND,
    count=count_density,
    ddl=lambda config: COUNT_DDL,
    sums=("n",),
    unit="rows",
    update_keys=("density.columns", "density.weight_column"),
    fields=_fields,
    check_old=_no_update,
)


def train_density(spark, cfg, inputs, out, overwrite: bool = False) -> dict:
    """Count the rows of ``inputs`` into the density model ``out`` with Spark; its manifest."""
    return train_model(spark, plan_training(cfg, inputs, out, DENSITY, overwrite=overwrite), DENSITY)


def train_density_in_process(cfg, out, data_dir: str | None = None, overwrite: bool = False) -> dict:
    """``train_density`` in this process, without Spark (local files)."""
    from nbspark.inputs.resolve import resolve_input

    refuse_remote(cfg, data_dir)
    plan = plan_training(
        cfg, lambda: resolve_input(cfg.train, data_dir), out, DENSITY, overwrite=overwrite, in_process=True
    )
    return train_model(None, plan, DENSITY)
