"""The probe's tools: tiny ONNX models, onnxruntime sessions, and the classification
of a kernel's results against the reference.

Kinds of difference (one per element, the first that applies):

- ``nan``: NaN where the reference has a number, or a number where it has NaN
- ``overflow``: ±inf where the reference is finite
- ``underflow``: 0 where the reference is a nonzero finite number (normal or subnormal)
- ``signed-zero``: the other zero
- ``inaccurate``: floats more than the op's bound apart (0 ulp for correctly rounded ops,
  `reference.ULP_THRESHOLD` for the others); integers that differ inside the dtype's range
- ``saturates``: an integer result out of range clipped to the dtype's limit, where NumPy wraps
- ``no-wrap``: out-of-range integer results that are not NumPy's wrapped ones and not
  consistently clipped (e.g. INT_MIN for every overflow)
- ``wrong``: a bool result that differs
"""

from __future__ import annotations

import attrs
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from onnxruntime.capi import onnxruntime_pybind11_state as _ort_state

from references.reference import APPROX, ULP_THRESHOLD, Ref
from ptonnx.lowering import IR_VERSION, OPSET
from ptonnx.testing import session_options

#: what onnxruntime raises when it cannot make a session or run a kernel
ORT_ERRORS = tuple(
    getattr(_ort_state, name)
    for name in ("Fail", "InvalidArgument", "InvalidGraph", "NotImplemented", "RuntimeException", "EPFail")
    if hasattr(_ort_state, name)
)
#: the onnxruntime optimisation levels every probe runs at: none, and what users get
LEVELS = ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL")
SHORT_LEVEL = {"ORT_DISABLE_ALL": "off", "ORT_ENABLE_ALL": "all"}


@attrs.frozen
class Finding:
    """One way one (op, dtype) differs from NumPy, at the levels where it does."""

    op: str
    dtype: str
    kind: str
    levels: tuple[str, ...]
    detail: str
    inputs: tuple[str, ...] = ()
    #: for "no kernel": the wider dtype that computes it exactly, if any
    wider: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.op, self.dtype, self.kind)


