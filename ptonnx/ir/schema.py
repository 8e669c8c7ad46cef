"""How an IR op is declared: one keyword-only form, `define(...)`.

```
define(
    "Reshape",
    inputs=("data: T", "shape: int64"),     # "name: var"; "name?: var" may be left off (trailing, as ONNX's);
                                           # "*name: var" takes one or more, "*name?: var" any number
    outputs=("out: T",),
    dtypes={"T": ALL_DTYPES},              # what each type variable may be (like ONNX's `T`)
    reads=("shape",),                      # inputs whose known contents the type rule sees
    traits=("layout",),
    contents=dims.reshape_contents,        # what is known of the output's elements (ptonnx.ir.dims)
    type_rule=..., semantics=..., family="shape", doc="...",
)
```

A type variable names which inputs and outputs share a dtype; a dtype name as
the variable means exactly that dtype; `each` on a variadic port gives every
value there a variable of its own (any dtype: a loop's state of mixed dtypes). Ranks are static in the IR (as in
PyTensor), so what decides a rank (axes, perm) is an attribute; what is a size
or a bound (shapes, split sizes, slice bounds, pads) is an int64 input, as in
opset 18, so values computed at run time can reach it. A type rule gets the
known contents of the inputs in `reads` (see `ptonnx.ir.dims`) among its
attributes, under the input's name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ptonnx.errors import IRError, TypeRuleError
from ptonnx.ir.types import ALL_DTYPES, TensorType, promote

#: type_rule(input types, attributes and read contents) -> output types
TypeRule = Callable[[Sequence[TensorType], Mapping[str, Any]], list[TensorType]]
#: semantics(*input arrays, **attributes) -> output array, or tuple of arrays
Semantics = Callable[..., Any]
REQUIRED = attrs.NOTHING
#: the type variable of a variadic port whose values each have their own (`"*state: each"`)
EACH = "each"

#: the traits an op may have, and what reads each
TRAITS = {
    "elementwise": "each element of its result is computed from the operands' elements at the same place (broadcast "
                   "NumPy's way) alone: read by passes/vectorise_loops.py (a per-trip computation over a sequence is the "
                   "same ops over the whole sequence)",
    "batchable": "given its first input with one more leading axis (its other inputs as they are) and its `axis` or "
                 "`axes` attribute one higher, it computes the same for each index of that axis: read by "
                 "passes/vectorise_loops.py",
    "layout": "moves or reinterprets data without arithmetic: read by onnxruntime_dtypes.node_rules (legalise never widens it)",
    "no_fold": "constant folding leaves it alone (too costly in NumPy): read by passes/constant_folding.py, passes/decompose.py and lifting/context.py",
    "nan_in_nan_out": "a NaN operand gives a NaN (float) result, in the IR's semantics and so on every target: "
                      "read by ir/nan_flow.py and ir/ranges.py",
    "nan_compares_false": "a comparison that is false when an operand is NaN: read by ir/nan_flow.py, ir/ranges.py and "
                          "passes/range_facts.py",
    "nan_compares_true": "a bool result that is true when an operand is NaN (IsNaN, NotEqual): read by ir/nan_flow.py "
                         "and ir/ranges.py",
    "selects": "its first (bool) operand picks, element by element, which of the others is its result (Where, "
               "Select): read by ir/nan_flow.py",
    "copies": "each element of its result is a copy of an element of its inputs, picked by its attributes, shapes "
              "and indices alone (no arithmetic): read by ir/ranges.py (bounds kept, places not) and "
              "lifting/idioms.py (the same copying of one input commutes with an elementwise op)",
    "mixes": "each element of its result reads a whole slice of its input (a NaN anywhere in the slice may reach "
             "every element of it): read by ir/ranges.py",
    "shape_only": "its result depends on its input's shape alone, never on its elements: read by ir/ranges.py",
    "commutative": "its two operands may be swapped, the result the same to the bit: read by passes/cse.py",
    "idempotent": "x op x is x, NaN and the sign of zero included: read by passes/cse.py",
    "reduces_axes": "a reduction over the axes its `axes` attribute names (`keepdims` keeps them as 1s): read by "
                    "passes/layout.py (a reduction of a transpose reduces the permuted axes)",
    "effect": "may raise at run time: it runs only where the program reaches it (never hoisted out of a loop or "
              "speculated): read by passes/hoist_loop_invariants.py",
    "never_negative_zero": "its float result is never -0.0: read by lowering/elementwise.py (Where keeps zero signs)",
    "wraps": "on integers, the result modulo 2**bits depends only on the operands modulo 2**bits: "
             "read by onnxruntime_dtypes.py (computed in a wider integer dtype where ONNX lacks the dtype)",
}


@attrs.frozen
class Port:
    """One declared input or output: its name, type variable, and whether it repeats."""

    name: str
    var: str
    variadic: bool = False
    #: a variadic port that may also take none (`"*name?: var"`: a loop with no state), or a
    #: trailing port that may be left off (`"name?: var"`: a Conv without bias, as ONNX's)
    optional: bool = False

    @classmethod
    def parse(cls, spec: str) -> Port:
        name, sep, var = (s.strip() for s in spec.partition(":"))
        if not sep or not name or not var:
            raise IRError(f"port {spec!r} must read 'name: TypeVar' (or '*name: TypeVar' for one or more)")
        variadic = name.startswith("*")
        optional = name.endswith("?")
        return cls(name.lstrip("*").rstrip("?"), var, variadic, optional)


@functools.lru_cache(maxsize=4096)
def _expand(op: str, ports: tuple[Port, ...], n: int, what: str) -> tuple[str, ...]:
    """The type variable of each of `n` actual inputs/outputs (cached: every pass and the
    lowering ask it of every node, several times)."""
    fixed = [p for p in ports if not p.variadic]
    if not any(p.variadic for p in ports):
        required = sum(not p.optional for p in ports)
        if not required <= n <= len(ports):
            span = f"{len(ports)}" if required == len(ports) else f"{required} to {len(ports)}"
            raise TypeRuleError(f"{op} takes {span} {what}, got {n}")
        return tuple(p.var for p in ports[:n])
    least = len(fixed) + (0 if any(p.optional for p in ports) else 1)
    if n < least:
        raise TypeRuleError(f"{op} takes at least {least} {what}, got {n}")
    out: list[str] = []
    for p in ports:
        count = n - len(fixed) if p.variadic else 1
        out += [f"{p.name}[{k}]" for k in range(count)] if p.var == EACH else [p.var] * count
    return tuple(out)


@attrs.frozen(kw_only=True)
class OpSchema:
    """Everything the compiler knows about one IR op. Build it with `define`."""

    name: str
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    #: allowed dtypes per type variable
    constraints: Mapping[str, frozenset[str]]
    type_rule: TypeRule
    semantics: Semantics
    #: attribute name -> (python type, default); `REQUIRED` = no default
    attributes: Mapping[str, tuple[type, Any]] = attrs.field(factory=dict)
    #: inputs whose known contents the type rule reads
    reads: tuple[str, ...] = ()
    traits: frozenset[str] = frozenset()
    #: contents(node, known contents of its inputs) -> known contents of its output: how a
    #: shape computed in the graph stays known (read by `ptonnx.ir.dims.contents`)
    contents: Callable | None = None
    #: ranges(node, facts of its inputs) -> the Fact of its output: bounds and NaN-ness of its
    #: elements (`ptonnx.ir.range_rules`, read by `ptonnx.ir.ranges.analyse`); None: not modelled
    ranges: Callable | None = None
    #: per input, what its zero sign does to the result: "blind" (-0.0 and +0.0 there give one
    #: result), "passes" (the results differ at most in their own zero sign), "" (it may tell them
    #: apart; inputs past the tuple too); read by `lowering/elementwise.zero_sign_unread`
    zero_sign: tuple[str, ...] = ()
    #: a short family name: docs, test strategies and the op table (docs/supported.md) group by it
    family: str
    doc: str

    @property
    def input_vars(self) -> tuple[str, ...]:
        """The type variable of each declared input (a variadic one once)."""
        return tuple(p.var for p in self.inputs)

    @property
    def output_vars(self) -> tuple[str, ...]:
        return tuple(p.var for p in self.outputs)

    def vars_of_inputs(self, n: int) -> tuple[str, ...]:
        return _expand(self.name, self.inputs, n, "inputs")

    def vars_of_outputs(self, n: int) -> tuple[str, ...]:
        return _expand(self.name, self.outputs, n, "outputs")

    def resolve_attrs(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Attributes with defaults filled in; raise on unknown or missing ones."""
        unknown = set(given) - set(self.attributes)
        if unknown:
            raise TypeRuleError(
                f"{self.name} has no attribute(s) {sorted(unknown)}; it takes {sorted(self.attributes)}"
            )
        out = {}
        for key, (_, default) in self.attributes.items():
            if key in given:
                out[key] = given[key]
            elif default is REQUIRED:
                raise TypeRuleError(f"{self.name} needs attribute {key!r}")
            else:
                out[key] = default
        return out

    def var_dtypes(self, input_types: Sequence[TensorType]) -> dict[str, str]:
        """The promoted dtype each type variable gets from the given inputs."""
        groups: dict[str, list[str]] = {}
        for var, t in zip(self.vars_of_inputs(len(input_types)), input_types, strict=True):
            groups.setdefault(var, []).append(t.dtype)
        return {var: promote(*dts) for var, dts in groups.items()}

    def allowed(self, var: str) -> frozenset[str]:
        """The dtypes type variable `var` may be (a dtype name is itself; an `each` variable any)."""
        if var in self.constraints:
            return self.constraints[var]
        return ALL_DTYPES if "[" in var else frozenset({var})

    def has(self, trait: str) -> bool:
        return trait in self.traits


