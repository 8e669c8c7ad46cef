"""The IREE runtime (`ptonnx.compile(..., runtime="iree")`, `pip install ptonnx[iree]`): the same
models as onnxruntime, PyTensor's numbers within IREE's stated accuracy, failed checks raising
as they do on onnxruntime, and what IREE cannot compile refused by name.

IREE's stated accuracy (docs/iree.md): special values (NaN, ±inf, ±0 with its
sign) as PyTensor gives them; elsewhere within `RTOL` of PyTensor's number (IREE's own exp,
log and pow are a few ulp off where onnxruntime's are within 1); subnormal numbers are read
and written as zero (its CPU runtime runs with flush-to-zero), which
`test_iree_flushes_subnormal_numbers_to_zero` pins down.
"""

from __future__ import annotations

import os

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx import iree_runtime
from ptonnx.errors import CheckFailedError, SignatureError
from ptonnx.iree_runtime import IreeCompileError
from tests.conftest import REFERENCE_MODE

if not iree_runtime.available():
    if os.environ.get("CI"):  # CI installs ptonnx[iree]: its absence there is a failure, not a skip
        pytest.fail("CI runs the IREE tests: install ptonnx[iree]", pytrace=False)
    pytest.skip("IREE is not installed (pip install 'ptonnx[iree]')", allow_module_level=True)

pytestmark = pytest.mark.one_environment  # IREE's kernels and ptonnx's files, not the PyTensor line

RTOL = 1e-13
#: the ends of the range in the normal numbers (subnormals: test_iree_flushes_subnormal_numbers_to_zero)
HARD = np.array([-np.inf, -1e308, -745.0, -30.0, -2.5, -1.0, -1e-300, -0.0, 0.0, 1e-300, 2.2250738585072014e-308, 0.5, 1.0,
                 3.0, 30.0, 700.0, 1e308, np.inf, np.nan])


def _compare(got, expected, context: str) -> None:
    for a, e in zip(got, expected, strict=True):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape, f"{context}: {a.dtype}{a.shape} vs {e.dtype}{e.shape}"
        if e.dtype.kind != "f":
            np.testing.assert_array_equal(a, e, err_msg=context)
            continue
        special = ~np.isfinite(e) | (e == 0)
        same = (a == e) & (np.signbit(a) == np.signbit(e)) | np.isnan(a) & np.isnan(e)
        assert same[special].all(), f"{context}: special values {a[special & ~same]} vs {e[special & ~same]}"
        np.testing.assert_allclose(a[~special], e[~special], rtol=RTOL, atol=0, err_msg=context)


def _check(inputs, outputs, *value_lists):
    """IREE's numbers against PyTensor's (and the outcome of onnxruntime's model alike)."""
    reference = pytensor.function(inputs, outputs, mode=REFERENCE_MODE)
    cm = ptonnx.compile_function(inputs, outputs, runtime="iree")
    assert cm.runtime == "iree" and cm.report.stages["iree"] > 0
    for k, values in enumerate(value_lists):
        expected = reference(*values)
        _compare(cm(*values), expected, f"IREE, input list {k}")
        _compare(cm.with_session_options(None)(*values), expected, f"IREE after with_session_options, input list {k}")
    return cm


def test_elementwise():
    x = pt.dvector("x")
    outputs = [pt.exp(-0.5 * x**2) * 2 + x, pt.log1p(pt.abs(x)), pt.sigmoid(x), pt.switch(x > 1.0, pt.sqrt(x), -x), pt.tanh(x)]
    _check([x], outputs, [HARD], [np.zeros(0)], [np.linspace(-40, 40, 1001)])


def test_inputs_and_outputs_packed_into_one_buffer_per_dtype():
    """The IREE form's signature (`lowering/iree_signature.py`): static values of one dtype in one
    buffer, the rest as they are; the user's arrays in, the user's arrays out (subnormal inputs
    aside: IREE flushes them)."""
    from tests.lowering.test_iree_form import _signature_program

    inputs, outputs, arrays = _signature_program()
    arrays[1] = np.asarray(2.5e-300)
    _check(inputs, outputs, arrays, [np.asarray(1.0), np.asarray(-np.inf), np.ones((2, 3)), np.zeros(0), np.zeros(0),
                                     np.asarray(-1), np.asarray(np.iinfo(np.int64).min), np.asarray(False)])


