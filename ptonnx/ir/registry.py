"""The op registry: for each IR op, its schema, type rule and numpy semantics.

An op's schema names a type variable per input and output (like ONNX's `T`):
inputs sharing a variable must end up with one dtype. A variable's allowed
dtypes are the ONNX-valid ones; before `unify_dtypes` runs, the inputs of a
variable may still differ (`x * 2` is float32 * int8), and the type rule
promotes them the way PyTensor does (`mixed_inputs`, `disallowed_dtypes`: what
still keeps a node from lowering). The schemas themselves are kept by
`ptonnx.ir.schema` (`define` registers each), read here by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.ir.dims import contents
from ptonnx.ir.schema import OpSchema, all_schemas, get_schema, has_op, register  # noqa: F401  (the registry's API)
from ptonnx.ir.types import ALL_DTYPES, TensorType

def infer_types(op: str, inputs: Sequence, attributes: Mapping[str, Any]) -> list[TensorType]:
    """Output types of `op` applied to `inputs` (IR values, or bare types whose contents
    are unknown); raises TypeRuleError. Inputs the op `reads` are passed to the type
    rule as their known contents (`ptonnx.ir.dims.contents`), under their port names."""
    schema = get_schema(op)
    schema.vars_of_inputs(len(inputs))
    resolved = schema.resolve_attrs(attributes)
    types = [v if isinstance(v, TensorType) else v.type for v in inputs]
    if schema.reads:
        positions = {p.name: i for i, p in enumerate(schema.inputs)}
        for port in schema.reads:
            v = inputs[positions[port]]
            resolved[port] = None if isinstance(v, TensorType) else contents(v)
    return schema.type_rule(types, resolved)


def target_dtypes(node) -> dict[str, str]:
    """The dtype each type variable of `node` must have once unified.

    A variable bound to an output takes that output's dtype (what PyTensor
    chose); one only on inputs takes the promoted dtype of those inputs; a
    literal dtype name is itself.
    """
    schema = get_schema(node.op)
    targets = schema.var_dtypes([v.type for v in node.inputs])
    for var, out in zip(schema.vars_of_outputs(len(node.outputs)), node.outputs, strict=True):
        if var not in ALL_DTYPES:
            targets[var] = out.dtype
    for var in schema.vars_of_inputs(len(node.inputs)):
        if var in ALL_DTYPES:
            targets[var] = var
    return targets


def mixed_inputs(node) -> list[tuple[int, str, str]]:
    """(input index, its dtype, the dtype its type variable needs) for each input out of line."""
    schema = get_schema(node.op)
    targets = target_dtypes(node)
    return [
        (i, v.dtype, targets[var])
        for i, (var, v) in enumerate(zip(schema.vars_of_inputs(len(node.inputs)), node.inputs, strict=True))
        if v.dtype != targets[var]
    ]


def disallowed_dtypes(node) -> list[tuple[str, str, frozenset]]:
    """(type variable, dtype, allowed dtypes) for each variable ONNX does not allow in that dtype."""
    schema = get_schema(node.op)
    return [
        (var, dtype, schema.allowed(var))
        for var, dtype in target_dtypes(node).items()
        if dtype not in schema.allowed(var)
    ]


def evaluate(node_op: str, arrays: Sequence[np.ndarray], attributes: Mapping[str, Any]) -> tuple[np.ndarray, ...]:
    """Run the numpy reference semantics of an op; always returns a tuple."""
    schema = get_schema(node_op)
    result = schema.semantics(*arrays, **schema.resolve_attrs(attributes))
    if not isinstance(result, tuple):
        result = (result,)
    return tuple(np.asarray(r) for r in result)
