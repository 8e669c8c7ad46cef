"""The pipeline's boundaries: lifting never imports onnx, lowering never imports pytensor,
passes and the IR import neither (nor lowering/lifting)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "ptonnx"

FORBIDDEN = {
    "ir": ("onnx", "onnxruntime", "pytensor", "ptonnx.lifting", "ptonnx.lowering", "ptonnx.passes"),
    "passes": ("onnx", "onnxruntime", "pytensor", "ptonnx.lifting", "ptonnx.lowering"),
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
