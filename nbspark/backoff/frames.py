"""The backoff count table from a DataFrame, with Spark SQL only: ``count_windows(df, "window")``
takes an ``array<string>`` column of windows (width tokens, the label at the centre) and an
optional weight column, and gives the table the train job writes (``backoff.events.count_ddl``), one row
per (context subset, context values, label). A window of another width, a null token or a bad
weight fails the job with a message naming the column. The result is a lazy DataFrame."""

from __future__ import annotations

from collections.abc import Sequence

from nbspark.backoff.events import context_letters, count_columns
from nbspark.settings.config import ExperimentConfig, position_letters
from nbspark.spine.frames import _array_column, checked_weight

__all__ = ["count_windows"]


def count_windows(
    df,
    windows_col: str = "window",
    weight_col: str | None = None,
    *,
    width: int = 5,
    subsets: Sequence[str] | None = None,
):
    """The backoff count table of ``df``'s windows, in ``events.count_ddl(letters)``.

    ``subsets`` are the context subsets counted (letters of the positions, ``""`` the prior);
    by default those the train job counts for the default chain (``ExperimentConfig.counted_subsets``).
    A weighted count is rounded to the nearest integer, as counts are stored as integers. A window
    of another length, or with a null token, fails the job (``raise_error``), as MLlib refuses a bad label.
    """
    from pyspark.sql import functions as F

    _array_column(df, windows_col, "windows")
    letters = position_letters(width)
    subsets = tuple(ExperimentConfig(width=width).counted_subsets if subsets is None else subsets)
    ctx = context_letters(letters)
    for s in subsets:
        if any(c not in ctx for c in s):
            raise ValueError(f"subset {s!r}: only context positions {ctx!r} can be counted for width {width}")
    window = F.col(windows_col)
    checked = (
        F.when(
            window.isNull(),
            F.raise_error(F.lit(f"count_windows: column {windows_col!r} holds a null window")),
        )
        .when(
            F.size(window) != width,
            F.raise_error(F.lit(f"count_windows: a window of column {windows_col!r} has not {width} tokens")),
        )
        # a null centre would be counted as a label None, a null context word as the subset's wildcard
        .when(
            F.exists(window, lambda t: t.isNull()),
            F.raise_error(F.lit(f"count_windows: a window of column {windows_col!r} has a null token")),
        )
        .otherwise(window)
    )
    base = df.select(checked.alias("w"), checked_weight(df, weight_col, "count_windows").alias("n"))
    null = F.lit(None).cast("string")
    events = F.array(
        *[
            F.struct(
                F.lit(s).alias("subset"),
                *[(F.col("w")[letters.index(c)] if c in s else null).alias(c.lower()) for c in ctx],
            )
            for s in subsets
        ]
    )
    names = count_columns(letters)
    exploded = base.select(F.explode(events).alias("e"), F.col("w")[width // 2].alias("label"), "n").select(
        "e.*", "label", "n"
    )
    summed = exploded.groupBy(*names[:-1]).agg(F.sum("n").alias("s"))
    table = summed.select(*names[:-1], F.round("s").cast("long").alias("count"))
    return table
