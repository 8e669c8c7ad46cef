"""A number is defined once: every foldable elementwise op of a constant, folded at compile
time, is the number the model computes for the same value given at run time (the special
functions and the decomposed elementary ones; the ops onnxruntime's kernels compute; the
exact ones: comparisons, logic, selection, casts; integer arithmetic at its limits).

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

#: ±0, tiny, the floats nearest multiples of pi/2 (zeros and poles), both sides of 2**20 (where the
#: reduction stops), huge, ±inf, NaN
ANGLES = np.array([-1e22, -1e10, -(2.0**20) - 0.5, -(2.0**20), -7.0, -np.pi, -1.0, -1e-300, -0.0, 0.0, 5e-324, 1e-8, 0.5,
                   1.5707963267948966, 3.0, 4.71238898038469, 1e5 * np.pi, 1048575.5, 2.0**20, 1e10, 1e22, np.inf, np.nan])

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
    "Log1mexp": (pt.log1mexp, [HARD]), "Sigmoid": (pt.sigmoid, [HARD]), "Tanh": (pt.tanh, [HARD]),
    "Sin": (pt.sin, [ANGLES]), "Cos": (pt.cos, [ANGLES]), "Tan": (pt.tan, [ANGLES]),
}


#: decomposed into Loops, which constant folding never evaluates (`no_fold`): a constant matrix
#: runs the very Loop a run-time one runs. (A matrix of 8 or fewer static rows is unrolled into
#: plain IR ops, which fold like any others: the same formula, NumPy's kernels.)
LOOPED = frozenset(name for name, s in ptonnx.ir.all_schemas().items() if s.family.startswith("linalg"))


#: the generator and the draws: a constant key folds to the bits the model computes, checked by
#: tests/random/test_generator.py (Threefry-2x32's known answers, folded and run)
DRAWN = frozenset(name for name, s in ptonnx.ir.all_schemas().items() if s.family == "random")


def test_every_decomposed_op_is_checked():
    assert set(FUNCTIONS) == set(DECOMPOSITIONS) - LOOPED - DRAWN
    assert all(ptonnx.ir.get_schema(op).has("no_fold") for op in LOOPED)


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


#: the ops onnxruntime computes with its own kernels (or a few exact ONNX ops): folded by
#: NumPy, run by onnxruntime; IR op -> (PyTensor function, operand grids)
SIGNED = np.array([-np.inf, -1e300, -7.25, -2.5, -1.0, -0.5, -5e-324, -0.0, 0.0, 5e-324, 0.5, 1.0, 2.5, 3.0, 1e300, np.inf, np.nan])
KERNELS = {
    "Add": (pt.add, [SIGNED, SIGNED]), "Sub": (pt.sub, [SIGNED, SIGNED]), "Mul": (pt.mul, [SIGNED, SIGNED]),
    "Div": (pt.true_div, [SIGNED, SIGNED]), "Pow": (pt.pow, [SIGNED, SIGNED]), "Max": (pt.maximum, [SIGNED, SIGNED]),
    "Min": (pt.minimum, [SIGNED, SIGNED]), "IntDiv": (pt.floor_div, [SIGNED, SIGNED]), "Mod": (pt.mod, [SIGNED, SIGNED]),
    "Neg": (pt.neg, [HARD]), "Abs": (pt.abs, [HARD]), "Sign": (pt.sign, [HARD]), "Reciprocal": (pt.reciprocal, [HARD]),
    "Exp": (pt.exp, [HARD]), "Log": (pt.log, [HARD]), "Sqrt": (pt.sqrt, [HARD]),
    "Floor": (pt.floor, [HARD]), "Ceil": (pt.ceil, [HARD]), "Round": (pt.round, [HARD + 0.5]), "Trunc": (pt.trunc, [HARD]),
    "RoundHalfAwayFromZero": (pt.round_half_away_from_zero, [HARD + 0.5]),
}
#: integer ops: folded and run-time results are identical (int64 limits, zero divisors and all)
INT_LIMITS = np.array([np.iinfo(np.int64).min, -(2**40), -7, -1, 0, 1, 3, 7, 2**40, np.iinfo(np.int64).max], dtype=np.int64)
INTEGER_KERNELS = {"IntDiv": pt.floor_div, "Mod": pt.mod, "Add": pt.add, "Mul": pt.mul, "Sub": pt.sub}


def test_every_float_elementwise_op_is_checked():
    """Every float elementwise op of the IR is checked here: decomposed or a kernel's."""
    from ptonnx.ir.registry import all_schemas
    from ptonnx.ir.types import FLOAT_DTYPES

    not_arithmetic = {"Identity", "Cast", "Where", "IsNaN", "IsInf", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                      "Equal", "NotEqual", "And", "Or", "Xor", "Not"}
    float_ops = {name for name, s in all_schemas().items() if s.family in ("elementwise", "special")
                 and any(d in FLOAT_DTYPES for ds in s.constraints.values() for d in ds)} - not_arithmetic
    assert float_ops == set(FUNCTIONS) | set(KERNELS), float_ops ^ (set(FUNCTIONS) | set(KERNELS))


