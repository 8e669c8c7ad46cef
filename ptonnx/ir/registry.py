"""The op registry: for each IR op, its schema, type rule and numpy semantics.

An op's schema names a type variable per input and output (like ONNX's `T`):
inputs sharing a variable must end up with one dtype. A variable's allowed
dtypes are the ONNX-valid ones; before `unify_dtypes` runs, the inputs of a
variable may still differ (`x * 2` is float32 * int8), and the type rule
promotes them the way PyTensor does. `is_unified(node)` tells whether the
node is ready to lower.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ptonnx.errors import IRError, TypeRuleError
from ptonnx.ir.types import ALL_DTYPES, TensorType, promote

#: type_rule(input types, attrs) -> output types
TypeRule = Callable[[Sequence[TensorType], Mapping[str, Any]], list[TensorType]]
#: semantics(*input arrays, **attrs) -> output array, or tuple of arrays
Semantics = Callable[..., Any]


@attrs.frozen
class OpSchema:
    """Everything the compiler knows about one IR op."""

    name: str
    #: type variable of each input (a dtype name means "exactly this dtype")
    inputs: tuple[str, ...]
    #: type variable of each output
    outputs: tuple[str, ...]
    #: allowed dtypes per type variable
    constraints: Mapping[str, frozenset[str]]
    type_rule: TypeRule
    semantics: Semantics
    #: attribute name -> (python type, default); `attrs.NOTHING` = required
    attributes: Mapping[str, tuple[type, Any]] = attrs.field(factory=dict)
    #: a short family name, used by docs and test strategies
    family: str = "misc"
    #: pure ops with constant inputs may be folded
    foldable: bool = True
    #: the op only moves data around; weak (literal) constants stay weak through it
    layout_only: bool = False
    doc: str = ""

    def vars_of_inputs(self, n: int) -> tuple[str, ...]:
        if len(self.inputs) != n:
            raise TypeRuleError(f"{self.name} takes {len(self.inputs)} inputs, got {n}")
        return self.inputs

    def resolve_attrs(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Attributes with defaults filled in; raise on unknown or missing ones."""
        unknown = set(given) - set(self.attributes)
        if unknown:
            raise TypeRuleError(
                f"{self.name} has no attribute(s) {sorted(unknown)}; it takes {sorted(self.attributes)}"
            )
        out = {}
        for key, (kind, default) in self.attributes.items():
            if key in given:
                out[key] = given[key]
            elif default is attrs.NOTHING:
                raise TypeRuleError(f"{self.name} needs attribute {key!r}")
            else:
                out[key] = default
        return out

    def var_dtypes(self, input_types: Sequence[TensorType]) -> dict[str, str]:
        """The promoted dtype each type variable gets from the given inputs."""
        groups: dict[str, list[str]] = {}
        for var, t in zip(self.vars_of_inputs(len(input_types)), input_types):
            groups.setdefault(var, []).append(t.dtype)
        return {var: promote(*dts) for var, dts in groups.items()}


_REGISTRY: dict[str, OpSchema] = {}


def register(schema: OpSchema) -> OpSchema:
    if schema.name in _REGISTRY:
        raise IRError(f"op {schema.name!r} is registered twice")
    for var in set(schema.inputs) | set(schema.outputs):
        if var not in schema.constraints and var not in ALL_DTYPES:
            raise IRError(f"{schema.name}: type variable {var!r} has no constraint")
    _REGISTRY[schema.name] = schema
    return schema


def get_schema(op: str) -> OpSchema:
    try:
        return _REGISTRY[op]
    except KeyError:
        raise IRError(
            f"unknown IR op {op!r}; registered ops: {', '.join(sorted(_REGISTRY))}"
        ) from None


def has_op(op: str) -> bool:
    return op in _REGISTRY


def all_schemas() -> dict[str, OpSchema]:
    return dict(_REGISTRY)


def infer_types(op: str, input_types: Sequence[TensorType], attributes: Mapping[str, Any]) -> list[TensorType]:
    """Output types of `op` applied to inputs of these types (raises TypeRuleError)."""
    schema = get_schema(op)
    schema.vars_of_inputs(len(input_types))
    return schema.type_rule(input_types, schema.resolve_attrs(attributes))


def target_dtypes(node) -> dict[str, str]:
    """The dtype each type variable of `node` must have once unified.

    A variable bound to an output takes that output's dtype (what PyTensor
    chose); one only on inputs takes the promoted dtype of those inputs; a
    literal dtype name is itself.
    """
    schema = get_schema(node.op)
    targets = schema.var_dtypes([v.type for v in node.inputs])
    for var, out in zip(schema.outputs, node.outputs):
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
        for i, (var, v) in enumerate(zip(schema.vars_of_inputs(len(node.inputs)), node.inputs))
        if v.dtype != targets[var]
    ]


def disallowed_dtypes(node) -> list[tuple[str, str, frozenset]]:
    """(type variable, dtype, allowed dtypes) for each variable ONNX does not allow in that dtype."""
    schema = get_schema(node.op)
    return [
        (var, dtype, schema.constraints.get(var, frozenset({var})))
        for var, dtype in target_dtypes(node).items()
        if dtype not in schema.constraints.get(var, frozenset({var}))
    ]


def unification_problems(node) -> list[str]:
    """Why `node` cannot be lowered as is: mixed or disallowed input/output dtypes."""
    schema = get_schema(node.op)
    var_of = schema.vars_of_inputs(len(node.inputs))
    problems = [f"input {i} is {dtype}, but {var_of[i]} is {target}" for i, dtype, target in mixed_inputs(node)]
    problems += [f"{var}={dtype} is not one of {sorted(allowed)}" for var, dtype, allowed in disallowed_dtypes(node)]
    return problems


def evaluate(node_op: str, arrays: Sequence[np.ndarray], attributes: Mapping[str, Any]) -> tuple[np.ndarray, ...]:
    """Run the numpy reference semantics of an op; always returns a tuple."""
    schema = get_schema(node_op)
    result = schema.semantics(*arrays, **schema.resolve_attrs(attributes))
    if not isinstance(result, tuple):
        result = (result,)
    return tuple(np.asarray(r) for r in result)
