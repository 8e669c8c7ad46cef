"""Sin, Cos and Tan (`ptonnx/decompositions/elementary/trigonometric.py`): the float64 decomposition
(Cody-Waite reduction, then onnxruntime's Sin on the reduced argument; Tan by Cephes' rational)
interpreted and run by onnxruntime on hard values, within the stated bounds (`ptonnx.accuracy`) of
the exact result; onnxruntime's Sin seeing only reduced arguments below 2**20; a folded constant
the number the model computes; float16 and float32 as before (onnxruntime's Sin and Cos, Tan in
float64)."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.accuracy import bound, resolution
from ptonnx.decompositions.elementary.trigonometric import REDUCE_BELOW, REDUCED_REACH, SIN_IS_X_BELOW
from ptonnx.ir import Builder, Graph, TensorType, interpret
from ptonnx.passes.decompose import decompose
from references.accuracy_reference import HAVE_FLOAT64_REFERENCE, reference, scored
from tests.conftest import ORT_LEVELS, check_like_pytensor, run_at_every_level, session_options

pytestmark = pytest.mark.one_environment  # ptonnx's formulas and onnxruntime, not the PyTensor line

OPS = {"Sin": pt.sin, "Cos": pt.cos, "Tan": pt.tan}


def _hard() -> np.ndarray:
    """±0, subnormals, the sin(x) = x threshold, the floats nearest multiples of pi/2 (the zeros of
    sin and cos, the poles and zeros of tan) and their neighbours up to 2**20 and beyond, 2**20 both
    sides, the hardest reduction case, the largest floats, ±inf and NaN."""
    k = np.concatenate([np.arange(-64, 65), [1000, 12345, 2**19 + 1, 667543, 667544, 667545, 2**21 + 3, 2**30 + 1]])
    near = k * (np.pi / 2)
    near = np.concatenate([near, np.nextafter(near, np.inf), np.nextafter(near, -np.inf), [1e5 * np.pi]])
    edge = [REDUCE_BELOW, np.nextafter(REDUCE_BELOW, 0), np.nextafter(REDUCE_BELOW, np.inf), REDUCE_BELOW + 0.5,
            REDUCE_BELOW - 0.5, SIN_IS_X_BELOW, np.nextafter(SIN_IS_X_BELOW, 0), np.nextafter(SIN_IS_X_BELOW, 1)]
    magnitudes = [0.0, 5e-324, 1e-320, 2.2250738585072014e-308, 1e-300, 1e-20, 1e-8, 0.5, 1.0, 3.0, 7.0, 100.0,
                  1e10, 1e15, 1e22, 6381956970095103 * 2.0**797, 1e300, 1.7976931348623157e308, np.inf, *edge]
    positive = np.concatenate([np.abs(near), magnitudes])
    return np.concatenate([positive, -positive, [np.nan]])


HARD = _hard()


def _decomposed(op: str, dtype: str) -> Graph:
    g = Graph()
    x = g.add_input(TensorType(dtype, (None,)), "x")
    g.set_outputs([Builder(g).op(op, x)])
    decompose(g)
    return g


def _assert_within_bound(op: str, x: np.ndarray, got: np.ndarray, where: str) -> None:
    """Within the op's stated float64 bound of the exact result (80-bit long double), a zero's
    sign and NaN included (`references.accuracy_reference.scored`)."""
    b = bound(op, "float64")
    err = scored(op, "float64", got, reference(op, "float64", x), [x], b)
    over = np.flatnonzero(~(err <= b.ulp + resolution(op, "float64")))
    assert not over.size, f"{op} {where}: {[(x[i], got[i], err[i]) for i in over[:8]]}"


def _bits_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.view(np.uint64) == b.view(np.uint64)) | np.isnan(a) & np.isnan(b)


@pytest.mark.skipif(not HAVE_FLOAT64_REFERENCE, reason="no 80-bit long double on this machine: no float64 reference")
@pytest.mark.parametrize("op", sorted(OPS))
def test_the_decomposition_interpreted_meets_the_bound_on_hard_values(op):
    g = _decomposed(op, "float64")
    counts = g.op_counts()
    assert not set(counts) & set(OPS), counts
    assert counts.get("SinKernel", 0) + counts.get("CosKernel", 0) >= 1, counts
    (got,) = interpret(g, HARD)
    _assert_within_bound(op, HARD, got, "interpreted")


def test_signs_of_zero_and_special_values_interpreted():
    """sin(±0) and tan(±0) keep the zero's sign, tiny arguments are themselves, cos(±0) is 1;
    ±inf and NaN give NaN; at 2**20 and beyond the kernels' (NumPy's) own values."""
    x = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-300, -2.2250738585072014e-308, np.inf, -np.inf, np.nan])
    with np.errstate(invalid="ignore"):
        for op, fn in (("Sin", np.sin), ("Tan", np.tan)):
            (got,) = interpret(_decomposed(op, "float64"), x)
            assert _bits_equal(got, fn(x)).all(), (op, got)
        (got,) = interpret(_decomposed("Cos", "float64"), x)
        assert _bits_equal(got, np.cos(x)).all(), got
    large = np.array([REDUCE_BELOW, -REDUCE_BELOW, 1e10, -1e22, 1e300])
    for op, fn in (("Sin", np.sin), ("Cos", np.cos)):
        (got,) = interpret(_decomposed(op, "float64"), large)
        assert _bits_equal(got, fn(large)).all(), (op, got)


@pytest.mark.skipif(not HAVE_FLOAT64_REFERENCE, reason="no 80-bit long double on this machine: no float64 reference")
@pytest.mark.parametrize("passes", [None, []])
@pytest.mark.parametrize("op", sorted(OPS))
def test_onnxruntime_runs_it_within_the_bound_at_both_levels(op, passes):
    x = pt.dvector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cm = ptonnx.compile_function([x], [OPS[op](x)], passes=passes)
    for level, (got,) in run_at_every_level(cm, HARD).items():
        _assert_within_bound(op, HARD, got, f"at {level}")


@pytest.mark.parametrize("op", sorted(OPS))
def test_it_is_what_pytensor_computes(op):
    x = pt.dvector("x")
    check_like_pytensor([x], [OPS[op](x), 1.0 / OPS[op](x)], [HARD])


def _intermediates(model: onnx.ModelProto, op_type: str) -> tuple[onnx.ModelProto, list[str]]:
    """`model` with the input of each `op_type` node as a further output."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    names = [n.input[0] for n in model.graph.node if n.op_type == op_type]
    model.graph.output.extend(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.DOUBLE, None) for name in names)
    return model, names