def _folded_and_run(fn, arrays, variables):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        at_run_time = ptonnx.compile_function(variables, [fn(*variables)])
        anchor = pt.dvector("anchor")
        folded = ptonnx.compile_function([anchor], [fn(*(pt.constant(a) for a in arrays)), anchor])
    assert len(folded.ir) == 0, folded.ir.op_counts()
    (ran,) = run_at_every_level(at_run_time, *arrays)["ORT_ENABLE_ALL"]
    return ran, {level: got for level, (got, _) in run_at_every_level(folded, np.zeros(1)).items()}


@pytest.mark.parametrize("op", sorted(KERNELS))
def test_a_folded_kernel_op_is_what_onnxruntime_computes(op):
    """NumPy folds what onnxruntime's kernel runs: identical on special values (NaN, ±inf,
    ±0 with its sign), within twice the op's stated bound elsewhere."""
    fn, grids = KERNELS[op]
    arrays = _operands(grids)
    ran, folded = _folded_and_run(fn, arrays, [pt.dvector(f"x{i}") for i in range(len(arrays))])
    b = bound(op, "float64")
    for level, got in folded.items():
        special = ~np.isfinite(ran) | (ran == 0) | ~np.isfinite(got) | (got == 0)
        same = (got == ran) & (np.signbit(got) == np.signbit(ran)) | np.isnan(got) & np.isnan(ran)
        bad = special & ~same
        assert not bad.any(), f"{op} at {level}: {[(*(a[i] for a in arrays), got[i], ran[i]) for i in np.flatnonzero(bad)[:5]]}"
        with np.errstate(all="ignore"):
            far = ~special & (np.abs(got - ran) > 2 * b.ulp * np.spacing(np.abs(ran)) + 2 * b.atol)
        assert not far.any(), f"{op} at {level}: {[(*(a[i] for a in arrays), got[i], ran[i]) for i in np.flatnonzero(far)[:5]]}"


@pytest.mark.parametrize("op", sorted(INTEGER_KERNELS))
def test_a_folded_integer_op_is_exactly_what_runs(op):
    """Integer limits, zero divisors, wrap-around: folded and run, the same integers."""
    fn = INTEGER_KERNELS[op]
    arrays = _operands([INT_LIMITS, INT_LIMITS])
    ran, folded = _folded_and_run(fn, arrays, [pt.lvector(f"x{i}") for i in range(2)])
    for level, got in folded.items():
        assert got.dtype == ran.dtype and np.array_equal(got, ran), f"{op} at {level}: {np.flatnonzero(got != ran)[:5]}"


#: the exact elementwise ops: comparisons, logic, tests, selection, casts (folded = run, bit for bit)
EXACT = {
    "Less": pt.lt, "Greater": pt.gt, "LessOrEqual": pt.le, "GreaterOrEqual": pt.ge, "Equal": pt.eq, "NotEqual": pt.neq,
    "And": lambda a, b: pt.and_(a > 0, b > 0), "Or": lambda a, b: pt.or_(a > 0, b > 0), "Xor": lambda a, b: pt.xor(a > 0, b > 0),
    "Not": lambda a, b: pt.invert(a > b), "IsNaN": lambda a, b: pt.isnan(a), "IsInf": lambda a, b: pt.isinf(b),
    "Where": lambda a, b: pt.switch(a < b, a, b), "Cast": lambda a, b: [pt.cast(a, "float32"), pt.cast(b, "int8")],
    "Identity": lambda a, b: pt.tensor_copy(a),
}


@pytest.mark.parametrize("op", sorted(EXACT))
def test_a_folded_exact_op_is_what_runs(op):
    arrays = _operands([SIGNED, SIGNED])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        variables = [pt.dvector("a"), pt.dvector("b")]
        outs = EXACT[op](*variables)
        outs = outs if isinstance(outs, list) else [outs]
        at_run_time = ptonnx.compile_function(variables, outs)
        anchor = pt.dvector("anchor")
        folded_outs = EXACT[op](*(pt.constant(a) for a in arrays))
        folded = ptonnx.compile_function([anchor], [*(folded_outs if isinstance(folded_outs, list) else [folded_outs]), anchor])
    assert len(folded.ir) == 0, folded.ir.op_counts()
    ran = run_at_every_level(at_run_time, *arrays)["ORT_ENABLE_ALL"]
    for level, (*got, _) in run_at_every_level(folded, np.zeros(1)).items():
        for g, r in zip(got, ran, strict=True):
            assert g.dtype == r.dtype and g.tobytes() == r.tobytes() or (np.array_equal(g, r, equal_nan=True) and r.dtype.kind == "f"
                                                                          and (np.signbit(g) == np.signbit(r))[~np.isnan(r)].all()), f"{op} at {level}"


