"""The README's PyMC example runs as written and prints what it says it prints."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pymc")

README = Path(__file__).resolve().parents[2] / "README.md"


def _pymc_example() -> str:
    section = README.read_text().split("## PyMC models", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return code


def test_readme_pymc_example_runs(tmp_path):
    code = _pymc_example()
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)  # it writes model.onnx and mu.onnx where it runs
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md (PyMC models)", "exec"), {})
    finally:
        os.chdir(cwd)
    assert (tmp_path / "model.onnx").exists() and (tmp_path / "mu.onnx").exists()
    first, second = out.getvalue().splitlines()[:2]
    logp, reference = (float(v) for v in re.findall(r"-?\d+\.\d+(?:e[-+]?\d+)?", first))
    np.testing.assert_allclose(logp, reference, rtol=1e-12)
    assert len(re.findall(r"-?\d+\.\d*(?:e[-+]?\d+)?", second)) == 3  # mu[:3]
