"""The package's shape: __all__ is honest, and the pure modules never import pyspark."""

import importlib
import subprocess
import sys

import pytest

import nbspark

PURE = ["config", "text", "corpora", "events", "model", "backoff", "metrics"]


def test_all_is_honest():
    assert sorted(nbspark.__all__) == sorted(set(nbspark.__all__))
    for name in nbspark.__all__:
        assert hasattr(nbspark, name), name


@pytest.mark.parametrize("module", PURE + ["tables", "readers", "counting", "pipeline", "cli", "session"])
def test_module_all_names_exist(module):
    mod = importlib.import_module(f"nbspark.{module}")
    for name in getattr(mod, "__all__", []):
        assert hasattr(mod, name), f"nbspark.{module}.{name}"


def test_pure_modules_do_not_import_pyspark():
    code = "import sys; " + "; ".join(f"import nbspark.{m}" for m in PURE) + "; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
