"""The package's layers point one way, and no module imports itself back through others.

Data flows formats → detect → resolve → transform → formats; the imports follow the layers
below, written down once here. Every import counts: at module level, inside functions and
under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "polydeid"
ROOT = "<root>"  # polydeid/__init__.py

#: The layers, lowest first. A module imports its own package and lower layers only; the
#: packages of one layer import none of one another.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_compiled",),  # which modules run compiled (imports nothing of polydeid)
    ("core",),  # spans, segments, taxonomy, errors, resolution
    ("text",),  # scripts, word grid, guarded patterns, normalisation
    ("locales",),  # language and country data, one loader per kind
    ("dates", "lexicon"),  # the shared vocabulary: dates; field names, labels, pasted tables
    ("formats", "detect", "transform"),  # read and write; find; replace
    ("engine",),  # documents end to end: a detect callable and a redactor over the fields
    ("api", "testing"),  # Deidentifier; test doubles
    ("corpora",),  # the workshop: annotated corpora,
    ("evaluate", "synth"),  # scoring, synthetic notes,
    ("train",),  # training and tuning
    ("cli", "serve"),  # the faces
    ("batch",),
    ("spark",),
    (ROOT,),
)
LEVEL = {package: level for level, packages in enumerate(LAYERS) for package in packages}


def _module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    package = parts[-1] == "__init__"
    if package:
        parts.pop()
    return ".".join(parts), package


@cache
def modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        name, package = _module_name(path)
        found[name] = (path, package)
    return found


def _imported(name: str, package: bool, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The polydeid modules an import statement names (a name imported from a package that is
    a module of it counts as that module)."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        if node.level:
            base = name.split(".") if package else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        targets = [
            f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules() else source
            for alias in node.names
        ]
    for target in targets:
        if target.split(".")[0] != "polydeid":
            continue
        while target not in modules() and "." in target:
            target = target.rsplit(".", 1)[0]
        yield target


@cache
def imports() -> dict[str, frozenset[str]]:
    """Each polydeid module and the polydeid modules it imports anywhere in its body."""
    graph = {}
    for name, (path, package) in modules().items():
        tree = ast.parse(path.read_text("utf-8"), filename=str(path))
        found = {
            target
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for target in _imported(name, package, node)
        }
        graph[name] = frozenset(found - {name})
    return graph


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def test_every_package_has_a_layer() -> None:
    unplaced = sorted({layer_of(m) for m in modules()} - set(LEVEL))
    assert not unplaced, f"place these in LAYERS: {unplaced}"


def test_imports_point_down_the_layers() -> None:
    wrong = []
    for module, targets in sorted(imports().items()):
        for target in sorted(targets):
            here, there = layer_of(module), layer_of(target)
            if here != there and LEVEL[there] >= LEVEL[here]:
                wrong.append(f"{module} imports {target} ({here} -> {there})")
    assert not wrong, "\n".join(wrong)


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_back() -> None:
    assert _cycles(imports()) == []


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": frozenset({"b"}), "b": frozenset({"a"})}, [["a", "b"]]),
        ({"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset()}, []),
        (
            {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset()},
            [["a", "b", "c"]],
        ),
    ],
)
def test_the_cycle_finder_finds_cycles(
    graph: dict[str, frozenset[str]], expected: list[list[str]]
) -> None:
    assert _cycles(graph) == expected


def test_function_level_and_type_checking_imports_count() -> None:
    """The graph sees imports inside functions and under TYPE_CHECKING, not only at the top."""
    assert "polydeid.engine" in imports()["polydeid.api"]  # imported inside methods
    assert "polydeid.detect.tagger.detector" in imports()["polydeid.detect.registry"]
