"""The package's shape: __all__ is honest, the floors hold (no circle, no import from a higher
floor), modules stay small, and the pure modules never import pyspark."""

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nbspark

ROOT = Path(nbspark.__file__).parent
sys.path.insert(0, str(ROOT.parent / "scripts"))
import import_graph  # noqa: E402

#: Modules that run where no JVM is: the no-Spark face, the settings, the reports, the parsers and
#: the pure maths of both families.
PURE = [
    "errors", "loading", "app.command", "settings.config", "settings.capabilities", "settings.check",
    "settings.naive_bayes", "inputs.tokens", "inputs.parsers", "inputs.stats", "report.metrics",
    "report.format", "storage.manifests", "backoff.events", "backoff.model", "backoff.predict",
    "backoff.predictor", "backoff.rules", "backoff.evaluation", "backoff.strategies", "naive_bayes.model",
    "naive_bayes.predictor", "naive_bayes.vocabulary_sums",
]  # fmt: skip
MODULES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts)
    for p in ROOT.rglob("*.py")
    if p.name != "__init__.py" and p.parent.name != "jobs"
)


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
        name
        for name, obj in vars(mod).items()
        if not name.startswith("_") and getattr(obj, "__module__", None) == mod.__name__ and callable(obj)
    }
    assert defined <= set(mod.__all__), (
        f"nbspark.{module}: public but not in __all__: {sorted(defined - set(mod.__all__))}"
    )


def test_the_floors_hold():
    """No circle, no import from a higher floor, and the two families never import each other
    (``scripts/import_graph.py``, which prints the graph)."""
    known = import_graph.modules(ROOT)
    graph = {name: import_graph.imports(name, path, known) for name, path in known.items()}
    assert import_graph.breaches(graph) == []
    for name, targets in graph.items():
        for family, other in (("naive_bayes", "backoff"), ("backoff", "naive_bayes")):
            if name.startswith(f"nbspark.{family}."):
                assert not [t for t in targets if t.startswith(f"nbspark.{other}")], name


def test_the_graph_checker_sees_a_circle_and_an_import_upwards():
    graph = {
        "nbspark.spine.a": {"nbspark.app.cli"},
        "nbspark.app.cli": set(),
        "nbspark.inputs.x": {"nbspark.inputs.y"},
    }
    graph["nbspark.inputs.y"] = {"nbspark.inputs.x"}
    problems = import_graph.breaches(graph)
    assert problems[0].startswith("nbspark.spine.a (spine) imports nbspark.app.cli, a higher floor (app)")
    assert problems[1] == "circle: nbspark.inputs.x -> nbspark.inputs.y"


def test_no_module_is_too_long():
    """At most 520 lines per module and 100 per function, as the formatter lays them out: past
    that, split by role rather than squeeze."""
    for path in ROOT.rglob("*.py"):
        text = path.read_text()
        assert len(text.splitlines()) <= 520, f"{path.relative_to(ROOT)}: {len(text.splitlines())} lines"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                assert length <= 100, f"{path.relative_to(ROOT)}:{node.lineno} {node.name} is {length} lines"


def test_the_readme_stays_a_front_door():
    """At most 250 lines: what nbspark is, the two commands, using a model, checking text, the jobs,
    data, a cluster, tests; reference and figures live in ``docs/``."""
    lines = (ROOT.parent / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md: {len(lines)} lines; move reference to docs/"


def _slug(heading: str) -> str:
    """A Markdown heading's anchor, as GitHub makes it: lower case, punctuation out, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_of_the_readme_and_docs_lands():
    """Each relative link of README.md and docs/*.md names a file that exists, and a Markdown file's
    anchor names one of its headings (docs/serve.md linked to a bold paragraph of docs/checker.md)."""
    top = ROOT.parent
    broken = []
    for page in [top / "README.md", *sorted((top / "docs").glob("*.md"))]:
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(#[^)\s]+)?\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http:", "https:", "mailto:")):
                continue
            linked = page.parent / target if target else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.*)$", linked.read_text(encoding="utf-8"), re.M)
                if anchor[1:] not in map(_slug, headings):
                    broken.append(f"{page.name}: {target}{anchor}")
    assert not broken, broken


def test_pure_modules_do_not_import_pyspark():
    code = (
        "import sys; " + "; ".join(f"import nbspark.{m}" for m in PURE) + "; print('pyspark' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_loaded_naive_bayes_model_predicts_without_importing_scikit_learn_or_pyspark(tmp_path):
    """``nbspark.load`` and ``predict`` (what ``nbspark predict`` and the server run) import neither:
    scikit-learn alone took about a second of each ``nbspark predict`` (scipy.stats, pandas)."""
    import nbspark

    nbspark.NaiveBayes().fit(["win cash now", "lunch at noon"], ["spam", "ham"]).save(tmp_path / "m")
    code = (
        "import sys, nbspark; m = nbspark.load(sys.argv[1]); "
        "print(m.predict(['cash now'])[0], 'sklearn' in sys.modules, 'pyspark' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "m")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["spam", "False", "False"]


def test_no_line_is_wider_than_the_formatter_allows():
    """ruff's E501 lets a line of one unsplittable token pass; the width is kept everywhere."""
    width = 110  # [tool.ruff] line-length
    top = ROOT.parent
    wide = [
        f"{path.relative_to(top)}:{number}"
        for folder in ("nbspark", "tests", "scripts")
        for path in (top / folder).rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > width
    ]
    assert wide == []
