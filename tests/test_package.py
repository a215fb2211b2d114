"""The package's shape: __all__ is honest, and the pure modules never import pyspark."""

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nbspark

PURE = ["errors", "config", "capabilities", "text", "corpora", "events", "model", "backoff", "nb", "metrics", "models", "command",
        "runstats", "manifests", "reports", "rules", "evaluation"]
MODULES = sorted(p.stem for p in (Path(nbspark.__file__).parent).glob("*.py") if p.stem != "__init__")


def test_all_is_honest():
    assert sorted(nbspark.__all__) == sorted(set(nbspark.__all__))
    for name in nbspark.__all__:
        assert hasattr(nbspark, name), name


@pytest.mark.parametrize("module", MODULES)
def test_module_all_is_honest(module):
    """Every module has an ``__all__``; each name in it exists, and every public function or class
    defined in the module is in it."""
    mod = importlib.import_module(f"nbspark.{module}")
    assert hasattr(mod, "__all__"), f"nbspark.{module} has no __all__"
    for name in mod.__all__:
        assert hasattr(mod, name), f"nbspark.{module}.{name}"
    defined = {
        name for name, obj in vars(mod).items()
        if not name.startswith("_") and getattr(obj, "__module__", None) == mod.__name__ and callable(obj)
    }
    assert defined <= set(mod.__all__), f"nbspark.{module}: public but not in __all__: {sorted(defined - set(mod.__all__))}"


def test_families_do_not_import_each_other():
    """The n-gram and naive Bayes job code share the lower floor, never each other's modules."""
    root = Path(nbspark.__file__).parent
    backoff = {"ngram_inputs", "ngram_count", "backoff_jobs", "query", "curves", "check_job", "ml_backoff", "google_filter"}
    naive_bayes = {"nb_inputs", "nb_count", "nb_scoring", "nb_jobs"}
    for mine, theirs in ((backoff, naive_bayes), (naive_bayes, backoff)):
        for module in mine:
            text = (root / f"{module}.py").read_text()
            imported = set(re.findall(r"^\s*from \.(\w+) import", text, flags=re.MULTILINE))
            assert not imported & theirs, f"{module} imports {sorted(imported & theirs)}"


def test_no_module_is_too_long():
    """About 400 lines at most per module, about 60 per function."""
    import ast

    for path in (Path(nbspark.__file__).parent).glob("*.py"):
        text = path.read_text()
        assert len(text.splitlines()) <= 420, f"{path.name}: {len(text.splitlines())} lines"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                assert length <= 65, f"{path.name}:{node.lineno} {node.name} is {length} lines"


def test_pure_modules_do_not_import_pyspark():
    code = "import sys; " + "; ".join(f"import nbspark.{m}" for m in PURE) + "; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