def test_a_log_density_with_special_functions_and_its_gradient():
    """A negative binomial log-likelihood (what PyMC's NegativeBinomial computes) and its
    gradient: gammaln and, in the gradient, psi of a free dispersion."""
    y = pt.dvector("y")
    log_alpha, log_mu = pt.dscalar("log_alpha"), pt.dscalar("log_mu")
    alpha, mu = pt.exp(log_alpha), pt.exp(log_mu)
    logp = (pt.gammaln(y + alpha) - pt.gammaln(alpha) - pt.gammaln(y + 1)
            + alpha * pt.log(alpha / (alpha + mu)) + y * pt.log(mu / (alpha + mu))).sum()
    outputs = [logp, *pytensor.grad(logp, [log_alpha, log_mu])]
    counts = np.random.default_rng(0).negative_binomial(3, 0.4, size=500).astype("float64")
    _check([y, log_alpha, log_mu], outputs, [counts, np.float64(0.3), np.float64(1.2)], [counts[:1], np.float64(-20.0), np.float64(30.0)],
           [counts, np.float64(np.nan), np.float64(0.0)])


def test_reductions_and_indexing_with_unknown_dims():
    m, idx, i = pt.dmatrix("m"), pt.lvector("idx"), pt.lscalar("i")
    outputs = [m.sum(axis=0), m.max(axis=1), pt.argmax(m, axis=1), pt.cumsum(m, axis=1), m[:, idx], m[i], m[1:, ::-1] * 2,
               pt.set_subtensor(m[:, 0], -1.0)]
    rng = np.random.default_rng(1)
    _check([m, idx, i], outputs, [rng.normal(size=(3, 4)), np.array([0, 3, -1]), np.int64(-1)],
           [rng.normal(size=(6, 2)), np.array([1, 1]), np.int64(5)])


def test_a_failed_check_raises_as_on_onnxruntime():
    """An index out of range: onnxruntime stops on the check's Gather; IREE's Gather reads
    out of bounds (far out, it crashed the process), so the IREE model outputs each check's
    flag and zeros what the check guards where it failed (ptonnx.iree_runtime.for_iree)."""
    x, i = pt.dvector("x"), pt.lscalar("i")
    cm = ptonnx.compile_function([x, i], [x[i] * 2], runtime="iree")
    np.testing.assert_array_equal(cm(np.arange(5.0), np.int64(-5))[0], 0.0)
    for runner in (cm, cm.with_session_options(None)):
        for index in (5, -6, 10**9, -(10**12), np.iinfo(np.int64).max, np.iinfo(np.int64).min):
            with pytest.raises(CheckFailedError, match="index out of bounds") as info:
                runner(np.arange(5.0), np.int64(index))
            assert isinstance(info.value, IndexError)
    on_onnxruntime = ptonnx.compile_function([x, i], [x[i] * 2])
    with pytest.raises(CheckFailedError, match="index out of bounds"):
        on_onnxruntime(np.arange(5.0), np.int64(5))


def test_an_assert_raises_its_message():
    from pytensor.raise_op import Assert

    x = pt.dvector("x")
    cm = ptonnx.compile_function([x], [Assert("x must be positive")(x, pt.all(x > 0)) * 2], runtime="iree")
    np.testing.assert_array_equal(cm(np.array([1.0, 2.0]))[0], [2.0, 4.0])
    with pytest.raises(CheckFailedError, match="x must be positive") as info:
        cm(np.array([1.0, -2.0]))
    assert isinstance(info.value, AssertionError)


def test_max_min_and_sign_keep_nans():
    """IREE's own Max, Min and Sign drop a NaN (max(nan, -inf) = -inf, sign(nan) = 0): the
    model IREE compiles guards them."""
    x, y = pt.dvector("x"), pt.dvector("y")
    values = [np.array([np.nan, 1.0, -np.inf, 2.0, -0.0, np.nan]), np.array([-np.inf, np.nan, np.nan, 1.0, 0.0, np.nan])]
    _check([x, y], [pt.maximum(x, y), pt.minimum(x, y), pt.sign(x), pt.clip(x, -1.0, 1.0), x.max(), y.min()], values)


