"""The per-target carrying (`passes/carry_dtypes.py`): the model `runtime="iree"` compiles holds
uint32 and uint64 in int64, and gives, in onnxruntime at both levels, the default model's
numbers bit for bit: every draw (rejection samplers' Loops too, whose bodies carry the words)
and user uint32 arithmetic at its limits. What the carrying cannot keep exact is refused by name.
No IREE needed: IREE's own run of the form is in `tests/test_iree.py`."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.check_errors import check_exception, read_checks, read_flags
from ptonnx.ir import Builder, Graph, TensorType
from ptonnx.iree_call import Signature
from ptonnx.iree_runtime import Boundary, IreeCompileError, iree_form
from ptonnx.keys import key
from ptonnx.passes.carry_dtypes import CarryError, carried
from ptonnx.testing import ORT_LEVELS, reference_mode, session_options

UNSIGNED = {onnx.TensorProto.UINT32, onnx.TensorProto.UINT64}


def _unsigned_anywhere(graph: onnx.GraphProto) -> list[str]:
    """Names of the unsigned tensors, casts and initializers of `graph` and its bodies."""
    found = [v.name for v in [*graph.input, *graph.output, *graph.value_info] if v.type.tensor_type.elem_type in UNSIGNED]
    found += [t.name for t in graph.initializer if t.data_type in UNSIGNED]
    for node in graph.node:
        for a in node.attribute:
            if a.name == "to" and a.i in UNSIGNED or a.type == onnx.AttributeProto.TENSOR and a.t.data_type in UNSIGNED:
                found.append(node.name or node.op_type)
            if a.type == onnx.AttributeProto.GRAPH:
                found += _unsigned_anywhere(a.g)
    return found


def _run_iree_form(cm, arrays, level: str) -> list[np.ndarray]:
    """The IREE model of `cm` in onnxruntime, its arrays through the boundary and packing as
    `IreeModel.run` sends them."""
    model, boundary = iree_form(cm.ir, cm.model.graph.name, cm.output_names)
    onnx.checker.check_model(model, full_check=True)
    assert _unsigned_anywhere(onnx.shape_inference.infer_shapes(model).graph) == []
    signature = Signature(model)
    session = ort.InferenceSession(model.SerializeToString(), session_options(level, quiet=True), providers=["CPUExecutionProvider"])
    packed = signature.pack(boundary.enter([np.asarray(a) for a in arrays]))
    outputs = boundary.leave(signature.unpack(session.run(None, dict(zip([i.name for i in model.graph.input], packed, strict=True)))))
    flags, checks = read_flags(model), read_checks(model)
    n = len(outputs) - len(flags)
    for name, flag in zip(flags, outputs[n:], strict=True):
        if flag > 0:  # as `IreeModel.run` raises
            raise check_exception(checks[name])
    return outputs[:n]


def _same_bits(got, want, what: str) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape, (what, g.dtype, g.shape, w.dtype, w.shape)
        assert g.tobytes() == w.tobytes(), f"{what}: the carried form differs"


DRAWS = {
    "uniform": lambda r, n: pt.random.uniform(-2.0, 3.0, size=(n,), rng=r),
    "normal": lambda r, n: pt.random.normal(1e300, 1e299, size=(n,), rng=r),
    "integers": lambda r, n: pt.random.integers(-(2**40), 2**40, size=(n,), rng=r),
    "bernoulli": lambda r, n: pt.random.bernoulli(0.3, size=(n,), rng=r),
    "categorical": lambda r, n: pt.random.categorical(np.array([0.2, 0.0, 0.8]), size=(n,), rng=r),
    "gamma (a Loop)": lambda r, n: pt.random.gamma(0.5, 2.0, size=(n,), rng=r),
    "poisson (a Loop)": lambda r, n: pt.random.poisson(30.0, size=(n,), rng=r),
    "hypergeometric": lambda r, n: pt.random.hypergeometric(10, 5, 7, size=(n,), rng=r),
    "permutation (a static size: IREE sorts no other)": lambda r, n: pt.random.permutation(7, rng=r),
    "multivariate normal": lambda r, n: pt.random.multivariate_normal(np.zeros(2), np.eye(2), size=(n,), rng=r),
}


@pytest.mark.parametrize("draw", list(DRAWS))
def test_draws_in_the_carried_form_are_the_default_models(draw):
    rng, n = pt.random.type.RandomGeneratorType()("rng"), pt.lscalar("n")
    next_key, x = DRAWS[draw](rng, n).owner.outputs
    cm = ptonnx.compile_function([rng, n], [x, next_key])
    before = str(cm.ir)
    for seed, size in ((key(1), 200), (key(2**64 - 1), 3), (key([0, 0]), 0), (key([2**32 - 1, 2**32 - 1]), 1)):
        want = cm(seed, np.int64(size))
        for level in ORT_LEVELS:
            _same_bits(_run_iree_form(cm, [seed, np.int64(size)], level), want, f"{draw}, key {seed}, n={size}, {level}")
    assert str(cm.ir) == before, "carrying changed the user's IR"


U32_EDGES = np.array([0, 1, 2, 3, 2**16 - 1, 2**16, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 2, 2**32 - 1], dtype=np.uint32)


def test_user_uint32_arithmetic_at_its_limits_is_carried_exactly():
    x, y = pt.vector("x", dtype="uint32"), pt.vector("y", dtype="uint32")
    i, f = pt.vector("i", dtype="int64"), pt.vector("f", dtype="float64")
    outputs = [x + y, x - y, x * y, -x, x ^ y, x | y, x & y, ~x, pt.maximum(x, y), pt.minimum(x, y), x < y, pt.eq(x, y),
               x // pt.maximum(y, 1), x % pt.maximum(y, 1), x.sum(), x.max(), pt.where(x > y, x, y),
               x.astype("float64"), x.astype("float32"), x.astype("uint64"), f.astype("uint32"), pt.concatenate([x, y])[::-2]]
    # PyTensor's Python casts refuse what NumPy's astype (and its C backend) wrap: NumPy is their reference
    wrapped = [i.astype("uint32"), x.astype("int32"), x.astype("int8")]
    cm = ptonnx.compile_function([x, y, i, f], [*outputs, *wrapped])
    xs = np.repeat(U32_EDGES, len(U32_EDGES))
    ys = np.tile(U32_EDGES, len(U32_EDGES))
    ints = np.resize(np.array([0, -1, -(2**31), 2**32, 2**32 + 5, -(2**40) - 3, np.iinfo(np.int64).min, np.iinfo(np.int64).max]), xs.size)
    floats = np.resize(np.array([0.0, -0.0, 1.5, 2.0**31, 2.0**32 - 1, 7e9 % 2**32]), xs.size)
    arrays = [xs, ys, ints, floats]
    with np.errstate(all="ignore"):
        want = [np.asarray(w) for w in pytensor.function([x, y, i, f], outputs, mode=reference_mode(), on_unused_input="ignore")(*arrays)]
    want += [ints.astype(np.uint32), xs.astype(np.int32), xs.astype(np.int8)]
    ours = cm(*arrays)
    for level in ORT_LEVELS:
        got = _run_iree_form(cm, arrays, level)
        _same_bits(got, ours, level)
        _same_bits(got, want, f"PyTensor, {level}")
    empty = [np.zeros(0, np.uint32), np.zeros(0, np.uint32), np.zeros(0, np.int64), np.zeros(0, np.float64)]
    for run in (cm, lambda *a: _run_iree_form(cm, a, "ORT_ENABLE_ALL")):  # x.max() of no element: both raise
        with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
            run(*empty)


def test_uint64_is_carried_as_its_bits():
    a, b = pt.vector("a", dtype="uint64"), pt.vector("b", dtype="uint64")
    s, w = pt.vector("s", dtype="int32"), pt.vector("w", dtype="uint32")
    outputs = [a + b, a * b, a - b, ~a, a ^ b, pt.eq(a, b), a.astype("uint32"), a.astype("int64"), a.astype("int8"),
               s.astype("uint64"), w.astype("uint64"), pt.concatenate([a, b])]
    cm = ptonnx.compile_function([a, b, s, w], outputs)
    edges = np.array([0, 1, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1], dtype=np.uint64)
    arrays = [np.repeat(edges, edges.size), np.tile(edges, edges.size),
              np.resize(np.array([0, -1, np.iinfo(np.int32).min, np.iinfo(np.int32).max], np.int32), edges.size**2),
              np.resize(U32_EDGES, edges.size**2)]
    ours = cm(*arrays)
    with np.errstate(all="ignore"):
        numpy = [arrays[0] + arrays[1], arrays[0] * arrays[1], arrays[0] - arrays[1], ~arrays[0], arrays[0] ^ arrays[1],
                 arrays[0] == arrays[1], arrays[0].astype(np.uint32), arrays[0].astype(np.int64), arrays[0].astype(np.int8),
                 arrays[2].astype(np.uint64), arrays[3].astype(np.uint64), np.concatenate(arrays[:2])]
    _same_bits(ours, numpy, "the default model")
    for level in ORT_LEVELS:
        _same_bits(_run_iree_form(cm, arrays, level), ours, level)


def test_what_the_carrying_cannot_keep_exact_is_refused():
    a, b = pt.vector("a", dtype="uint64"), pt.vector("b", dtype="uint64")
    for refused, why in ((a < b, "Less has no form that keeps uint64 exact in int64"),
                         (pt.maximum(a, b), "Max has no form that keeps uint64 exact in int64"),
                         (a.astype("float64"), "a Cast of uint64 to float64: the carried bits from 2\\*\\*63 on are negative")):
        with pytest.raises(IreeCompileError, match=why):
            iree_form(ptonnx.compile_function([a, b], [refused]).ir, "m", ["out"])
    f = pt.vector("f", dtype="float64")
    with pytest.raises(IreeCompileError, match=r"a Cast of float64 to uint64 of a value not known to stay in \[0, 2\*\*63\)"):
        iree_form(ptonnx.compile_function([f], [f.astype("uint64")]).ir, "m", ["out"])
    graph = Graph("shift")
    words, amount = graph.add_input(TensorType("uint32", (3,)), "w"), graph.add_input(TensorType("uint32", ()), "r")
    graph.set_outputs([Builder(graph).op("ShiftLeft", words, amount)])
    with pytest.raises(CarryError, match="a shift by an amount known only at run time"):
        carried(graph, "iree")


def test_a_graph_without_a_carried_dtype_is_not_copied_and_onnxruntime_carries_none():
    x = pt.vector("x", dtype="uint32")
    cm = ptonnx.compile_function([x], [x + x])
    assert carried(cm.ir, "onnxruntime").graph is cm.ir
    f = pt.dvector("f")
    plain = ptonnx.compile_function([f], [f * 2]).ir
    form = carried(plain, "iree")
    assert form.graph is plain and form.inputs == form.outputs == ()
    form = carried(cm.ir, "iree")
    assert form.graph is not cm.ir and form.inputs == (0,) and form.outputs == (0,)
    assert [v.dtype for v in form.graph.inputs] == ["int64"] and [v.dtype for v in form.graph.outputs] == ["int64"]


def test_the_boundary_converts_bit_for_bit():
    boundary = Boundary({0: "int64"}, {1: "uint32", 2: "uint64"})
    words = np.array([0, 2**63 - 1, 2**63, 2**64 - 1], np.uint64)
    entered = boundary.enter([words, np.ones(2)])
    assert entered[0].dtype == np.int64 and entered[0].tolist() == [0, 2**63 - 1, -(2**63), -1] and entered[1].dtype == np.float64
    left = boundary.leave([np.ones(1), np.array([0, 2**32 - 1], np.int64), entered[0]])
    assert left[1].dtype == np.uint32 and left[1].tolist() == [0, 2**32 - 1] and left[0].dtype == np.float64
    assert left[2].dtype == np.uint64 and left[2].tobytes() == words.tobytes()
