"""A config's ``task``, the model family that trains it and the classify job that scores with it:
the one rule of ``nbspark train``, ``nbspark stream``, ``nbspark classify``, ``nbspark.fit`` and
``nbspark.classify``. Imports nothing until asked: only the run's own family is imported (the naive
Bayes family brings numpy and scipy)."""

from __future__ import annotations

__all__ = ["classify_plan", "family_of"]


def family_of(task: str):
    """The model family (``spine.training.Family``) that a config's ``task`` trains."""
    if task == "naive_bayes":
        from nbspark.naive_bayes.jobs import NAIVE_BAYES

        return NAIVE_BAYES
    if task == "density":
        from nbspark.density.jobs import DENSITY

        return DENSITY
    from nbspark.backoff.jobs import BACKOFF

    return BACKOFF


def classify_plan(cfg, model_dir, inputs, out, overrides=frozenset(), overwrite: bool = False, where="spark"):
    """``(plan, run)``: the classify run of ``cfg``'s ``task``, decided (its family's planner, with
    the settings named in ``overrides`` winning over the model's, and ``where`` it scores:
    ``spine.classifying.plan_classify``), and the function that runs it, ``run(spark, plan)`` (spark
    None where the plan scores in process). ``inputs``: the test inputs, or a function that resolves
    them once the model's manifest is read."""
    from nbspark.errors import ConfigError
    from nbspark.settings.capabilities import test_problem

    if cfg.task == "naive_bayes":
        from nbspark.naive_bayes.jobs import plan_nb_classify, run_nb_classify

        return plan_nb_classify(cfg, model_dir, inputs, out, overrides, overwrite, where), run_nb_classify
    if cfg.task == "density":
        from nbspark.density.jobs import plan_density_classify, run_density_classify

        if problem := test_problem(cfg):  # a test input it cannot score, before the model is read
            raise ConfigError(problem)
        return plan_density_classify(
            cfg, model_dir, inputs, out, overrides, overwrite, where
        ), run_density_classify
    from nbspark.backoff.jobs import plan_backoff_classify, run_backoff_classify

    return plan_backoff_classify(cfg, model_dir, inputs, out, overwrite, where), run_backoff_classify
