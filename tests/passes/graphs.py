"""Random IR graphs built from the op registry, for differential tests of passes.

A strategy draws a *recipe* (plain data); `build(recipe)` makes a fresh graph
from it, so the same graph can be built twice: once to transform, once as the
untouched reference.
"""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st

from ptonnx import ir
from ptonnx.errors import TypeRuleError
from ptonnx.ir import Builder, Graph, TensorType, Value

SHAPES = [(2, 3), (1, 3), (2, 1), (), (3,)]
INPUT_DTYPES = ["float32", "float64", "int32", "int64", "bool"]
OPS = sorted(n for n, s in ir.all_schemas().items() if s.family == "elementwise" and n != "Cast")
CAST_TARGETS = ["float32", "float64", "int32", "int64", "bool", "int8"]


def _elements(dtype):
    if dtype == "bool":
        return st.booleans()
    if dtype.startswith("int"):
        return st.integers(-20, 20)
    return st.one_of(st.floats(-10, 10, width=32), st.sampled_from([0.0, -1.0, np.inf, np.nan]))


@st.composite
def recipes(draw, max_nodes=12):
    n_inputs = draw(st.integers(1, 3))
    inputs = [(draw(st.sampled_from(INPUT_DTYPES)), draw(st.sampled_from(SHAPES))) for _ in range(n_inputs)]
    constants = []
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):  # a Python literal as PyTensor stores it
            constants.append((np.asarray(draw(st.integers(-5, 5)), dtype="int8"), True))
        else:
            dtype, shape = draw(st.sampled_from(INPUT_DTYPES)), draw(st.sampled_from(SHAPES))
            constants.append((draw(hnp.arrays(dtype, shape, elements=_elements(dtype))), False))
    steps = []
    for _ in range(draw(st.integers(1, max_nodes))):
        op = draw(st.sampled_from(OPS + ["Cast"]))
        arity = len(ir.get_schema(op).inputs)
        picks = [draw(st.integers(0, 1000)) for _ in range(arity)]
        attrs = {"to": draw(st.sampled_from(CAST_TARGETS))} if op == "Cast" else {}
        steps.append((op, picks, attrs))
    n_out = draw(st.integers(1, 3))
    outputs = [draw(st.integers(0, 1000)) for _ in range(n_out)]
    arrays = [draw(hnp.arrays(d, s, elements=_elements(d))) for d, s in inputs]
    return inputs, constants, steps, outputs, arrays


def build(recipe) -> tuple[Graph, list[np.ndarray]]:
    """A graph from a recipe: steps whose inputs the op's type rule or dtypes reject are skipped."""
    inputs, constants, steps, outputs, arrays = recipe
    g = Graph("random")
    pool: list[Value] = [g.add_input(TensorType(d, s), f"x{i}") for i, (d, s) in enumerate(inputs)]
    pool += [Value.constant(a) for a, _ in constants]
    b = Builder(g)
    for op, picks, attrs in steps:
        args = [pool[p % len(pool)] for p in picks]
        schema = ir.get_schema(op)
        if op == "Where" and args[0].dtype != "bool":
            continue
        try:
            dtypes = schema.var_dtypes([a.type for a in args])
            out = b.node(op, args, attrs).outputs[0]
        except TypeRuleError:
            continue
        if any(dtypes[v] not in schema.constraints.get(v, {v}) for v in dtypes):
            g.remove(out.producer)
            continue
        pool.append(out)
    produced = [v for v in pool if v.producer is not None] or pool[: len(inputs)]
    g.set_outputs([produced[o % len(produced)] for o in outputs])
    return g, arrays
