"""A naive Bayes model's learning curve, in process: train on nested seeded fractions of the
training documents (``sample``, ``inputs.parsers.in_sample``: a smaller fraction's documents are
inside every larger one's), score the same test set with each (the classify run in process), and
write the table and the picture: ``curve.json``, ``curve.csv``, ``curve.png``.
"""

from __future__ import annotations

import dataclasses
import logging

from nbspark.inputs.resolve import Inputs
from nbspark.naive_bayes.jobs import NAIVE_BAYES, plan_nb_classify, run_nb_classify
from nbspark.report.plots import plot_nb_curve
from nbspark.settings.config import ExperimentConfig
from nbspark.spine.training import plan_training, train_model
from nbspark.storage.locations import Location
from nbspark.storage.tables import staged_output, write_json

__all__ = ["nb_learning_curve"]

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


def nb_learning_curve(
    cfg: ExperimentConfig, train_inputs: Inputs, test_inputs: Inputs, out: Location, fractions, seed: int = 0
) -> list[dict]:
    """Rows (one per fraction, smallest first) of the documents counted, the test documents, their
    accuracy, macro-F1 and log-loss (None where a test document has other than one gold label) and
    the majority baseline (the share of test documents whose gold label is the training sample's
    most frequent class), written to ``out``. Each fraction is ``nbspark train --in-process --set
    sample=F --set sample_seed=SEED`` then ``nbspark classify --in-process`` of the test set: the
    row of fraction 1 is that classify run's metrics."""
    rows = []
    with staged_output(out, "learning-curve") as stage:
        work = stage / "work"
        for fraction in sorted(fractions):
            run = dataclasses.replace(cfg, sample=fraction, sample_seed=seed)
            plan = plan_training(run, lambda: train_inputs, work / "model", NAIVE_BAYES, in_process=True)
            manifest = train_model(None, plan, NAIVE_BAYES)
            scoring = plan_nb_classify(cfg, work / "model", test_inputs, work / "results", where="here")
            metrics = run_nb_classify(None, scoring)
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
        write_json(stage / "curve.json", {"config": cfg.name, "seed": seed, "rows": rows})
        lines = [",".join(CSV_COLUMNS)]
        lines += [",".join("" if r[c] is None else str(r[c]) for c in CSV_COLUMNS) for r in rows]
        (stage / "curve.csv").write_text("\n".join(lines) + "\n")
        plot_nb_curve(rows, stage / "curve.png", f"{cfg.name}: naive Bayes accuracy against training size")
    return rows
