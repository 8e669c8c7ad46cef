"""The one harness of the hand-built lowering tests (`tests/lowering/test_*.py`).

An IR graph built by hand (no PyTensor), compiled by the stages `ptonnx.compile` runs on a
lifted graph (`ptonnx.stages`: decompose, the passes `unify_dtypes`, legalise, lower), checked with the ONNX checker
(full), run at every onnxruntime level through `ptonnx.api.CompiledModel` (so a failed
`Check` raises `CheckFailedError`, as users see it) and compared with `ir.interpret` of
the same graph built again. A case is compiled once and its sessions serve every input.

Each test module exposes `COVERS`, the IR ops it has a lowering case for
(`tests/ir/test_registry.py` reads them).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import attrs
import numpy as np
import onnx

from ptonnx import ir, stages
from ptonnx.api import CompiledModel
from ptonnx.errors import CheckFailedError
from ptonnx.testing import ORT_LEVELS, REORDERED_SUMS, TOLERANCE, assert_same, session_options

#: float values with the ends of the range (NaN, ±inf, ±0, a subnormal, huge and tiny magnitudes)
FLOATS = np.array([1.5, -2.25, 0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1e300, -1e-300, 0.5, 3.0])


def values(dtype: str, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    """An array of `dtype` drawn from the ends of its range: FLOATS (as the dtype rounds them),
    integers at their limits, bools of both values."""
    size = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        data = np.arange(size) % 3 == 1
    elif np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([0, 1, 2, 3, info.max, info.min, info.max // 2 + 1], dtype=dtype)
        if info.min < 0:
            pool = np.concatenate([pool, np.array([-1, -3], dtype=dtype)])
        data = rng.choice(pool, size)
    else:
        with np.errstate(over="ignore"):
            data = rng.choice(FLOATS, size).astype(dtype)
    return np.asarray(data, dtype=dtype).reshape(shape)


def ends(dtype: str) -> np.ndarray:
    """Every end of `dtype`'s range once: for floats FLOATS plus the largest and the smallest
    normal and subnormal of the dtype; integer limits; both bools."""
    if dtype == "bool":
        return np.array([True, False])
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return np.array(sorted({0, 1, 2, info.max, info.min, info.max - 1, info.min + 1, info.max // 2 + 1}), dtype=dtype)
    info = np.finfo(dtype)
    with np.errstate(over="ignore"):
        return np.concatenate([FLOATS.astype(dtype), np.array([info.max, -info.max, info.tiny, info.smallest_subnormal], dtype)])


def one_node(op: str, inputs: Sequence, attributes: dict | None = None) -> Callable[[], ir.Graph]:
    """A builder of the graph of one `op` node: each input a graph input (a TensorType, named
    x0, x1, ...) or a constant (an array); the node's outputs are the graph's."""
    return same_inputs(op, inputs, [attributes or {}])


def same_inputs(op: str, inputs: Sequence, attribute_sets: Sequence[dict]) -> Callable[[], ir.Graph]:
    """A builder of a graph of one `op` node per attribute set, all on the same inputs (one
    model for several axes or modes); the graph's outputs are every node's, in order."""

    def build() -> ir.Graph:
        g = ir.Graph(f"{op}_case")
        inputs_ = [ir.Value.constant(i) if isinstance(i, np.ndarray) else g.add_input(i, f"x{k}") for k, i in enumerate(inputs)]
        builder = ir.Builder(g)
        g.set_outputs([out for attributes in attribute_sets for out in builder.node(op, inputs_, attributes).outputs])
        return g

    return build


def compile_graph(graph: ir.Graph) -> onnx.ModelProto:
    """`graph` (edited in place) compiled by `ptonnx.stages` as `ptonnx.compile` compiles a lifted
    graph, with `unify_dtypes` as its passes."""
    return stages.compile_graph(graph).model


@attrs.define
class Compiled:
    """A case compiled once: the reference graph, the model, and a session per onnxruntime level."""

    reference: ir.Graph
    model: onnx.ModelProto
    runs: dict[str, CompiledModel]

    def check(self, *arrays, compare=None, context: str = "") -> list[np.ndarray]:
        """Run at every level; each output compared with interpret's (`compare(actual, expected,
        context)`, default `assert_same`; a list: one per output); returns interpret's outputs."""
        expected = interpret(self.reference, *arrays)
        for level, run in self.runs.items():
            actual = run(*arrays)
            assert len(actual) == len(expected), f"{context}: {len(actual)} outputs, interpret gives {len(expected)}"
            for k, (a, e) in enumerate(zip(actual, expected, strict=True)):
                this = compare[k] if isinstance(compare, list | tuple) else compare or assert_same
                this(a, e, f"{self.reference.name} output {k} at {level} {context}, inputs {list(arrays)}")
        return expected

    def check_fails(self, *arrays, exception: type = CheckFailedError, match: str | None = None) -> None:
        """interpret raises `CheckFailedError`, and so does the model at every level (an instance of
        `exception` too, the class the check names), with the check's message."""
        try:
            interpret(self.reference, *arrays)
        except CheckFailedError:
            pass
        else:
            raise AssertionError(f"interpret of {self.reference.name} passed on {list(arrays)}")
        for level, run in self.runs.items():
            try:
                run(*arrays)
            except CheckFailedError as exc:
                assert isinstance(exc, exception), f"{type(exc).__mro__} is not a {exception} at {level}"
                assert match is None or match in str(exc), f"{exc} at {level}"
            else:
                raise AssertionError(f"the model of {self.reference.name} returned at {level} on {list(arrays)}")


def interpret(graph: ir.Graph, *arrays) -> list[np.ndarray]:
    """`ir.interpret`, quietly (NumPy's warnings on NaN, overflow and division by zero are the point)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ir.interpret(graph, *arrays)


def compiled(build: Callable[[], ir.Graph]) -> Compiled:
    """`build()` compiled, checked with the ONNX checker, with a session per level; the reference
    is `build()` again (compiling edits the graph)."""
    c = stages.compile_graph(build(), stop="check")  # the ONNX checker, full
    reference = build()
    cm = CompiledModel(c.model, reference, c.report)
    return Compiled(reference, c.model, {level: cm.with_session_options(session_options(level)) for level in ORT_LEVELS})


def check_node(op: str, inputs: Sequence, attributes: dict | None, *array_lists, compare=None) -> Compiled:
    """One `op` node compiled once and checked on each list of input arrays."""
    case = compiled(one_node(op, inputs, attributes))
    for arrays in array_lists:
        case.check(*arrays, compare=compare, context=f"{attributes or ''}")
    return case


def reordered_sums(actual, expected, context: str = "") -> None:
    """For sums and products onnxruntime adds in another order than NumPy: dtype and shape
    exact; NaN and infinities where interpret has them; finite floats within REORDERED_SUMS
    (float16: its TOLERANCE), a zero of either sign (a sum of -0.0s: NumPy starts from +0.0 and
    gives +0.0, onnxruntime gives -0.0); anything else exact."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if expected.dtype.kind != "f":
        return assert_same(actual, expected, context)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, f"{context}: {actual.dtype}{actual.shape} != {expected.dtype}{expected.shape}"
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(actual[~finite], expected[~finite], err_msg=f"non-finite: {context}")
    tol = REORDERED_SUMS.get(expected.dtype.name, TOLERANCE[expected.dtype.name])
    np.testing.assert_allclose(actual[finite], expected[finite], err_msg=context, **tol)


def dtypes_of(op: str, var: str = "T") -> list[str]:
    """The dtypes `op`'s declaration allows for type variable `var`, sorted."""
    return sorted(ir.get_schema(op).constraints[var])
