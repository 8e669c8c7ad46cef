"""How exact PyTensor's gradient loops are, in PyTensor (Python and C) and in ptonnx.

    python -m audit.gradient_loop_accuracy

d/dk of gammainc and gammaincc (PyTensor's Stan series) and d/da, d/db of betainc
(Boik & Robison-Cox) at a few points, each against mpmath's derivative (40 digits):
the relative error of ptonnx (onnxruntime, ORT_ENABLE_ALL), PyTensor's Python
evaluation and its C code. The known limits (docs/limits.md) quote this table.
"""

from __future__ import annotations

import warnings

import mpmath
import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.compile.mode import Mode

import ptonnx

GAMMA_POINTS = [(0.5, 0.1), (1.0, 1.0), (3.0, 2.5), (5.0, 4.0), (20.0, 30.0), (50.0, 45.0), (2.0, 40.0)]
BETA_POINTS = [(10.0, 20.0, 0.3), (0.1, 5.0, 0.9), (50.0, 2.0, 0.95), (1e-3, 1e-3, 0.5), (200.0, 300.0, 0.4)]


def _rows(name, variables, grads, points, exact):
    evaluators = {
        "ptonnx": ptonnx.compile_function(variables, grads),
        "PyTensor Python": pytensor.function(variables, grads, mode=Mode(linker="py")),
        "PyTensor C": pytensor.function(variables, grads, mode=Mode(linker="cvm")),
    }
    for point in points:
        args = [np.array([v]) for v in point]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            got = {k: [float(np.ravel(g)[0]) for g in f(*args)] for k, f in evaluators.items()}
        for i, want in enumerate(exact(*point)):
            errors = " | ".join(f"{abs(got[k][i] - want) / abs(want):.1e}" for k in evaluators)
            print(f"| {name}[{i}] | {', '.join(f'{v:g}' for v in point)} | {want:.6g} | {errors} |", flush=True)


def main() -> None:
    mpmath.mp.dps = 40
    print("| derivative | point | exact | ptonnx | PyTensor Python | PyTensor C |\n|---|---|---|---|---|---|")
    k, x = pt.dvector("k"), pt.dvector("x")
    lower = lambda a, z: mpmath.gammainc(a, 0, z, regularized=True)  # noqa: E731
    upper = lambda a, z: mpmath.gammainc(a, z, mpmath.inf, regularized=True)  # noqa: E731
    for name, fn, mp_fn in [("d/dk gammainc", pt.gammainc, lower), ("d/dk gammaincc", pt.gammaincc, upper)]:
        exact = lambda a, z, f=mp_fn: [float(mpmath.diff(lambda t: f(t, mpmath.mpf(z)), mpmath.mpf(a)))]  # noqa: E731
        _rows(name, [k, x], [pt.grad(fn(k, x).sum(), k)], GAMMA_POINTS, exact)
    a, b, y = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")

    def beta_exact(p, q, z):
        p, q, z = (mpmath.mpf(v) for v in (p, q, z))
        reg = lambda s, t: mpmath.betainc(s, t, 0, z, regularized=True)  # noqa: E731
        return [float(mpmath.diff(lambda t: reg(t, q), p)), float(mpmath.diff(lambda t: reg(p, t), q))]

    _rows("d/d(a, b) betainc", [a, b, y], pt.grad(pt.betainc(a, b, y).sum(), [a, b]), BETA_POINTS, beta_exact)


if __name__ == "__main__":
    main()
