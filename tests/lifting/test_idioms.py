"""lifting/idioms.py: compositions PyTensor builds of a function the IR has as one op, recognised at
the end of lifting. PyTensor 3 builds iv(v, x) as ive(v, x) * exp(|x|): it becomes Iv(v, x), the op
pytensor 2.38's Iv lifts to, so both PyTensors give SciPy's iv (finite where the product overflows)."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import scipy.special

import ptonnx
from ptonnx import ir
from ptonnx.testing import assert_matches, assert_same
from tests.lifting.helpers import check_lift, lifted, ops

ORDERS = np.array([0.0, 0.5, 1.0, 2.5, 23.0])
ARGS = np.array([0.0, -0.0, 1e-300, 1.0, -2.5, 30.0, 700.0, -700.0, np.inf, np.nan])
NAN = np.nan


def test_iv_is_one_op():
    v, x = pt.dvector("v"), pt.dvector("x")
    vv, xx = pt.tensor("v", shape=(None, 1)), pt.tensor("x", shape=(1, None))
    g = check_lift([vv, xx], [pt.iv(vv, xx)], [ORDERS[:, None], ARGS[None]])
    assert ops(g)[-1] == "Iv" and "Ive" not in ops(g) and "Exp" not in ops(g)
    g = check_lift([v, x], [pt.iv(v, x)], [ORDERS, ARGS[:5]])
    assert "Iv" in ops(g)


def test_iv_where_pytensor_3s_product_overflows_is_scipys():
    """PyTensor 3's ive * exp(|x|) is inf from |x| = 709.78 on; I_23(713.5) is 7.7e307."""
    v, x = pt.dscalar("v"), pt.dvector("x")
    g = lifted([v, x], [pt.iv(v, x)])
    args = np.array([713.5, -713.5, 709.9])
    [got] = ir.interpret(g, np.float64(23.0), args)
    assert_same(got, scipy.special.iv(23.0, args))
    assert np.isfinite(got).all()


def test_iv_of_subnormals_is_its_series_first_term():
    """iv(v, x) of a tiny x is (x/2)**v / Gamma(v + 1) (mpmath): SciPy's iv is NaN at subnormals (the IR's
    Iv semantics is that term there), PyTensor 3's ive * exp gives 0 for 1.77e-162 (v = 0.5, x = 5e-324),
    pytensor 2.38's Iv is SciPy's NaN; interpret and the model at both onnxruntime levels give the term."""
    v, x = pt.dvector("v"), pt.dvector("x")
    orders = np.array([0.0, 0.5, -0.5, 1.0, 1.0, -1.0, 2.5, 0.5, 0.3, 1e3])
    args = np.array([5e-324, 5e-324, 5e-324, 2.2e-308, -2.2e-308, -5e-324, 5e-324, 2.2e-308, -5e-324, 1e-160])
    exact = np.array([1.0, 1.7735048886036273e-162, 3.5896138570490507e+161, 1.1000000000000001e-308,
                      -1.1000000000000001e-308, -0.0, 0.0, 1.1834540545406396e-154, NAN, 0.0])  # mpmath; v = 0.3, x < 0: complex
    g = lifted([v, x], [pt.iv(v, x)])
    assert_same(ir.interpret(g, orders, args)[0], exact)
    assert_matches(ptonnx.compile_function([v, x], [pt.iv(v, x)]), [orders, args], [exact])


def test_ive_times_exp_of_another_value_is_left_alone():
    v, x, y = pt.dvector("v"), pt.dvector("x"), pt.dvector("y")
    g = check_lift([v, x, y], [pt.ive(v, x) * pt.exp(pt.abs(y))], [ORDERS, ARGS[:5], ARGS[5:]])
    assert {"Ive", "Exp", "Abs"} <= set(ops(g)) and "Iv" not in ops(g)


def test_log_of_sigmoid_is_minus_softplus_of_minus_x():
    """log(sigmoid(x)) as PyTensor's rewrites make it, -softplus(-x): -745 at x = -745 (the log of
    sigmoid's 5e-324 was -744.44; float32 gave -inf from x = -104 on)."""
    import pytensor

    from tests.lifting.helpers import no_c_compiler, rewriting_reference

    args = np.array([-745.0, -1e300, -104.0, -40.0, -0.0, 0.0, 40.0, 745.0, np.inf, -np.inf, np.nan])
    for dtype in ("float64", "float32"):
        x = pt.vector("x", dtype=dtype)
        g = lifted([x], [pt.log(pt.sigmoid(x))])
        assert ops(g) == ["Neg", "Softplus", "Neg"]
        values = args.astype(dtype)
        [got] = ir.interpret(g, values)
        with no_c_compiler():
            expected = pytensor.function([x], pt.log(pt.sigmoid(x)), mode=rewriting_reference())(values)
        assert_same(got, expected)
        assert got[0] == -745.0 and got[2] == -104.0


def test_a_sigmoid_with_another_user_stays():
    x = pt.dvector("x")
    s = pt.sigmoid(x)
    g = lifted([x], [pt.log(s), s])
    assert sorted(ops(g)) == ["Neg", "Neg", "Sigmoid", "Softplus"]