def tensor_type(dtype: str) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def make_model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    """A model as ptonnx writes them (opset 18, ir_version 10). Inputs are (name, dtype, rank),
    with symbolic dims; outputs (name, dtype), with the shapes ONNX infers."""
    graph = helper.make_graph(
        list(nodes), "probe",
        [helper.make_tensor_value_info(n, tensor_type(d), [f"{n}_{k}" for k in range(r)]) for n, d, r in inputs],
        [helper.make_tensor_value_info(n, tensor_type(d), None) for n, d in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION)
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except onnx.shape_inference.InferenceError:
        return model
    for out, known in zip(model.graph.output, inferred.graph.output, strict=True):
        if known.type.tensor_type.HasField("shape"):
            out.type.CopyFrom(known.type)
    return model


def check(model: onnx.ModelProto) -> str | None:
    """None if `model` is valid ONNX, else the first line of why not."""
    try:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        return str(exc).strip().splitlines()[0][:200]
    return None


def session(model: onnx.ModelProto | bytes, level: str) -> ort.InferenceSession:
    options = session_options(level, threads=1, quiet=True)
    data = model if isinstance(model, bytes) else model.SerializeToString()
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def ordinal(x: np.ndarray) -> np.ndarray:
    """Floats as integers in the same order, one step per representable value (±0 -> 0)."""
    signed = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    i = np.ascontiguousarray(x).view(signed)
    return np.where(i < 0, np.iinfo(signed).min - i, i)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many representable values apart `a` and `b` are (float64; exact up to 2**53)."""
    return np.abs(ordinal(a).astype(object) - ordinal(b).astype(object)).astype(np.float64)


def same(a: np.ndarray, b: np.ndarray, zero_sign: bool = True) -> np.ndarray:
    """Elementwise equality with NaN == NaN and, if `zero_sign`, -0.0 != 0.0."""
    if a.dtype.kind != "f":
        return a == b
    eq = (a == b) | (np.isnan(a) & np.isnan(b))
    return eq & (np.signbit(a) == np.signbit(b)) if zero_sign else eq


def wrap(exact: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(NumPy's wrapped result, the clipped one, out-of-range mask) of exact Python ints."""
    bits = dtype.itemsize * 8
    ii = np.iinfo(dtype)
    flat = [int(v) for v in exact.ravel()]
    wrapped = [(v - ii.min) % (1 << bits) + ii.min for v in flat]
    clipped = [min(max(v, ii.min), ii.max) for v in flat]
    shape = exact.shape
    return (
        np.array(wrapped, dtype=dtype).reshape(shape),
        np.array(clipped, dtype=dtype).reshape(shape),
        np.array([not ii.min <= v <= ii.max for v in flat], dtype=bool).reshape(shape),
    )


@attrs.frozen
class Comparison:
    #: kind -> mask of the elements of that kind
    kinds: dict
    #: ulp distance per element (floats), 0 elsewhere
    ulps: np.ndarray
    expected: np.ndarray
    #: largest ulp distance over the compared finite elements (None for non-floats)
    max_ulp: float | None


def classify(got: np.ndarray, ref: Ref, out_dtype: str, accuracy: str, zero_sign: bool = True) -> Comparison:
    """Compare onnxruntime's result with the reference, element by element."""
    out = np.dtype(out_dtype)
    got = np.asarray(got)
    undefined = np.zeros(got.shape, bool) if ref.undefined is None else np.asarray(ref.undefined)
    values = np.asarray(ref.values)
    kinds: dict[str, np.ndarray] = {}
    ulps = np.zeros(got.shape)
    max_ulp = None
    if out.kind == "f":
        with np.errstate(all="ignore"):
            expected = values.astype(out)
        ok = same(got, expected, zero_sign) | undefined
        if ref.alternative is not None:
            ok |= same(got, np.asarray(ref.alternative).astype(out), zero_sign)
        bad = ~ok
        nan = bad & (np.isnan(got) != np.isnan(expected))
        overflow = bad & ~nan & np.isinf(got) & np.isfinite(expected)
        underflow = bad & ~nan & (got == 0) & (expected != 0) & np.isfinite(expected)
        zero = bad & (got == 0) & (expected == 0)
        rest = bad & ~(nan | overflow | underflow | zero)
        finite = np.isfinite(got) & np.isfinite(expected) & ~undefined
        ulps = np.where(finite | rest, ulp_distance(got, expected), 0)
        ulps = np.where(np.isnan(got) | np.isnan(expected), 0, ulps)
        max_ulp = float(ulps[finite].max()) if finite.any() else 0.0
        bound = ULP_THRESHOLD if accuracy == APPROX else 0
        kinds = {"nan": nan, "overflow": overflow, "underflow": underflow, "signed-zero": zero,
                 "inaccurate": rest & (ulps > bound)}
    elif values.dtype == object:
        expected, clipped, out_of_range = wrap(values, out)
        bad = (got != expected) & ~undefined
        saturates = bad & (got == clipped) & out_of_range
        no_wrap = bad & ~saturates & out_of_range
        if no_wrap.any():  # INT_MIN for every overflow clips the negative ones only by chance
            no_wrap, saturates = no_wrap | saturates, saturates & False
        kinds = {"saturates": saturates, "no-wrap": no_wrap, "inaccurate": bad & ~out_of_range}
    else:
        expected = values.astype(out)
        bad = (got != expected) & ~undefined
        kinds = {"wrong" if out.kind == "b" else "inaccurate": bad}
    return Comparison({k: m for k, m in kinds.items() if m.any()}, ulps, expected, max_ulp)


def fmt(v) -> str:
    """A scalar as NumPy prints it in its own dtype (shortest round-trip form)."""
    v = np.asarray(v)
    if v.ndim:
        return "[" + ", ".join(fmt(x) for x in v.ravel()) + "]"
    return str(v[()])
