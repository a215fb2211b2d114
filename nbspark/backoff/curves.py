"""Learning curves: train on nested seeded fractions of the training data, classify the same
test set each time, and write the table and the picture of "why more data helps".

Backoff models (a density model's curve is ``density.curves``, a naive Bayes model's
``naive_bayes.curves``; another config is refused by ``check_curve`` before any work starts).
"""

from __future__ import annotations

import dataclasses
import logging

from nbspark.backoff.inputs import local_examples
from nbspark.backoff.jobs import BACKOFF, classify, metrics_in_process, train
from nbspark.errors import ConfigError
from nbspark.inputs.resolve import Inputs
from nbspark.inputs.stats import is_stat, run_failfast
from nbspark.report.curves import write_curve
from nbspark.report.plots import plot_learning_curve, require_matplotlib
from nbspark.settings.capabilities import resolve_engine, resolve_scoring
from nbspark.settings.config import ExperimentConfig
from nbspark.spine.training import plan_training, train_model
from nbspark.storage.locations import Location
from nbspark.storage.tables import staged_output

__all__ = ["DEFAULT_FRACTIONS", "check_curve", "learning_curve"]

DEFAULT_FRACTIONS = (0.01, 0.03, 0.1, 0.3, 1.0)
#: ``curve.csv``'s columns before each level's coverage (the rows' keys).
_COLUMNS = ("fraction", "examples", "weight", "test_examples", "accuracy", "majority_baseline")
log = logging.getLogger("nbspark")


def check_curve(cfg: ExperimentConfig) -> None:
    """Refuse, before any work, a config the learning curve cannot serve, or a missing matplotlib."""
    if cfg.task != "backoff":
        raise ConfigError(
            f"backoff.curves draws a backoff model's curve; {cfg.name} has task = {cfg.task!r} "
            "(nbspark curve draws every family's: density.curves, naive_bayes.curves)"
        )
    resolve_engine(cfg)  # refuses a training input that cannot be counted
    resolve_scoring(cfg)  # ... and a test input that cannot be classified
    require_matplotlib()


def learning_curve(
    spark,
    cfg: ExperimentConfig,
    train_inputs: Inputs,
    test_inputs: Inputs,
    out: Location,
    fractions=DEFAULT_FRACTIONS,
    seed: int = 0,
) -> list[dict]:
    """Rows (one per fraction) of training size, accuracy, baseline and per-level coverage,
    written to ``out`` as ``curve.json``, ``curve.csv`` and ``curve.png``. ``spark`` None: in this
    process, each fraction trained as ``nbspark train --in-process`` trains and the test examples
    read once and scored by the classify job's rule (``backoff.jobs.metrics_in_process``): the same
    rows as with Spark (tested)."""
    check_curve(cfg)
    rows = []
    examples = None if spark is not None else _test_examples(cfg, test_inputs)
    with staged_output(out, "learning-curve") as stage:
        work = stage / "work"
        for fraction in sorted(fractions):
            run = dataclasses.replace(cfg, sample=fraction, sample_seed=seed, worked_examples=())
            if spark is None:
                plan = plan_training(run, lambda: train_inputs, work / "model", BACKOFF, in_process=True)
                manifest = train_model(None, plan, BACKOFF)
                metrics = metrics_in_process(run, work / "model", examples)
            else:
                manifest = train(spark, run, train_inputs, work / "model")
                metrics = classify(spark, run, work / "model", test_inputs, work / "results")
            rows.append(
                {
                    "fraction": fraction,
                    "examples": manifest["stats"]["examples"]
                    - manifest["stats"].get("examples_not_sampled", 0),
                    "weight": sum(manifest["label_counts"].values()),
                    "test_examples": metrics["examples"],
                    "accuracy": metrics["accuracy"],
                    "majority_baseline": metrics["majority_baseline"],
                    "levels": [
                        {k: lv[k] for k in ("name", "examples", "accuracy", "coverage")}
                        for lv in metrics["levels"]
                    ],
                }
            )
            log.info(
                "fraction %5s: %14s counted, accuracy %.4f",
                fraction,
                f"{rows[-1]['weight']:,}",
                metrics["accuracy"],
            )
            work.rmtree()
        names = [lv["name"] for lv in rows[0]["levels"]]
        write_curve(
            stage,
            {"config": cfg.name, "seed": seed, "rows": rows},
            [*_COLUMNS, *(f"coverage_{n}" for n in names)],
            [[r[c] for c in _COLUMNS] + [lv["coverage"] for lv in r["levels"]] for r in rows],
            lambda png: plot_learning_curve(rows, png, f"{cfg.name}: accuracy grows with training data"),
        )
    return rows


def _test_examples(cfg: ExperimentConfig, inputs: Inputs) -> list:
    """The test set's examples, read once in this process as the classify job reads them (its
    statistics left out: a curve reports accuracy; failfast still stops at a bad line)."""
    records = local_examples(inputs, cfg.centres, cfg.width, cfg.lowercase, cfg.mode, cfg.max_bad_examples)
    return run_failfast(lambda: [r for r in records if not is_stat(r)], cfg.mode)
