"""Pictures of results (matplotlib, drawn off-screen). Pure: takes rows, writes a PNG."""

from __future__ import annotations

from nbspark.errors import ConfigError

__all__ = [
    "plot_density_curve",
    "plot_learning_curve",
    "plot_nb_curve",
    "plot_pr_curve",
    "require_matplotlib",
    "save_png",
]


def require_matplotlib() -> None:
    """Refuse, before any work, a run that will draw a plot without matplotlib installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ConfigError("this run draws a plot and needs matplotlib: pip install 'nbspark[plot]'") from None


def plot_learning_curve(rows: list[dict], path, title: str) -> None:
    """Accuracy (with the majority baseline) and per-level coverage against training size.

    ``rows``: one per training fraction, with ``weight`` (training size), ``accuracy``,
    ``majority_baseline`` and ``levels`` (``name``, ``coverage``), as ``backoff.curves.learning_curve``
    writes them.
    """
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["weight"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12.5, 4.2))
    left.plot(sizes, [r["accuracy"] for r in rows], marker="o", label="backoff classifier")
    left.plot(
        sizes, [r["majority_baseline"] for r in rows], linestyle="--", color="grey", label="majority baseline"
    )
    left.set_xscale("log")
    left.set_xlabel("training size (n-gram occurrences counted)")
    left.set_ylabel("test accuracy")
    left.set_title("accuracy")
    left.grid(True, which="both", alpha=0.3)
    left.legend(loc="lower right")
    names = [lv["name"] for lv in rows[0]["levels"]]
    stacks = [
        [next((lv["coverage"] or 0.0) for lv in r["levels"] if lv["name"] == n) for r in rows] for n in names
    ]
    right.stackplot(sizes, stacks, labels=[f"decided at {n}" for n in names], alpha=0.85)
    right.set_xscale("log")
    right.set_ylim(0, 1)
    right.set_xlabel("training size (n-gram occurrences counted)")
    right.set_ylabel("share of test examples")
    right.set_title("where the backoff decides")
    right.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    save_png(fig, path)


def plot_nb_curve(rows: list[dict], path, title: str) -> None:
    """A naive Bayes model's test accuracy and macro-F1, with the majority baseline, against the
    training documents counted; log-loss on the right where the test set has one gold label a
    document. ``rows``: one per training fraction, as ``naive_bayes.curves.nb_learning_curve``
    writes them."""
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["documents"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12.5, 4.2))
    left.plot(sizes, [r["accuracy"] for r in rows], marker="o", label="accuracy")
    left.plot(sizes, [r["macro_f1"] for r in rows], marker="s", label="macro-F1")
    left.plot(
        sizes, [r["majority_baseline"] for r in rows], linestyle="--", color="grey", label="majority baseline"
    )
    losses = [(n, r["log_loss"]) for n, r in zip(sizes, rows) if r["log_loss"] is not None]
    right.plot([n for n, _ in losses], [x for _, x in losses], marker="o", color="C3")
    right.set_title("log-loss (lower is better)" if losses else "log-loss: needs one gold label a document")
    for ax, label in ((left, "test score"), (right, "log-loss per document")):
        ax.set_xscale("log")
        ax.set_xlabel("training documents counted")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    left.set_title("accuracy")
    left.legend(loc="best")
    fig.suptitle(title)
    fig.tight_layout()
    save_png(fig, path)


def plot_density_curve(rows: list[dict], path, title: str) -> None:
    """The held-out log-likelihood per row of the joint and the naive estimator against training
    size (rows of probability 0 left out, with their share drawn on the right: a point where the
    log-likelihood is -inf is marked by that share, never dropped in silence).

    ``rows``: one per training fraction, as ``density.curves.density_curve`` writes them."""
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["training_rows"] for r in rows]
    accuracy = "accuracy" in rows[0]["joint"]
    fig, axes = plt.subplots(1, 3 if accuracy else 2, figsize=(18 if accuracy else 12.5, 4.2))
    left, right = axes[0], axes[1]
    for estimator, style in (("joint", "o-"), ("naive", "s--")):
        if accuracy:
            axes[2].plot(
                sizes, [r[estimator]["accuracy"] for r in rows], style, label=f"{estimator} classifier"
            )
        seen = [r[estimator]["log_likelihood_of_seen_rows"] for r in rows]
        left.plot(sizes, [float("nan") if s is None else s for s in seen], style, label=estimator)
        share = [r[estimator]["zero_probability_rows"] / r["test_rows"] for r in rows]
        right.plot(sizes, share, style, label=estimator)
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    if accuracy:
        axes[2].set_xlabel("training rows")
        axes[2].set_ylabel("test accuracy")
        axes[2].set_title("classifying the target column by each density")
        axes[2].grid(True, which="both", alpha=0.3)
        axes[2].legend(loc="lower right")
    for ax in axes:  # each point's training size as a number, no crowded minor labels
        ax.set_xscale("log")
        ax.set_xticks(sizes)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
    left.set_xlabel("training rows")
    left.set_ylabel("held-out log-likelihood per row (nats)")
    left.set_title("log-likelihood of the test rows of probability > 0 (higher is better)")
    left.grid(True, which="both", alpha=0.3)
    left.legend(loc="lower right")
    right.set_ylim(-0.02, 1.02)
    right.set_xlabel("training rows")
    right.set_ylabel("share of test rows")
    right.set_title("test rows of probability 0 (log-likelihood -inf)")
    right.grid(True, which="both", alpha=0.3)
    right.legend(loc="upper right")
    fig.suptitle(title)
    fig.tight_layout()
    save_png(fig, path)


def plot_pr_curve(pr: dict, path, title: str) -> None:
    """Precision against recall of the positive class (``report.metrics.pr_curve``), the decision
    threshold's point marked."""
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.step(
        pr["recall"],
        pr["precision"],
        where="post",
        label=f"average precision {pr['average_precision'] or 0:.4f}",
    )
    if pr["precision_at_threshold"] is not None:
        ax.plot(
            [pr["recall_at_threshold"]],
            [pr["precision_at_threshold"]],
            "o",
            color="crimson",
            label=f"decision threshold {pr['decision_threshold']:g}",
        )
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1.01)
    ax.set_ylim(0, 1.01)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower left")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    save_png(fig, path)


def save_png(fig, path) -> None:
    """Write a matplotlib figure as PNG to ``path`` (a ``storage.locations.Location``: any file system) and
    close it."""
    import io

    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    path.write_bytes(buffer.getvalue())
