"""A naive Bayes model's learning curve, in process or with Spark: train on nested seeded fractions of the
training documents (``sample``, ``inputs.parsers.in_sample``: a smaller fraction's documents are
inside every larger one's), score the same test set with each (the classify run), and
write the table and the picture: ``curve.json``, ``curve.csv``, ``curve.png``.
"""

from __future__ import annotations

import dataclasses
import logging

from nbspark.inputs.resolve import Inputs
from nbspark.naive_bayes.jobs import NAIVE_BAYES, plan_nb_classify, run_nb_classify
from nbspark.report.curves import write_curve
from nbspark.report.plots import plot_nb_curve
from nbspark.settings.config import ExperimentConfig
from nbspark.spine.training import plan_training, train_model
from nbspark.storage.locations import Location
from nbspark.storage.tables import staged_output

__all__ = ["check_nb_curve", "nb_learning_curve"]

log = logging.getLogger("nbspark")

#: The columns of ``curve.csv``, in order (the rows' keys).
CSV_COLUMNS = (
    "fraction",
    "documents",
    "test_documents",
    "accuracy",
    "macro_f1",
    "log_loss",
    "majority_baseline",
)


def check_nb_curve(cfg: ExperimentConfig) -> None:
    """Refuse, before any work, a config the curve cannot serve (a training input that cannot be
    counted, a test input that cannot be scored), or a missing matplotlib."""
    from nbspark.errors import ConfigError
    from nbspark.report.plots import require_matplotlib
    from nbspark.settings.capabilities import resolve_engine, test_problem

    resolve_engine(cfg)
    if problem := test_problem(cfg):
        raise ConfigError(problem)
    require_matplotlib()


def nb_learning_curve(
    spark,
    cfg: ExperimentConfig,
    train_inputs: Inputs,
    test_inputs: Inputs,
    out: Location,
    fractions,
    seed: int = 0,
) -> list[dict]:
    """Rows (one per fraction, smallest first) of the documents counted, the test documents, their
    accuracy, macro-F1 and log-loss (None where a test document has other than one gold label) and
    the majority baseline (the share of test documents whose gold label is the training sample's
    most frequent class), written to ``out``. Each fraction is ``nbspark train --set sample=F --set
    sample_seed=SEED`` then ``nbspark classify`` of the test set, in this process with ``spark`` None,
    else with Spark (the same rows: tested): the row of fraction 1 is that classify run's metrics."""
    rows = []
    with staged_output(out, "learning-curve") as stage:
        work = stage / "work"
        for fraction in sorted(fractions):
            run, here = dataclasses.replace(cfg, sample=fraction, sample_seed=seed), spark is None
            plan = plan_training(run, lambda: train_inputs, work / "model", NAIVE_BAYES, in_process=here)
            manifest = train_model(spark, plan, NAIVE_BAYES)
            where = "here" if here else "spark"
            scoring = plan_nb_classify(cfg, work / "model", test_inputs, work / "results", where=where)
            metrics = run_nb_classify(spark, scoring)
            counts = manifest["label_counts"]
            majority = max(sorted(counts), key=counts.get)
            support = metrics["per_class"].get(majority, {}).get("support", 0)
            rows.append(
                {
                    "fraction": fraction,
                    "documents": manifest["stats"]["documents"],
                    "test_documents": metrics["documents"],
                    "accuracy": metrics["accuracy"],
                    "macro_f1": metrics["macro_f1"],
                    "log_loss": metrics["log_loss"],
                    "majority_baseline": support / metrics["documents"],
                }
            )
            log.info(
                "fraction %5s: %10s documents counted, accuracy %.4f",
                fraction,
                f"{rows[-1]['documents']:,}",
                metrics["accuracy"],
            )
            work.rmtree()
        write_curve(
            stage,
            {"config": cfg.name, "seed": seed, "rows": rows},
            CSV_COLUMNS,
            [[r[c] for c in CSV_COLUMNS] for r in rows],
            lambda png: plot_nb_curve(rows, png, f"{cfg.name}: naive Bayes accuracy against training size"),
        )
    return rows
