"""Models outside Spark: ``load(path)`` reads any nbspark model with pyarrow and returns an object
that predicts in process, ``fit(config)`` trains one in process and ``classify(config)`` scores a
config's test set with one, as the jobs do. No JVM.

* Backoff models (``backoff.predictor.BackoffPredictor``): ``predict(windows)``, ``predict_proba``,
  ``explain(window)`` and ``check(text)``.
* Naive Bayes models (``naive_bayes.predictor.NBPredictor``): ``predict`` and ``predict_proba`` of
  texts (text models) or rows (table models).

The smoothing is the one recorded in the model unless the caller overrides it; an override the
model would not use is refused. The model is refused, with the jobs' one-line errors, when it is
of another kind or schema version, or incomplete (no ``_SUCCESS``, a part file whose schema or
row count does not match the manifest).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from nbspark.backoff.predictor import read_backoff
from nbspark.errors import ConfigError, OutputError, StorageError
from nbspark.naive_bayes.predictor import read_nb
from nbspark.settings.naive_bayes import read_as, refuse_unused
from nbspark.storage.locations import location
from nbspark.storage.manifests import BACKOFF_KIND, DENSITY_KIND, NB_KIND, load_manifest

__all__ = ["classify", "fit", "load"]


def load(
    path,
    *,
    chain: Sequence[str] | None = None,
    alpha: float | None = None,
    var_smoothing: float | None = None,
    model: str | None = None,
    norm: bool | None = None,
    m: float | None = None,
):
    """Read the nbspark model at ``path``: a ``BackoffPredictor``, an ``NBPredictor`` or a
    ``DensityPredictor``.

    ``chain`` (backoff), ``alpha`` / ``var_smoothing`` / ``norm`` (naive Bayes) and ``m`` (density)
    override what the model recorded; left out, the model's own settings apply. ``model`` reads a
    multinomial model as a complement one (``"complement"``) or the reverse: the counts are the same.
    """
    model_dir = location(path)
    for attempt in range(READ_TRIES):
        before = _fingerprint(model_dir)
        try:
            manifest = load_manifest(model_dir, (BACKOFF_KIND, NB_KIND, DENSITY_KIND))
            loaded = _load(model_dir, manifest, chain, alpha, var_smoothing, model, norm, m)
        except (OutputError, StorageError, OSError):
            # a stream compacted the model while it was read (storage.versions): read it again; a
            # model that did not change is at fault itself
            if attempt + 1 == READ_TRIES or _fingerprint(model_dir) == before:
                raise
            time.sleep(0.1)
            continue
        # the manifest and the counts read are of one version only if the base did not move meanwhile
        # (a compaction's new base may have the old one's rows, not its manifest); a delta committed
        # meanwhile changes nothing read (deltas never change)
        if _fingerprint(model_dir) == before:
            return loaded
        time.sleep(0.1)
    raise OutputError(f"{model_dir}: the model changed while it was read, {READ_TRIES} times; read it again")


#: How many times ``load`` reads a model whose base was replaced while it was read.
READ_TRIES = 3


def _fingerprint(model_dir):
    """The base's manifest: what a compaction, a train or an ``--update`` replaces."""
    try:
        return (model_dir / "manifest.json").read_bytes()
    except (OutputError, StorageError, OSError):
        return None


def _load(model_dir, manifest, chain, alpha, var_smoothing, model, norm, m):
    others = {"chain": chain, "alpha": alpha, "var_smoothing": var_smoothing, "model": model, "norm": norm}
    if manifest["kind"] == DENSITY_KIND:
        if given := [k for k, v in others.items() if v is not None]:
            raise ConfigError(f"{', '.join(given)} does not apply to {model_dir}, a density model (m does)")
        from nbspark.density.predictor import read_density

        return read_density(model_dir, manifest, m)
    if m is not None:
        raise ConfigError(f"m does not apply to {model_dir}; it is a density model's smoothing")
    # an override the model would not use is refused, never ignored (no smoothing is a backoff model's)
    if manifest["kind"] == BACKOFF_KIND:
        if model is not None:
            raise ConfigError(
                f"model does not apply to {model_dir}, a backoff model (naive Bayes models take it)"
            )
        kind = "backoff"
    else:
        kind = read_as(manifest["model"], model)
    given = (("alpha", alpha), ("var_smoothing", var_smoothing), ("norm", norm))
    refuse_unused(kind, [n for n, v in given if v is not None], str(model_dir))
    if kind == "backoff":
        return read_backoff(model_dir, manifest, chain)
    if chain is not None:
        raise ConfigError(f"chain does not apply to {model_dir}, a {kind} model (backoff models take it)")
    return read_nb(model_dir, manifest, alpha, var_smoothing, model, norm)