def _run(model: onnx.ModelProto, x: np.ndarray, level: str) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})


@pytest.mark.parametrize("op", ["Sin", "Cos"])
def test_onnxruntimes_sin_sees_only_reduced_arguments(op):
    """One Sin node (no Where, no Mod: Sin's reduction masks k to 0 beyond 2**20); its argument is
    within pi/2 + 7e-4 (`REDUCED_REACH`) wherever |x| < 2**20; beyond, Sin's is x itself (onnxruntime reduces it
    exactly) and Cos's result is onnxruntime's Cos of x."""
    x = pt.dvector("x")
    cm = ptonnx.compile_function([x], [OPS[op](x)])
    ops = [n.op_type for n in cm.model.graph.node]
    assert ops.count("Sin") == 1 and "Mod" not in ops, ops
    assert ops.count("Where") == (op == "Cos") and ops.count("Cos") == (op == "Cos"), ops
    model, _ = _intermediates(cm.model, "Sin")
    values = np.concatenate([HARD, np.random.default_rng(0).uniform(-REDUCE_BELOW, REDUCE_BELOW, 100000)])
    below = np.abs(values) < REDUCE_BELOW
    for level in ORT_LEVELS:
        _, argument = _run(model, values, level)
        assert (np.abs(argument[below]) <= REDUCED_REACH).all(), (level, np.abs(argument[below]).max())
        if op == "Sin":
            finite_beyond = ~below & np.isfinite(values)
            assert _bits_equal(argument[finite_beyond], values[finite_beyond]).all(), level