def test_scatters_of_constants():
    """IREE computes a scatter of a constant index and value into data of known length
    wrongly (set_subtensor(x[2], 5.0) gave 1e-323): the IREE model selects from constants
    instead; the untouched elements keep their signed zeros."""
    x = pt.tensor("x", dtype="float64", shape=(6,))
    outputs = [pt.set_subtensor(x[2], 5.0), pt.inc_subtensor(x[-1], 1.5), pt.set_subtensor(x[[0, 4]], np.array([7.0, np.nan])),
               pt.inc_subtensor(x[1:3], np.array([-0.0, 2.0]))]
    _check([x], outputs, [np.array([-0.0, 1.0, np.inf, -np.inf, np.nan, 0.0])], [np.arange(6.0)])


def test_a_float_sort_of_static_size_runs_and_one_of_run_time_size_is_refused():
    """ptonnx's float sorts give TopK no NaN (two stable passes), so IREE puts NaN last as NumPy
    does; a float TopK of run-time size is refused (iree-compile 3.13 cannot compile it)."""
    x = pt.tensor("x", dtype="float64", shape=(2, 10))
    rows = np.array([[3.0, -0.0, np.inf, 1.0, np.nan, 1.0, 0.0, np.nan, -np.inf, 1.0],
                     [np.nan, 2.0, -1.0, 0.0, 2.0, 2.0, np.inf, np.inf, np.nan, 5e-324]])
    _check([x], [pt.sort(x, axis=1), pt.argsort(x, axis=1), pt.sort(x, axis=0), pt.argsort(x, axis=0)], [rows])
    v = pt.dvector("v")
    with pytest.raises(IreeCompileError, match="sorts floats at sizes known only at run time"):
        ptonnx.compile_function([v], [pt.sort(v)], runtime="iree")
    i = pt.lvector("i")
    _check([i], [pt.sort(i), pt.argsort(i)], [np.array([3, -1, np.iinfo(np.int64).min, 7, 0])])


def test_iree_flushes_subnormal_numbers_to_zero():
    """IREE's CPU runtime reads and writes subnormals as zero, where onnxruntime and PyTensor
    keep them: the one place its numbers leave PyTensor's (docs/iree.md)."""
    x = pt.dvector("x")
    cm = ptonnx.compile_function([x], [pt.exp(x), pt.sqrt(x)], runtime="iree")
    values = np.array([-740.0, 5e-324])
    (exp, sqrt) = cm(values)
    assert exp[0] == 0.0 and np.exp(-740.0) > 0
    assert sqrt[1] == 0.0 and np.sqrt(5e-324) > 0


def test_what_iree_cannot_compile_is_refused_by_name():
    """An op IREE cannot compile (`iree_runtime.UNSUPPORTED`) is refused before iree-compile runs,
    with the reason and what to do; onnxruntime compiles the model. A product over static sizes
    is a tree of Muls for IREE (`lowering/reduction.py`)."""
    x = pt.dvector("x")
    with pytest.raises(IreeCompileError, match=r"the model has ReduceProd \(ONNX\): iree-compile.*runtime='onnxruntime'"):
        ptonnx.compile_function([x], [pt.prod(x)], runtime="iree")
    ptonnx.compile_function([x], [pt.prod(x)])
    m = pt.tensor("m", shape=(None, 3), dtype="float64")
    _check([m], [pt.prod(m, axis=1), pt.prod(m[:, :2], axis=1)],
           [np.array([[2.0, -0.0, 3.0], [np.inf, 1e300, 1e10], [np.nan, 1.0, 2.0], [0.5, 0.25, -8.0]])])


