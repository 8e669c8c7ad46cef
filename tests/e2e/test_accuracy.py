"""Every float op ptonnx compiles meets its stated accuracy bound (`ptonnx.accuracy`)
against the exact result, on extreme values, at every onnxruntime level.

Hypothesis draws a few anchors (any float of the dtype: subnormals, ±0, ±inf,
NaN, the largest floats, or a threshold where an op changes regime) and a seed;
each example grows them into one batch of thousands of values: the anchors and
their neighbours, random bit patterns, log-uniform magnitudes over the whole
exponent range and over [1/16, 16), and every threshold (binary ops: such pairs and hard pairs). So
the `ci` profile's few examples cover ~10^5 values per op. float16 unary ops
are checked on every float16. The full sweep is `python -m audit.accuracy`.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import ptonnx
from references.accuracy_reference import (
    HAVE_FLOAT64_REFERENCE,
    ORDERED,
    arity,
    build,
    hard_inputs,
    hard_pairs,
    input_dtype,
    input_dtypes,
    reference,
    scored,
    step,
    thresholds,
)
from references.special_reference import POLYGAMMA_ORDERS
from ptonnx.accuracy import BY_OP, bound, resolution, table
from tests.conftest import run_at_every_level

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

BATCH = 2048

def _params(cases):
    for op, dtype in cases:
        if dtype == "float64" and not HAVE_FLOAT64_REFERENCE:
            raise RuntimeError("no 80-bit long double on this machine: no float64 reference")
        yield pytest.param(op, dtype, id=f"{op}-{dtype}")


#: the incomplete gamma functions' mpmath reference takes seconds a point at extreme pairs: they are
#: checked against SciPy (with mpmath where SciPy is wrong) in tests/e2e/test_special.py, and densely
#: by `python -m audit.accuracy --ops GammaInc,GammaIncC,GammaL,GammaU`; their inverses against
#: mpmath in tests/e2e/test_gammaincinv.py
SLOW_REFERENCE = frozenset({"GammaInc", "GammaIncC", "GammaL", "GammaU", "GammaIncInv", "GammaIncCInv"})
CASES = [(op, dtype) for op, dtype, _ in table()
         if not (op == "Cast" and dtype == "float64") and arity(op) <= 2 and op not in SLOW_REFERENCE]
EXHAUSTIVE = [(op, dtype) for op, dtype in CASES if input_dtype(op, dtype) == "float16" and arity(op) == 1]
SAMPLED = [(op, dtype) for op, dtype in CASES if (op, dtype) not in EXHAUSTIVE]


def test_every_float_op_has_a_bound():
    no_rounding = {"Identity", "Where", "And", "Or", "Xor", "Not"}  # selections, or no float kernel
    float_ops = {
        name for name, s in ptonnx.ir.all_schemas().items()
        if s.family in ("elementwise", "special") and s.output_vars[0] != "bool" and name not in no_rounding
    }
    assert float_ops - set(BY_OP) == set(), "state these ops' bounds in ptonnx/accuracy.py"
    assert set(BY_OP) - float_ops == set(), "ptonnx/accuracy.py states bounds of ops the registry lacks"


@functools.cache
def _compiled(op: str, dtype: str):
    import pytensor.tensor as pt

    variables = [pt.vector(f"x{i}", dtype=d) for i, d in enumerate(input_dtypes(op, dtype))]
    return ptonnx.compile_function(variables, [build(op, dtype, *variables)])


def _check(op: str, dtype: str, arrays: list[np.ndarray]) -> None:
    """Every value within the bound at every onnxruntime level; else the worst five, printed."""
    b = bound(op, dtype)
    exact = reference(op, dtype, *arrays)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        results = run_at_every_level(_compiled(op, dtype), *arrays)
    for level, (got,) in results.items():
        assert got.dtype == dtype, f"{op} at {level}: {got.dtype}, not {dtype}"
        err = scored(op, dtype, got, exact, arrays, b)
        over = np.flatnonzero(err > b.ulp + resolution(op, dtype))
        if over.size:
            worst = over[np.argsort(-err[over], kind="stable")][:5]
            lines = [
                f"  {', '.join(repr(a[i]) for a in arrays)} -> {got[i]!r}, exact {exact[i]!r}: {err[i]:.3g} ulp"
                for i in worst
            ]
            pytest.fail(f"{op} {dtype} at {level}: {over.size} of {err.size} values over {b.ulp} ulp\n" + "\n".join(lines))


def _any_float(dtype: str):
    return st.floats(width=np.dtype(dtype).itemsize * 8, allow_nan=True, allow_infinity=True, allow_subnormal=True)


@st.composite
def extreme_batch(draw, dtype: str, n: int = BATCH):
    """About `n` values of `dtype`, grown from drawn anchors and a seed."""
    points = thresholds(dtype)
    anchors = np.array(
        draw(st.lists(st.one_of(_any_float(dtype), st.sampled_from(points.tolist())), min_size=1, max_size=8)),
        dtype=dtype,
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    fi = np.finfo(dtype)
    near = step(np.repeat(anchors, 17), np.tile(np.arange(-8, 9), anchors.size))
    itype = {2: np.uint16, 4: np.uint32, 8: np.uint64}[fi.dtype.itemsize]
    bits = rng.integers(0, np.iinfo(itype).max, n // 4, dtype=itype, endpoint=True).view(dtype)
    m = max(n - bits.size - near.size - points.size, 2) // 2
    with np.errstate(over="ignore"):
        # log-uniform over the whole range, and over [1/16, 16), where most results are O(1)
        exponents = np.concatenate([rng.integers(fi.minexp - fi.nmant, fi.maxexp, m), rng.integers(-4, 4, m)])
        spread = np.ldexp(rng.uniform(1, 2, exponents.size), exponents) * rng.choice([-1, 1], exponents.size)
    return np.concatenate([anchors, near, bits, spread.astype(dtype), points])


@st.composite
def extreme_values(draw, op: str, dtype: str, n: int = BATCH):
    """One operand: an extreme batch and the op's hard inputs (for Cast: near-ties)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return [np.concatenate([draw(extreme_batch(input_dtype(op, dtype), n)), *hard_inputs(op, dtype, rng, n // 4)])]