def test_tan_uses_onnxruntimes_sin_and_cos_only_beyond_2_to_the_20():
    """Below 2**20 tan is additions, products and quotients of the reduced argument (Cephes),
    its Sin(x) / Cos(x) selected only beyond."""
    x = pt.dvector("x")
    cm = ptonnx.compile_function([x], [pt.tan(x)])
    ops = [n.op_type for n in cm.model.graph.node]
    assert ops.count("Sin") == 1 and ops.count("Cos") == 1, ops
    (sin_x,) = (n for n in cm.model.graph.node if n.op_type == "Sin")
    assert sin_x.input[0] == cm.model.graph.input[0].name  # x itself: the plain branch
    small = np.linspace(-REDUCE_BELOW + 1, REDUCE_BELOW - 1, 100001)
    (cephes,) = interpret(_decomposed("Tan", "float64"), small)
    for level, (got,) in run_at_every_level(cm, small).items():
        assert _bits_equal(got, cephes).all(), level  # no kernel below 2**20: interpreted = run, bit for bit


def _folded_and_run(op: str, values: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = pt.dvector("x")
        at_run_time = ptonnx.compile_function([x], [OPS[op](x)])
        anchor = pt.dvector("anchor")
        folded = ptonnx.compile_function([anchor], [OPS[op](pt.constant(values)), anchor])
    assert len(folded.ir) == 0, folded.ir.op_counts()
    (ran,) = run_at_every_level(at_run_time, values)["ORT_ENABLE_ALL"]
    return ran, {level: got for level, (got, _) in run_at_every_level(folded, np.zeros(1)).items()}


@pytest.mark.parametrize("op", sorted(OPS))
def test_a_folded_constant_is_what_the_model_computes(op):
    """Folding evaluates the decomposition, so it reduces as the model does; only its kernel ops are
    NumPy's sin and cos, which may differ from onnxruntime's by up to 3 ulp (tests/lowering/test_kernels.py;
    seen: 2). The same bits at ±0, ±inf, NaN, below 2**-26 (x itself), and for all of tan below
    2**20 (no kernel there); elsewhere within 3 ulp of the result."""
    ran, folded = _folded_and_run(op, HARD)
    same_bits = ~np.isfinite(HARD) | (np.abs(HARD) < SIN_IS_X_BELOW)
    if op == "Tan":
        same_bits |= np.abs(HARD) < REDUCE_BELOW
    for level, got in folded.items():
        differ = ~_bits_equal(got, ran)
        assert not (differ & same_bits).any(), (level, HARD[differ & same_bits][:5], got[differ & same_bits][:5])
        with np.errstate(all="ignore"):
            ulps = 2 * bound("Tan", "float64").ulp if op == "Tan" else 3
            far = differ & ~(np.abs(got - ran) <= ulps * np.spacing(np.abs(ran)))
        assert not far.any(), (level, HARD[far][:5], got[far][:5], ran[far][:5])


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_below_float64_sin_and_cos_are_onnxruntimes_kernels_and_tan_is_computed_in_float64(dtype):
    """float32 Sin and Cos: onnxruntime's kernel, one node (float16: between Casts to float32 and
    back); Tan of either: the float64 decomposition between Casts, rounded once."""
    for op in ("Sin", "Cos"):
        g = _decomposed(op, dtype)
        assert {n.op for n in g.nodes} == ({f"{op}Kernel"} if dtype == "float32" else {f"{op}Kernel", "Cast"}), g.op_counts()
        x = pt.vector("x", dtype=dtype)
        cm = ptonnx.compile_function([x], [OPS[op](x)])
        ops = sorted(n.op_type for n in cm.model.graph.node)
        assert ops == ([op] if dtype == "float32" else ["Cast", "Cast", op]), ops
    g = _decomposed("Tan", dtype)
    assert g.op_counts()["Cast"] == 2 and "SinKernel" in g.op_counts(), g.op_counts()
    values = np.array([0.0, -0.0, 1e-30, 0.5, 1.5707964, -3.0, 1e4, 6e4, np.inf, np.nan]).astype(dtype)
    x = pt.vector("x", dtype=dtype)
    with np.errstate(all="ignore"):
        exact = np.tan(values.astype(np.float64)).astype(dtype)
    for level, (got,) in run_at_every_level(ptonnx.compile_function([x], [pt.tan(x)]), values).items():
        assert got.dtype == dtype
        np.testing.assert_array_max_ulp(got[np.isfinite(exact)], exact[np.isfinite(exact)], maxulp=1)
        assert (np.signbit(got) == np.signbit(exact))[:2].all() and np.isnan(got[-2:]).all(), level
