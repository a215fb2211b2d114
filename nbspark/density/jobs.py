"""The density family on the spine's skeletons: ``DENSITY`` (what the family supplies),
``train_density`` (Spark) / ``train_density_in_process`` (no Spark), and the classify job, which
scores a test table's rows (``density.scoring``): ``plan_density_classify`` then
``run_density_classify``."""

from __future__ import annotations

from nbspark.density.count import MANIFEST_FIELDS, count_fields, rows_fields
from nbspark.density.edges import counted_with_edges
from nbspark.density.model import COUNT_DDL
from nbspark.errors import ConfigError, InputError
from nbspark.inputs.bins import parse_bins, quantiles_settled
from nbspark.spine.training import Family, plan_training, train_in_process, train_model
from nbspark.storage.counts import is_arrow_table, table_rows
from nbspark.storage.manifests import DENSITY_KIND

__all__ = [
    "DENSITY",
    "classify_density",
    "plan_density_classify",
    "run_density_classify",
    "train_density",
    "train_density_in_process",
]


def _fields(spark, cfg, counted, read_written, updated: bool) -> dict:
    """The density manifest's own fields: what the count learned, or (an update: old and new counts
    summed) from the written table, its ``N`` and ``X`` rows and its number of ``J`` rows."""
    known = counted.known
    if updated:  # a compaction knows no columns: count_fields takes the X rows' own
        if is_arrow_table(written := read_written()):  # written by this process (training.write_counts)
            known = rows_fields(known.get("columns"), table_rows(written))
        else:
            head = [tuple(r) for r in written.where(written.event != "J").collect()]
            known = count_fields(known.get("columns"), head, written.where(written.event == "J").count())
    return {k: known[k] for k in MANIFEST_FIELDS}


def _model_columns(old: dict, cfg):
    """An update counts the model's columns (``density.columns`` naming none means every column of
    the table the model was trained on, whatever columns the new table adds: ``count.modelled_columns``
    logs those it leaves out), cut at the model's edges (``_same_bins`` checked them)."""
    import dataclasses

    bins = tuple(old["config"]["density"].get("bins", ()))
    density = dataclasses.replace(cfg.density, columns=tuple(old["columns"]), bins=bins)
    return dataclasses.replace(cfg, density=density)


def _same_bins(old: dict, cfg) -> None:
    """Refuse an update whose bins are not the model's (a model written before bins has none): the
    same edges, however written, or the same ``quantiles:K``, which stands for the edges the model's
    first training settled (counts cut at other edges could not be added)."""
    written = old["config"]["density"].get("bins", [])
    theirs, settled, mine = parse_bins(written), quantiles_settled(written), parse_bins(cfg.density.bins)
    mine = {c: theirs[c] if isinstance(k, int) and settled.get(c) == k else k for c, k in mine.items()}
    if theirs != mine:
        raise InputError(
            f"cannot update: the model was counted with density.bins = {list(written)!r}, this run "
            f"has {list(cfg.density.bins)!r}"
        )


DENSITY = Family(
    kind=DENSITY_KIND,
    task="density",
    count=counted_with_edges,
    ddl=lambda config: COUNT_DDL,
    sums=("n",),
    unit="rows",
    update_keys=("density.columns", "density.weight_column"),
    fields=_fields,
    check_old=_same_bins,
    update_settings=_model_columns,
)


def train_density(spark, cfg, inputs, out, overwrite: bool = False) -> dict:
    """Count the rows of ``inputs`` into the density model ``out`` with Spark; its manifest."""
    return train_model(spark, plan_training(cfg, inputs, out, DENSITY, overwrite=overwrite), DENSITY)


def train_density_in_process(cfg, out, data_dir: str | None = None, overwrite: bool = False) -> dict:
    """``train_density`` in this process, without Spark (local files): ``spine.training.train_in_process``
    with this family."""
    return train_in_process(cfg, DENSITY, out, data_dir, overwrite)


def plan_density_classify(
    cfg, model_dir, inputs, out, overrides=frozenset(), overwrite: bool = False, where: str = "spark"
):
    """The plan of a density classify run (``spine.classifying.plan_classify``, which decides
    ``where``): the model's smoothing ``m`` unless ``overrides`` names ``density.m``."""
    import dataclasses

    from nbspark.spine.classifying import plan_classify

    def settings(manifest, run):
        m = run.density.m if "density.m" in overrides else manifest["config"]["density"]["m"]
        target = run.density.target
        if target and target not in manifest["columns"]:
            raise ConfigError(
                f"density.target {target!r} is not a column of the model ({', '.join(manifest['columns'])})"
            )
        return dataclasses.replace(run, density=dataclasses.replace(run.density, m=float(m)))

    return plan_classify(
        cfg, model_dir, inputs, out, DENSITY_KIND, settings=settings, overwrite=overwrite, where=where
    )


def run_density_classify(spark, plan) -> dict:
    """Score ``plan.inputs``' rows under the model's joint and naive estimators; write the
    predictions (each row's log-densities), metrics.json (the held-out log-likelihoods) and
    report.txt into ``plan.out`` (staged); return the metrics."""
    import time

    from nbspark.density.predictor import read_density
    from nbspark.density.scoring import score_density
    from nbspark.report.format import format_density_report
    from nbspark.spine.classifying import write_results
    from nbspark.spine.training import why_empty

    started = time.time()
    cfg, manifest = plan.cfg, plan.manifest
    model = read_density(plan.model_dir, manifest, cfg.density.m).density
    classifier = None
    if cfg.density.target:
        from nbspark.density.classifier import DensityClassifier

        classifier = DensityClassifier(model, cfg.density.target, cfg.density.classifier)
    scored = score_density(spark, cfg, model, plan.inputs, classifier)
    extra = {
        "model": str(plan.model_dir),
        "columns": list(model.columns),
        "m": model.m,
        "test_input": str(plan.inputs.root),
        "test_is_training_data": plan.overlap == "all",
        **({"target": cfg.density.target, "classifier": cfg.density.classifier} if classifier else {}),
    }
    return write_results(
        spark,
        plan.out,
        scored,
        lambda written: {},
        format_density_report,
        extra,
        started,
        empty=("rows", why_empty("density"), plan.inputs.spec.format),
    )


def classify_density(spark, cfg, model_dir, inputs, out, overrides=frozenset(), overwrite: bool = False):
    """``run_density_classify`` of ``plan_density_classify``."""
    return run_density_classify(
        spark, plan_density_classify(cfg, model_dir, inputs, out, overrides, overwrite)
    )
