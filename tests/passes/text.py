"""Text in, text out tests of passes, in the style of MLIR's and xDSL's filecheck tests:

    assert_rewrites("cse", '''
        graph g(%x: f32[3], %y: f32[3]) {
          %a: f32[3] = Add(%x, %y)
          ...
    ''', '''
        graph g(...) { ... what the pass leaves ... }
    ''')

The graph is read with `ptonnx.ir.parser.parse_graph`, the pass run as the PassManager runs it
(on the graph, then on every body), the result verified and printed. Values the pass made
without a name print as `%0`, `%1`, ... in the order they print (numbers no value of the
graph already uses), so the expected text does not depend on how many values other tests made.

The passes claim to keep every number: before and after are interpreted on hard inputs (NaN,
±inf, ±0, subnormals, the largest floats) and must agree bit for bit (any NaN for a NaN, the
sign of zero included), or fail alike (a check). That needs every input's shape static; else
pass `inputs=`.
"""

from __future__ import annotations

import difflib
import textwrap

import numpy as np

from ptonnx import ir
from ptonnx.ir.core import Graph, bodies
from ptonnx.ir.parser import parse_graph
from ptonnx.passes.manager import resolve, run_nested

#: what integer inputs cycle through (a trip count: 3 trips, then none)
_INTS = [3, 0, 1, 2, -1]


def _hard(dtype: str) -> np.ndarray:
    """13 (a prime) values, so input j, read at stride j + 1, meets each of input 0's."""
    info = np.finfo(dtype)
    tiny = info.smallest_subnormal
    return np.array([np.nan, -0.0, np.inf, 1.0, -np.inf, tiny, 0.0, -2.5, info.max, -tiny, 0.5, -info.max, 3.0], dtype)


def hard_inputs(graph: Graph) -> list[list[np.ndarray]] | None:
    """Sets of arguments for `graph`: each float element takes every hard value across the
    sets; ints cycle through 3, 0, 1, 2, -1 (a trip count: 3, then none); None when a shape is not static."""
    if not all(v.type.is_static for v in graph.inputs):
        return None
    sets = []
    for k in range(13):
        args = []
        for j, v in enumerate(graph.inputs):
            index = np.arange(int(np.prod(v.shape, dtype=np.int64))) + k * (j + 1) + j
            if v.dtype in ("float16", "float32", "float64"):
                pool = _hard(v.dtype)
            elif v.dtype == "bool":
                pool = np.array([True, False])
            else:
                pool = np.array(_INTS, v.dtype) if v.dtype.startswith("int") else np.array([3, 0, 1, 2], v.dtype)
            args.append(pool[index % pool.size].reshape(v.shape))
        sets.append(args)
    return sets


def _ordinary_inputs(graph: Graph) -> list[list[np.ndarray]]:
    """Finite, moderate arguments (for a pass that only keeps numbers to a tolerance)."""
    rng = np.random.default_rng(0)
    sets = hard_inputs(graph)
    if sets is None:
        raise AssertionError("give `inputs=`: the graph's input shapes are not all static")
    return [[rng.normal(size=a.shape).astype(a.dtype) if a.dtype.kind == "f" else a for a in args] for args in sets[:3]]


def _in_print_order(graph: Graph):
    yield from graph.inputs
    for node in graph:
        yield from node.outputs
        for body in bodies(node):
            yield from _in_print_order(body)


def name_new_values(graph: Graph) -> None:
    """Give each unnamed value the first free number, in print order (they print by uid otherwise)."""
    values = list(_in_print_order(graph))
    used = {v.name for v in values if v.name}
    numbers = (str(i) for i in range(len(values) + len(used) + 1) if str(i) not in used)
    for v in values:
        if not v.name:
            v.name = next(numbers)


def assert_same_numbers(got: list[np.ndarray], want: list[np.ndarray], rtol: float | None = None, what: str = "") -> None:
    """Bit for bit (any NaN for a NaN, the sign of zero kept), or to `rtol`."""
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        where = f"output {i}{what}"
        assert g.dtype == w.dtype and g.shape == w.shape, f"{where}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
        if rtol is not None:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True, err_msg=where)
        elif w.dtype.kind == "f":
            nan = np.isnan(w)
            same = (np.isnan(g) == nan) & ((g == w) & (np.signbit(g) == np.signbit(w)) | nan)
            assert same.all(), f"{where}: not bit-identical at {np.argwhere(~same).tolist()}:\n got {g}\nwant {w}"
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)


def _outcome(graph: Graph, args) -> tuple[list[np.ndarray] | None, type | None]:
    """The outputs, or the class of the error raised (a failed check, before and after alike)."""
    try:
        with np.errstate(all="ignore"):
            return ir.interpret(graph, *args), None
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return None, type(exc)


def assert_rewrites(pass_, before: str, after: str, *, inputs=None, rtol: float | None = None):
    """Parse `before` (dedented), run `pass_` (a name or pass object), verify, and require the
    printed graph to be `after` (dedented) and the numbers kept (see the module doc). `inputs`:
    sets of arguments to interpret on instead of the hard ones; `rtol`: numbers kept only to a
    tolerance (on finite, moderate inputs unless `inputs` are given). Returns (graph, PassResult)."""
    graph = parse_graph(textwrap.dedent(before).strip("\n"))
    ir.verify(graph)
    sets = inputs if inputs is not None else (_ordinary_inputs(graph) if rtol is not None else hard_inputs(graph))
    reference = [_outcome(graph, args) for args in sets or []]
    result = run_nested(resolve(pass_), graph)
    ir.verify(graph)
    name_new_values(graph)
    got, want = ir.print_graph(graph), textwrap.dedent(after).strip("\n")
    if got != want:
        diff = "\n".join(difflib.unified_diff(want.splitlines(), got.splitlines(), "expected", "got", lineterm=""))
        raise AssertionError(f"the pass printed another graph:\n{diff}\n\nwhole graph:\n{got}")
    for k, (args, (expected, error)) in enumerate(zip(sets or [], reference, strict=True)):
        got, got_error = _outcome(graph, args)
        assert got_error is error, f"input set {k} {args}: raised {got_error} after the pass, {error} before"
        if error is None:
            assert_same_numbers(got, expected, rtol, what=f" on input set {k}: {args}")
    return graph, result
