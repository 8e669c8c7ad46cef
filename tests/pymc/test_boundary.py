"""PyMC is an optional extra: only `ptonnx/pymc.py` imports it (checked without PyMC installed too)."""

from __future__ import annotations

from pathlib import Path

from tests.test_boundaries import imports_of

ROOT = Path(__file__).resolve().parents[2] / "ptonnx"


def test_only_ptonnx_pymc_imports_pymc():
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted(ROOT.rglob("*.py"))
        if path != ROOT / "pymc.py"
        for name in imports_of(path)
        if name == "pymc" or name.startswith("pymc.")
    ]
    assert offenders == []
