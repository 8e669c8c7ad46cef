"""Loop vectorisation (`passes/vectorise_loops.py`): per-trip values computed from the
sequences alone leave the Loop as the same ops over whole arrays, running sums as CumSum in
the loop's order; recurrences stay. Every case holds the numbers to PyTensor's at both
onnxruntime levels, at the ends of the range, and the running sums bit for bit to the Loop's."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.raise_op import Assert

import ptonnx
from ptonnx.errors import CheckFailedError
from ptonnx.testing import assert_matches_pytensor

WITHOUT = [p for p in ptonnx.DEFAULT_PASSES if p != "vectorise_loops"]
HARD = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, -1e-310, 1e308, -1e308, 1e-300, 2.5, -3.0])


def _loops(cm) -> int:
    return cm.ir.op_counts().get("Loop", 0)


def _scan(step, sequences, outputs_info, non_sequences=(), n_steps=None):
    return pytensor.scan(step, sequences=sequences, outputs_info=outputs_info, non_sequences=list(non_sequences),
                         n_steps=n_steps, return_updates=False)


def _terms_and_sums(exact: bool = False):
    """A scan of elementwise terms of a scalar and a vector sequence with invariants (a scalar
    and a vector), the terms' running sums carried (a scalar and a vector): a scan gradient's form.
    `exact` keeps to the correctly rounded +, -, *, / (onnxruntime's exp and sqrt of one element
    and of an array may differ in the last bit)."""
    a = pt.tensor("a", shape=(12,), dtype="float64")
    v = pt.tensor("v", shape=(12, 3), dtype="float64")
    s, w = pt.dscalar("s"), pt.tensor("w", shape=(3,), dtype="float64")

    def step(a_t, v_t, total, vector_total, s_, w_):
        term = (a_t * a_t if exact else pt.exp(a_t)) * s_ - a_t / (s_ + 1.0)
        vector_term = v_t * a_t + w_ * (v_t * v_t if exact else pt.sqrt(pt.abs(v_t)))
        return total + term, vector_total + vector_term, term, vector_term

    outputs = _scan(step, [a, v], [pt.constant(0.0, dtype="float64"), pt.zeros(3), None, None], [s, w])
    return [a, v, s, w], outputs


def _hard_arrays(rng):
    a = np.concatenate([HARD, [0.5]])[:12]
    v = rng.normal(size=(12, 3))
    v[2] = [np.inf, -0.0, np.nan]
    v[5] = [5e-324, 1e150, -1e150]  # squared in the exact variant: 1e300, no overflow to reassociate
    return [a, v, np.asarray(0.75), np.array([1.0, -2.0, 1e-300])]


@pytest.mark.parametrize("point", range(3))
def test_terms_and_running_sums_leave_the_loop(point):
    inputs, outputs = _terms_and_sums()
    rng = np.random.default_rng(point)
    arrays = _hard_arrays(rng) if point == 0 else [rng.normal(scale=[1, 30][point - 1], size=(12,)), rng.normal(size=(12, 3)),
                                                  np.asarray(rng.normal()), rng.normal(size=3)]
    cm = assert_matches_pytensor(inputs, outputs, arrays)
    assert _loops(cm) == 0 and cm.ir.op_counts()["CumSum"] == 2
    inputs, outputs = _terms_and_sums(exact=True)
    cm = assert_matches_pytensor(inputs, outputs, arrays)
    looped = ptonnx.compile_function(inputs, outputs, WITHOUT)
    assert _loops(cm) == 0 and _loops(looped) == 1
    for got, loop in zip(cm(*arrays), looped(*arrays), strict=True):  # the loop's sums, in the loop's order
        np.testing.assert_array_equal(got, loop)


def test_a_recurrence_stays_in_the_loop_and_its_terms_leave():
    e, y0 = pt.tensor("e", shape=(9,), dtype="float64"), pt.dscalar("y0")
    ys, squares = _scan(lambda e_t, y: (0.5 * y + e_t, e_t * e_t), [e], [y0, None])
    arrays = [np.concatenate([HARD[:8], [1.0]]), np.asarray(-2.0)]
    cm = assert_matches_pytensor([e, y0], [ys, squares, ys.sum()], arrays)
    (loop,) = [node for node in cm.ir if node.op == "Loop"]
    assert loop.attrs["n_scan"] == 1, "the squares left the loop; the recurrence stayed"


def test_a_running_sum_a_recurrence_reads_stays():
    x = pt.tensor("x", shape=(7,), dtype="float64")

    def step(x_t, total, y):
        total = total + x_t
        return total, 0.9 * y + total

    totals, ys = _scan(step, [x], [pt.constant(0.0, dtype="float64"), pt.constant(1.0, dtype="float64")])
    arrays = [np.array([1.0, -0.0, 1e308, 1e308, -np.inf, 2.0, 3.0])]
    cm = assert_matches_pytensor([x], [totals, ys], arrays)
    (loop,) = [node for node in cm.ir if node.op == "Loop"]
    assert loop.attrs["n_carried"] == 2


def test_a_check_of_an_invariant_leaves_the_loop_and_still_fails():
    x, sigma = pt.tensor("x", shape=(5,), dtype="float64"), pt.dscalar("sigma")
    terms = _scan(lambda x_t, s: Assert("sigma > 0")(x_t / s, pt.gt(s, 0.0)), [x], [None], [sigma])
    cm = assert_matches_pytensor([x, sigma], [terms], [np.array([1.0, np.nan, -0.0, 1e-310, np.inf]), np.asarray(2.0)])
    assert _loops(cm) == 0
    with pytest.raises(AssertionError, match="sigma > 0") as caught:
        cm(np.ones(5), np.asarray(-1.0))
    assert isinstance(caught.value, CheckFailedError)


@pytest.mark.parametrize("passes", [None, ["unify_dtypes", "vectorise_loops"]])
def test_loops_of_no_trip_or_a_run_time_count_stay(passes):
    x = pt.tensor("x", shape=(None,), dtype="float64")
    doubled = _scan(lambda x_t: 2.0 * x_t, [x], [None])
    for arrays in ([np.array([1.0, -0.0, np.inf])], [np.zeros(0)]):
        cm = assert_matches_pytensor([x], [doubled], arrays, passes)
        assert _loops(cm) == 1
    y = pt.tensor("y", shape=(4,), dtype="float64")
    none = _scan(lambda y_t: 2.0 * y_t, [y], [None], n_steps=0)
    cm = assert_matches_pytensor([y], [none], [np.ones(4)], passes)


def test_without_hoisting_what_reads_outside_values_leaves_and_the_rest_stays():
    """Without hoist_loop_invariants, the scalar term's `s + 1` is computed in the body, so the
    scalar term and its sum stay; the vector term reads only sequences and `w`, and leaves."""
    inputs, outputs = _terms_and_sums()
    arrays = _hard_arrays(np.random.default_rng(5))
    cm = assert_matches_pytensor(inputs, outputs, arrays, ["constant_folding", "unify_dtypes", "vectorise_loops"])
    (loop,) = [node for node in cm.ir if node.op == "Loop"]
    assert (loop.attrs["n_carried"], loop.attrs["n_scan"]) == (1, 2)  # the scalar sum, its running values and terms
