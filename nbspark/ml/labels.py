"""What MLlib's NaiveBayes refuses, refused the same way by ``CountingNaiveBayes``: labels that are
not integers >= 0, more classes than MLlib infers without metadata, vector values naive Bayes
cannot count; and, for every stage's model, an output column the DataFrame already has
(``new_columns``)."""

from __future__ import annotations

import numpy as np

__all__ = [
    "check_vector_values",
    "checked_label",
    "declared_classes",
    "fitted_on",
    "label_names",
    "new_columns",
]


def declared_classes(field) -> int:
    """The number of classes a label column's MLlib attribute declares (a nominal one:
    ``StringIndexer``'s), as MLlib's ``getNumClasses`` reads it; 0 without one."""
    attr = (field.metadata or {}).get("ml_attr", {})
    if attr.get("type") == "nominal":
        return len(attr.get("vals", ())) or int(attr.get("num_vals", 0))
    return 2 if attr.get("type") == "binary" else 0


def label_names(field) -> tuple[str, ...]:
    """The names a label column's nominal MLlib attribute gives its values (``StringIndexer``'s
    labels: value i is ``names[i]``); none without one."""
    attr = (field.metadata or {}).get("ml_attr", {})
    return tuple(map(str, attr.get("vals", ()))) if attr.get("type") == "nominal" else ()


def new_columns(stage: str, columns, outputs) -> None:
    """Refuse a transform whose output column (``outputs``; ``""`` or ``None`` for one left out) the
    DataFrame already has: MLlib's models refuse it too (``Column prediction already exists``), and
    replacing it would drop the user's column in silence."""
    taken = [c for c in outputs if c and c in columns]
    if taken:
        raise ValueError(
            f"{stage}: the DataFrame has a column {taken[0]!r} already (an output column is never "
            "replaced, as in MLlib: name another one, or '' to leave that output out)"
        )


def fitted_on(classes, declared: int) -> None:
    """Refuse a dataset with no rows (a model of no classes scores nothing), and labels whose
    vectors would be longer than MLlib infers from label values (1,000 places) unless declared."""
    if not len(classes):
        raise ValueError("CountingNaiveBayes: the dataset has no rows to fit")
    if (top := int(max(classes))) >= max(declared, 1000):
        raise ValueError(
            f"CountingNaiveBayes: labels go up to {top}, past the 1,000 classes MLlib infers from label "
            "values; "
            "index them with StringIndexer, whose metadata declares how many there are"
        )


def checked_label(name: str):
    """The label column as a double, each value checked in the job: an integer >= 0, as MLlib's
    classifiers take them (``StringIndexer``'s)."""
    from pyspark.sql import functions as F

    y = F.col(name).cast("double")
    bad = y.isNull() | F.isnan(y) | (y < 0) | (y == float("inf")) | (y != F.floor(y))
    said = F.coalesce(F.col(name).cast("string"), F.lit("null"))
    return F.when(
        bad,
        F.raise_error(
            F.concat(
                F.lit(f"CountingNaiveBayes: label column {name!r} holds "),
                said,
                F.lit(": labels must be integers >= 0 (StringIndexer's)"),
            )
        ),
    ).otherwise(y)


def check_vector_values(summary, model_type: str) -> None:
    """Refuse what MLlib's NaiveBayes refuses: a negative, NaN or infinite value (multinomial), or a
    value other than 0 or 1 (Bernoulli), from the unweighted min, max, non-zeros and sum of a class's
    vectors."""
    low, high, nonzero, total = (
        np.asarray(summary[k].toArray()) for k in ("min", "max", "numNonZeros", "sum")
    )
    if not np.all(np.isfinite(total)) or np.any(low < 0):
        raise ValueError(
            "CountingNaiveBayes: feature vectors hold a negative, NaN or infinite value; naive Bayes "
            "counts need values >= 0"
        )
    if model_type == "bernoulli" and (
        np.any(high > 1) or np.any(total != nonzero)
    ):  # values in [0, 1] sum to their non-zeros only when all are 1
        raise ValueError("CountingNaiveBayes: Bernoulli naive Bayes needs 0/1 feature values")
