"""``spine.estimator``: the estimators' settings are the config's. An estimator's defaults are written
three times over by scikit-learn's convention (``PARAMS``, the ``__init__`` signature that
``clone`` and ``get_params`` read, and the config they stand for); this holds the three equal."""

import inspect

import pytest

import nbspark
from nbspark.settings.config import load_config


@pytest.mark.parametrize("name", ["NaiveBayes", "Density", "Backoff"])
def test_an_estimators_defaults_are_its_configs(name):
    estimator = getattr(nbspark, name)
    signature = {
        k: p.default for k, p in inspect.signature(estimator.__init__).parameters.items() if k != "self"
    }
    assert signature == estimator.PARAMS
    cfg = load_config(None, {"task": estimator.KIND})
    section = getattr(cfg, estimator.SECTION) if estimator.SECTION else cfg
    for key, default in estimator.PARAMS.items():
        assert getattr(section, key) == default, key
    assert estimator().get_params() == estimator.PARAMS and repr(estimator()) == f"{name}()"