@st.composite
def extreme_pairs(draw, op: str, dtype: str, n: int = BATCH):
    """Two arrays: extreme values paired at random, with themselves (cancellation) and hard pairs."""
    a, b = draw(extreme_batch(dtype, n)), draw(extreme_batch(dtype, n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    size = min(a.size, b.size)
    a, b = a[:size], b[:size]
    ha, hb = hard_pairs(op, dtype, rng, size // 2)
    return [np.concatenate([a, a, ha]), np.concatenate([b, rng.permutation(a), hb])]


#: the Bessel functions: mpmath references (1-15 ms a value), so smaller batches, in every dtype
BESSEL = frozenset({"I0", "I1", "J0", "J1"}) | ORDERED
BESSEL_BATCH = {"float16": 384, "float32": 384, "float64": 192}


@st.composite
def order_pairs(draw, op: str, dtype: str, n: int):
    """(order, x): orders of the op's stated domain (audit/bessel_reference.orders, and a few NaN,
    ±inf, 0, ±1, 1/2, 25) with extreme arguments, and pairs where the lowerings' regions meet."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.permutation(draw(extreme_batch(dtype, n)))[:n]
    v, _ = hard_pairs(op, dtype, rng, x.size)
    edges = {"Jv": [np.nan, 0.0, -0.0, 1.0, -1.0, 100.0, -100.0], "Ive": [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.0, -1.0, 25.0, 25.5],
             "Iv": [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.0, -1.0, 25.0, 25.5],
             "Kve": [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.0, 25.0, -25.5]}[op]
    v = np.where(rng.random(x.size) < 0.1, rng.choice(np.array(edges, dtype=dtype), x.size), v)
    hv, hx = hard_pairs(op, dtype, rng, n // 2)
    return [np.concatenate([v, hv]), np.concatenate([x, hx])]


#: PolyGamma's reference is mpmath's psi (at 100 bits and more where the reflection cancels):
#: smaller batches; so is OwensT's exp and erfc for every pair: both take few batches in every dtype
POLYGAMMA_BATCH = {"float16": 256, "float32": 256, "float64": 256}


@st.composite
def polygamma_pairs(draw, dtype: str, n: int):
    """(order, x): orders of the stated domain (0..170) with extreme x, and hard pairs."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.permutation(draw(extreme_batch(dtype, n)))[:n]
    order = rng.choice(POLYGAMMA_ORDERS, x.size)
    ho, hx = hard_pairs("PolyGamma", dtype, rng, n)
    return [np.concatenate([order, ho]), np.concatenate([x, hx])]


@pytest.mark.parametrize(("op", "dtype"), list(_params(SAMPLED)))
def test_meets_its_bound_on_extreme_values(op, dtype):
    if op == "PolyGamma":
        strategy = polygamma_pairs(dtype, POLYGAMMA_BATCH[dtype])
    elif op in BESSEL:
        n = BESSEL_BATCH[dtype]
        strategy = order_pairs(op, dtype, n) if op in ORDERED else extreme_values(op, dtype, n)
    else:
        strategy = extreme_values(op, dtype) if arity(op) == 1 else extreme_pairs(op, dtype)

    # no shrinking: a failure already prints its five worst values; the special functions'
    # float64 reference is mpmath (slow): fewer batches (the audit sweeps densely)
    special = ptonnx.ir.get_schema(op).family == "special" and (dtype == "float64" or op in BESSEL | {"PolyGamma", "OwensT"})
    examples = {"max_examples": min(4, settings().max_examples)} if special else {}

    @settings(phases=(Phase.explicit, Phase.generate), report_multiple_bugs=False, **examples)
    @given(strategy)
    def check(arrays):
        _check(op, dtype, arrays)

    check()


@pytest.mark.parametrize(("op", "dtype"), list(_params(EXHAUSTIVE)))
def test_meets_its_bound_on_every_float16(op, dtype):
    _check(op, dtype, [np.arange(1 << 16, dtype=np.uint16).view(np.float16)])


def test_docs_state_the_current_bounds():
    """The bounds table in `docs/numerics.md` is `ptonnx.accuracy.markdown()`, regenerated when a bound changes."""
    from pathlib import Path

    from ptonnx.accuracy import markdown

    numerics = (Path(__file__).parents[2] / "docs" / "numerics.md").read_text(encoding="utf-8")
    assert markdown() in numerics, "docs/numerics.md's accuracy table is stale: paste ptonnx.accuracy.markdown() over it"