def fit(
    config=None,
    out=None,
    *,
    settings=None,
    data_dir=None,
    overwrite: bool = False,
    update: bool = False,
    force: bool = False,
):
    """Train a model in this process, without Spark or a JVM, and return it as ``load`` does.

    ``config`` is an experiment file (or None: the embedded default) and ``settings`` its overrides
    by key, as ``--set`` gives them (``{"train.path": "mail.tsv", "nb.model": "bernoulli"}``; values
    that are not strings are written as TOML would, a ``pathlib.Path`` as its path). ``out`` is the
    model directory (default: the config's ``model_dir``); an existing one is replaced only with
    ``overwrite``. The config's ``task`` picks the model (``family_of``): naive Bayes, backoff or
    density, the same model as ``nbspark train``'s with Spark (``spine.training.train_in_process``);
    a config that cannot be counted in process (a URI, ``engine = dataframe``) is refused with a
    ``ConfigError``.

    ``update``: add the counts of the training input to the model ``out``, as ``nbspark train --update``
    does (the same checks: its settings, a file it holds already, unless ``force``); with no config
    and no ``task``, by the config it was trained with (``settings.config.load_config``).
    """
    from nbspark.settings.config import load_config
    from nbspark.settings.values import overrides_of
    from nbspark.spine.training import train_in_process
    from nbspark.storage.uris import is_local
    from nbspark.tasks import family_of

    if update and overwrite:
        raise ValueError("update adds to the model out, overwrite replaces it: give one")
    if force and not update:
        raise ValueError("force goes with update")
    if update and out is None:
        raise ValueError("update adds to the model out: name it")
    recorded = update and out is not None and is_local(out)  # else refused below
    cfg = load_config(config, overrides_of({} if settings is None else settings), out if recorded else None)
    out = cfg.model_dir if out is None else out
    train_in_process(cfg, family_of(cfg.task), out, data_dir, overwrite, update, force)
    return load(out)


def classify(
    config=None, model=None, out=None, *, settings=None, data_dir=None, overwrite: bool = False
) -> dict:
    """Score a config's test set with a model in this process, without Spark or a JVM, as ``nbspark
    classify --in-process`` does, and return the metrics.

    ``config`` and ``settings`` as ``fit`` takes them (the test set: ``test.path``, ``test.format``,
    …; scoring settings such as ``nb.positive_label``, which win over the model's); with no config
    and no ``task``, the config the model was trained with (``settings.config.load_config``). ``model`` is the
    model directory (default: the config's ``model_dir``), ``out`` the results directory (default:
    its ``results_dir``), written as the Spark job writes it: ``predictions/`` (Parquet),
    ``metrics.json``, ``metrics.csv``, ``report.txt``; an existing one is replaced only with
    ``overwrite``. A run that only Spark can do (a naive Bayes model scored by the join scorer) is
    refused with a ``ConfigError``, as a path that is not local is.
    """
    from nbspark.inputs.files import damaged_files_named
    from nbspark.inputs.resolve import resolve_input
    from nbspark.settings.config import load_config
    from nbspark.settings.values import overrides_of
    from nbspark.spine.training import refuse_remote
    from nbspark.storage.uris import is_local
    from nbspark.tasks import classify_plan

    given = overrides_of({} if settings is None else settings)
    local = model is not None and is_local(model)  # else refused below
    cfg = load_config(config, given, model if local else None)
    model = cfg.model_dir if model is None else model
    out = cfg.results_dir if out is None else out
    refuse_remote(cfg, data_dir, model, part="test", out=out)
    explicit = frozenset(given)
    plan, run = classify_plan(
        cfg, model, lambda: resolve_input(cfg.test, data_dir), out, explicit, overwrite, where="here"
    )
    with damaged_files_named(plan.inputs.files):
        return run(None, plan)
