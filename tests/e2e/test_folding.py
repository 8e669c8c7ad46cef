"""A number is defined once: a special function of a constant, folded at compile time,
is the number the model computes for the same value given at run time.

Decompositions run before constant folding (`passes/decompose.py`), so folding
evaluates the formula the model runs, op by op in NumPy. NumPy's and onnxruntime's
elementary kernels (exp, log, pow, sin) may differ in the last bit, so away from
special values the two agree within twice the op's stated bound (`ptonnx.accuracy`);
on special values (NaN, ±inf, ±0 with its sign) they are identical.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.accuracy import bound
from ptonnx.decompositions import DECOMPOSITIONS
from tests.conftest import run_at_every_level

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

HARD = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, 1e-10, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5,
                 3.0, 7.25, 30.0, 170.5, 171.7, 1e10, 1e300, 1.7976931348623157e308, -0.5, -1.0, -2.5, -30.5,
                 -1e300, np.inf, -np.inf, np.nan])
PROBABILITIES = np.array([0.0, -0.0, 5e-324, 1e-300, 1e-10, 0.1, 0.5, 0.9, 1 - 1e-10, 1.0, 1.5, -0.5, np.inf, np.nan])
SMALL = np.array([0.0, 5e-324, 1e-10, 0.5, 1.0, 2.5, 30.0, 300.0, np.inf, np.nan])

#: IR op -> (PyTensor function, operand grids); binary and ternary ops take every combination
FUNCTIONS = {
    "GammaLn": (pt.gammaln, [HARD]), "Gamma": (pt.gamma, [HARD]), "Psi": (pt.psi, [HARD]),
    "TriGamma": (pt.tri_gamma, [HARD]), "Erf": (pt.erf, [HARD]), "Erfc": (pt.erfc, [HARD]),
    "Erfcx": (pt.erfcx, [HARD]), "Erfinv": (pt.erfinv, [PROBABILITIES * 2 - 1]), "Erfcinv": (pt.erfcinv, [PROBABILITIES * 2]),
    "I0": (pt.i0, [HARD]), "I1": (pt.i1, [HARD]), "J0": (pt.j0, [HARD]), "J1": (pt.j1, [HARD]),
    "Ive": (pt.ive, [SMALL, HARD]), "Iv": (pt.iv, [SMALL, HARD]), "Jv": (pt.jv, [np.array([0.0, 1.0, 2.0, 5.0, -3.0]), HARD]),
    "Kve": (pt.kve, [SMALL, HARD]), "GammaInc": (pt.gammainc, [SMALL, SMALL]), "GammaIncC": (pt.gammaincc, [SMALL, SMALL]),
    "GammaU": (pt.gammau, [SMALL, SMALL]), "GammaL": (pt.gammal, [SMALL, SMALL]),
    "GammaIncInv": (pt.gammaincinv, [SMALL, PROBABILITIES]), "GammaIncCInv": (pt.gammainccinv, [SMALL, PROBABILITIES]),
    "BetaInc": (pt.betainc, [SMALL, SMALL, PROBABILITIES]), "BetaIncInv": (pt.betaincinv, [SMALL, SMALL, PROBABILITIES]),
    "Hyp2F1": (pt.hyp2f1, [np.array([0.5, 1.0, -2.0]), np.array([1.5, 3.0]), np.array([2.5, -2.0, 4.0]),
                           np.array([-0.9, -0.0, 0.0, 0.3, 0.99, 1.0, np.nan])]),
    "OwensT": (pt.owens_t, [HARD, HARD]), "PolyGamma": (lambda x: pt.polygamma(3, x), [HARD]),
    "Sinh": (pt.sinh, [HARD]), "Cosh": (pt.cosh, [HARD]), "ArcSinh": (pt.arcsinh, [HARD]), "ArcCosh": (pt.arccosh, [HARD]),
    "ArcTanh": (pt.arctanh, [PROBABILITIES * 2 - 1]), "ArcTan": (pt.arctan, [HARD]), "ArcTan2": (pt.arctan2, [HARD, HARD]),
    "ArcSin": (pt.arcsin, [PROBABILITIES * 2 - 1]), "ArcCos": (pt.arccos, [PROBABILITIES * 2 - 1]),
    "Log1p": (pt.log1p, [HARD]), "Expm1": (pt.expm1, [HARD]), "Softplus": (pt.softplus, [HARD]),
    "Exp2": (pt.exp2, [HARD]), "Log2": (pt.log2, [HARD]), "Log10": (pt.log10, [HARD]),
    "Log1mexp": (pt.log1mexp, [HARD]),
}


def test_every_decomposed_op_is_checked():
    assert set(FUNCTIONS) == set(DECOMPOSITIONS)


def _operands(grids):
    mesh = np.meshgrid(*grids, indexing="ij")
    return [m.ravel() for m in mesh]


@pytest.mark.parametrize("op", sorted(FUNCTIONS))
def test_folded_is_what_runs(op):
    fn, grids = FUNCTIONS[op]
    arrays = _operands(grids)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        variables = [pt.dvector(f"x{i}") for i in range(len(arrays))]
        at_run_time = ptonnx.compile_function(variables, [fn(*variables)])
        anchor = pt.dvector("anchor")  # a model needs an input: passed through as a second output
        folded = ptonnx.compile_function([anchor], [fn(*(pt.constant(a) for a in arrays)), anchor])
    # everything folds but the iterations (a Loop is not folded) and what reads their results
    assert len(folded.ir) == 0 or "Loop" in folded.ir.op_counts(), folded.ir.op_counts()
    (ran,) = run_at_every_level(at_run_time, *arrays)["ORT_ENABLE_ALL"]
    for level, (got, _) in run_at_every_level(folded, np.zeros(1)).items():
        special = ~np.isfinite(ran) | (ran == 0) | ~np.isfinite(got) | (got == 0)
        same = (got == ran) & (np.signbit(got) == np.signbit(ran)) | np.isnan(got) & np.isnan(ran)
        bad = special & ~same
        assert not bad.any(), f"{op} at {level}: {[(*(a[i] for a in arrays), got[i], ran[i]) for i in np.flatnonzero(bad)[:5]]}"
        b = bound(op, "float64")
        with np.errstate(all="ignore"):
            tolerance = 2 * b.ulp * np.spacing(np.abs(ran)) + 2 * b.atol
            far = ~special & (np.abs(got - ran) > tolerance)
        assert not far.any(), f"{op} at {level}: {[(*(a[i] for a in arrays), got[i], ran[i]) for i in np.flatnonzero(far)[:5]]}"
