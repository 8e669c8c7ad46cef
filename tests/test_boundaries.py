"""The pipeline's boundaries: lifting never imports onnx, lowering never imports pytensor,
passes, decompositions and the IR import neither (nor lowering/lifting); and no two modules
import each other, at the top or inside a function (a cycle broken by a function-local import
is still a cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1] / "ptonnx"

FORBIDDEN = {
    "ir": ("onnx", "onnxruntime", "pytensor", "ptonnx.lifting", "ptonnx.lowering", "ptonnx.passes"),
    "passes": ("onnx", "onnxruntime", "pytensor", "ptonnx.lifting", "ptonnx.lowering"),
    "decompositions": ("onnx", "onnxruntime", "pytensor", "ptonnx.lifting", "ptonnx.lowering", "ptonnx.passes"),
    "lifting": ("onnx", "onnxruntime", "ptonnx.lowering", "ptonnx.passes"),
    "lowering": ("pytensor", "ptonnx.lifting", "ptonnx.nn", "ptonnx.models"),
    "nn": ("onnx", "onnxruntime", "ptonnx.lowering"),
    "models": ("onnx", "onnxruntime", "ptonnx.lowering"),
}


def imports_of(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_keeps_to_its_side_of_the_pipeline(package):
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for name in imports_of(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[package]):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def _module(path: Path) -> str:
    name = ".".join(("ptonnx", *path.relative_to(ROOT).with_suffix("").parts))
    return name.removesuffix(".__init__")


def _run_time_imports(path: Path):
    """Every import statement of `path` that runs (not those under `if TYPE_CHECKING:`)."""
    tree = ast.parse(path.read_text())
    skipped = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
               for stmt in block.body for n in ast.walk(stmt)}
    return [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom) and id(n) not in skipped]


def test_no_two_modules_import_each_other():
    """Package `__init__` files only gather their modules, so their imports are left out."""
    modules = {_module(p): p for p in ROOT.rglob("*.py")}
    graph = nx.DiGraph()
    for name, path in modules.items():
        if path.name == "__init__.py":
            continue
        for node in _run_time_imports(path):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module for a in node.names]
            else:
                targets = []
            graph.add_edges_from((name, t) for t in targets if t in modules and t != name)
    assert [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1] == []