def define(
    name: str,
    *,
    inputs: Sequence[str],
    outputs: Sequence[str],
    dtypes: Mapping[str, frozenset[str]],
    type_rule: TypeRule,
    semantics: Semantics,
    family: str,
    doc: str,
    attributes: Mapping[str, tuple[type, Any]] | None = None,
    reads: Sequence[str] = (),
    traits: Sequence[str] = (),
    contents: Callable | None = None,
    ranges: Callable | None = None,
    zero_sign: Sequence[str] = (),
) -> OpSchema:
    """Declare and register an IR op (the only way ops come to exist)."""
    in_ports = tuple(Port.parse(s) for s in inputs)
    out_ports = tuple(Port.parse(s) for s in outputs)
    attributes = dict(attributes or {})
    for ports, what in ((in_ports, "inputs"), (out_ports, "outputs")):
        if sum(p.variadic for p in ports) > 1:
            raise IRError(f"{name}: at most one variadic port among its {what}")
        if any(p.var == EACH and not p.variadic for p in ports):
            raise IRError(f"{name}: `{EACH}` is for variadic ports only")
        single = [p.optional for p in ports if not p.variadic]
        if any(single) and (any(p.variadic for p in ports) or single != sorted(single)):
            raise IRError(f"{name}: optional ports ('name?') come last, in an op without a variadic port")
    for var in {p.var for p in in_ports + out_ports}:
        if var not in dtypes and var not in ALL_DTYPES and var != EACH:
            raise IRError(f"{name}: type variable {var!r} has no entry in `dtypes`")
    names = {p.name for p in in_ports}
    for r in reads:
        if r not in names or r in attributes:
            raise IRError(f"{name}: reads {r!r}, which must be an input name and not an attribute")
    if not set(zero_sign) <= {"blind", "passes", ""} or len(zero_sign) > len(in_ports):
        raise IRError(f"{name}: zero_sign names one of 'blind', 'passes', '' per input, got {zero_sign!r}")
    unknown = set(traits) - set(TRAITS)
    if unknown:
        raise IRError(f"{name}: unknown trait(s) {sorted(unknown)}; traits are {sorted(TRAITS)}")
    return register(
        OpSchema(
            name=name,
            inputs=in_ports,
            outputs=out_ports,
            constraints={v: frozenset(d) for v, d in dtypes.items()},
            type_rule=type_rule,
            semantics=semantics,
            attributes=attributes,
            reads=tuple(reads),
            traits=frozenset(traits),
            contents=contents,
            ranges=ranges,
            zero_sign=tuple(zero_sign),
            family=family,
            doc=doc,
        )
    )


_REGISTRY: dict[str, OpSchema] = {}


def register(schema: OpSchema) -> OpSchema:
    """Add a schema (use `ptonnx.ir.schema.define`, which checks the declaration first)."""
    if schema.name in _REGISTRY:
        raise IRError(f"op {schema.name!r} is registered twice")
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