def _ends(dtype: str) -> np.ndarray:
    """±0, ±subnormal, ±tiny, ±1e-9, ±0.5, ±20, ±36.7, ±88.7, ±709, ±745, ±1e300 (float32: its
    largest), ±inf and NaN: where sigmoid, tanh and log(sigmoid) underflow, saturate or overflow."""
    fi = np.finfo(dtype)
    magnitudes = [0.0, fi.smallest_subnormal, fi.smallest_normal, 1e-9, 0.5, 20.0, 36.7, 88.7, 709.0, 745.0,
                  1e300 if dtype == "float64" else fi.max, np.inf]
    return np.array([*magnitudes, *(-m for m in magnitudes), np.nan], dtype=dtype)


#: name -> (PyTensor function, op whose bound and reference apply, sign: the result is sign * op(sign * x))
LOGISTIC = {
    "sigmoid": (pt.sigmoid, "Sigmoid", 1), "tanh": (pt.tanh, "Tanh", 1),
    "log(sigmoid(x))": (lambda v: pt.log(pt.sigmoid(v)), "Softplus", -1),  # the graph a user builds
    "-softplus(-x)": (lambda v: -pt.softplus(-v), "Softplus", -1),  # what PyTensor's rewrites make of it
}


def _kernel_differs(fn, reference, t: np.ndarray) -> np.ndarray:
    """Where onnxruntime's kernel of `fn` and NumPy's `reference` give different bits for `t`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = pt.vector("t", dtype=t.dtype)
        (kernel,) = ptonnx.compile_function([v], [fn(v)])(t)
        with np.errstate(all="ignore"):
            return ~((kernel == reference(t)) | np.isnan(t))


def _kernels_differ(t: np.ndarray) -> np.ndarray:
    """Where onnxruntime's Exp kernel and NumPy's exp give different bits at either argument
    Sigmoid's composition takes, min(x, 0) and -|x| (float32 exp(-36.7): 1.1518400e-16 and
    1.1518401e-16). Sigmoid computes in its own dtype (float32 in float32: the CNN path's cost),
    so there folding and running may be an ulp apart for each; Tanh and Softplus compute in
    float64 and round once to float32, which hides the last bit of float64."""
    return _kernel_differs(pt.exp, np.exp, np.minimum(t, 0)) | _kernel_differs(pt.exp, np.exp, -np.abs(t))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(LOGISTIC))
def test_logistic_functions_fold_to_what_runs_at_the_ends(name, dtype):
    """A folded constant and the run-time result, at both onnxruntime levels: each within the op's
    bound of the exact result, and the same bits (-0.0 and +0.0 told apart; any NaN is NaN), but
    an ulp apart for each kernel that differs from NumPy's there (`_kernels_differ`)."""
    from references.accuracy_reference import reference, scored
    from ptonnx.accuracy import resolution

    fn, op, sign = LOGISTIC[name]
    x = _ends(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = pt.vector("x", dtype=dtype)
        at_run_time = ptonnx.compile_function([v], [fn(v)])
        anchor = pt.dvector("anchor")
        folded = ptonnx.compile_function([anchor], [fn(pt.constant(x)), anchor])
    assert len(folded.ir) == 0, folded.ir.op_counts()
    exact = sign * reference(op, dtype, sign * x)
    results = {f"run at {level}": got for level, (got,) in run_at_every_level(at_run_time, x).items()}
    results |= {f"folded at {level}": got for level, (got, _) in run_at_every_level(folded, np.zeros(1)).items()}
    b = bound(op, dtype)
    for where, got in results.items():
        assert got.dtype == dtype
        err = scored(op, dtype, got, exact, [x], b)
        over = np.flatnonzero(~(err <= b.ulp + resolution(op, dtype)))
        assert not over.size, f"{name} {where}: {[(x[i], got[i], exact[i], err[i]) for i in over]}"
    ran = results["run at ORT_ENABLE_ALL"]
    kernels_differ = _kernels_differ(x) if op == "Sigmoid" else np.zeros(x.shape, bool)
    unsigned = f"u{x.itemsize}"
    for where, got in results.items():
        same = (got.view(unsigned) == ran.view(unsigned)) | np.isnan(got) & np.isnan(ran)
        with np.errstate(all="ignore"):
            an_ulp_each = kernels_differ & (np.abs(got - ran) <= 2 * np.spacing(np.abs(ran)))
        differ = np.flatnonzero(~(same | an_ulp_each))
        assert not differ.size, f"{name} {where} vs run: {[(x[i], got[i], ran[i]) for i in differ]}"