def test_a_per_trip_value_sized_only_inside_its_body_is_refused():
    """IREE's Loop form writes per-trip values into a buffer allocated before the Loop: a size
    the IR knows neither statically nor from an outer value is refused by name (docs/iree.md)."""
    y0, e = pt.dvector("y0"), pt.dmatrix("e")
    ys = pytensor.scan(lambda et, y: 0.5 * y + et, sequences=[e], outputs_info=[y0], return_updates=False)
    with pytest.raises(IreeCompileError, match="per-trip value whose sizes are known only inside its body"):
        ptonnx.compile_function([y0, e], [ys], runtime="iree")


def test_scans_run_on_iree():
    """A Loop for IREE has no per-trip outputs: each per-trip value is written into a buffer
    carried through the Loop (`lowering/loop_buffers.py`); a scan of no trip gives (0, 3)."""
    y0, e = pt.tensor("y0", shape=(3,), dtype="float64"), pt.tensor("e", shape=(None, 3), dtype="float64")
    ys = pytensor.scan(lambda et, y: 0.5 * y + et, sequences=[e], outputs_info=[y0], return_updates=False)
    noise = np.random.default_rng(1).normal(size=(7, 3))
    noise[2] = [np.inf, -0.0, np.nan]
    start = np.array([1.0, -2.0, 5e-300])
    _check([y0, e], [ys, ys.sum()], [start, noise], [start, noise[:1]], [start, noise[:0]])


def test_a_check_inside_a_loop_body_raises_on_iree():
    """A check inside a Loop body is carried out of the Loop as a failure flag, and the call
    raises the exception onnxruntime's path raises (IREE's Gather does not bound its index)."""
    x = pt.tensor("x", shape=(4,), dtype="float64")
    i = pt.lscalar("i")
    indexed = pytensor.scan(lambda k, v: v[k] * 2.0, sequences=[pt.arange(3) + i], non_sequences=[x], return_updates=False)
    cm = ptonnx.compile_function([x, i], [indexed], runtime="iree")
    ref = ptonnx.compile_function([x, i], [indexed])
    values = np.array([1.0, -0.0, np.inf, 3.0])
    for start in (0, 1, -4):
        np.testing.assert_array_equal(cm(values, np.asarray(start))[0], ref(values, np.asarray(start))[0])
    for start in (2, -5, np.iinfo(np.int64).max - 1):
        with pytest.raises(IndexError) as on_iree:
            cm(values, np.asarray(start))
        with pytest.raises(IndexError) as on_ort:
            ref(values, np.asarray(start))
        assert str(on_iree.value) == str(on_ort.value)


def test_an_unknown_runtime_is_refused():
    x = pt.dvector("x")
    with pytest.raises(SignatureError, match="runtime='tvm': choose one of 'onnxruntime', 'iree'"):
        ptonnx.compile_function([x], [x + 1], runtime="tvm")


def test_draws_on_iree_are_onnxruntimes():
    """Draws from a key: IREE has no uint32 tensors, so its copy of the model carries the
    generator's words in int64 (`passes/carry_dtypes.py`): the integers and bernoulli draws are
    onnxruntime's bit for bit; the uniform's low + (high - low) u within RTOL (IREE fuses the
    multiply-add, which ONNX rounds twice). A normal draw, or a next-key output, makes
    iree-compile 3.13 exhaust its memory bound: docs/iree.md."""
    from ptonnx.keys import key

    rng = pt.random.type.RandomGeneratorType()("rng")
    n = pt.lscalar("n")
    p = pt.dvector("p")
    outputs = [pt.random.uniform(-2.0, 3.0, size=(n,), rng=rng), pt.random.integers(-5, 2**40, size=(n,), rng=rng),
               pt.random.bernoulli(p, rng=rng)]
    iree = ptonnx.compile_function([rng, n, p], outputs, runtime="iree")
    ours = ptonnx.compile_function([rng, n, p], outputs)
    for k, size in ((key(1), 1000), (key(2**64 - 1), 3), (key([0, 0]), 0)):
        probabilities = np.linspace(0.0, 1.0, size)
        got, want = iree(k, np.int64(size), probabilities), ours(k, np.int64(size), probabilities)
        _compare(got[:1], want[:1], f"uniform draws, key {k}")
        for a, b in zip(got[1:], want[1:], strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)
