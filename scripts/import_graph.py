"""Print nbspark's import graph by floor and check it: no circle, no import from a higher floor.

    python scripts/import_graph.py          # the floors, each module with what it imports
    python scripts/import_graph.py --dot    # the same as Graphviz (dot -Tpng > graph.png)

Every import counts, the lazy ones inside functions too. A floor may import from the floors
below it and from its own folder (a folder's modules may not import each other in a circle).
Exit status 1 when a rule is broken, with one line per breach.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Top to bottom. A module's floor is that of its longest prefix here.
FLOORS = [
    ("jobs", ["nbspark.jobs", "nbspark.__main__"]),
    ("app", ["nbspark.app"]),
    ("serve", ["nbspark.serve"]),
    ("faces", ["nbspark", "nbspark.ml", "nbspark.frames", "nbspark.loading", "nbspark.predictions"]),
    ("families", ["nbspark.naive_bayes", "nbspark.backoff", "nbspark.density"]),
    ("spine", ["nbspark.spine"]),
    ("settings, report", ["nbspark.settings", "nbspark.report"]),
    ("inputs", ["nbspark.inputs"]),
    ("storage", ["nbspark.storage"]),
    ("spark", ["nbspark.spark"]),
    ("base", ["nbspark.errors", "nbspark._version"]),
]


def modules(package: Path) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports (a name imported from a package counts as the
    submodule when there is one, else as the package)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            if base not in known:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    found.discard(name)
    return found


def floor_of(name: str) -> int:
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best is None:
        raise SystemExit(f"{name}: on no floor; add its folder to FLOORS in {Path(__file__).name}")
    return best


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def breaches(graph: dict[str, set[str]]) -> list[str]:
    problems = []
    for name in sorted(graph):
        for target in sorted(graph[name]):
            if floor_of(target) < floor_of(name):
                problems.append(
                    f"{name} ({FLOORS[floor_of(name)][0]}) imports {target}, a higher floor "
                    f"({FLOORS[floor_of(target)][0]})"
                )
    for component in cycles(graph):
        problems.append("circle: " + " -> ".join(component))
    return problems


def main(argv: list[str]) -> int:
    known = modules(ROOT / "nbspark")
    graph = {name: imports(name, path, known) for name, path in known.items()}
    if "--dot" in argv:
        print("digraph nbspark {\n  rankdir=TB; node [shape=box, fontsize=10];")
        for name in sorted(graph):
            for target in sorted(graph[name]):
                print(f'  "{name}" -> "{target}";')
        print("}")
    else:
        for index, (floor, _) in enumerate(FLOORS):
            print(f"== {floor}")
            for name in sorted(n for n in graph if floor_of(n) == index):
                short = sorted(t.removeprefix("nbspark.") for t in graph[name])
                print(f"  {name.removeprefix('nbspark.') or 'nbspark'} -> {', '.join(short) or '-'}")
    problems = breaches(graph)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(
        f"{len(graph)} modules, {sum(map(len, graph.values()))} imports, {len(problems)} breaches",
        file=sys.stderr,
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
