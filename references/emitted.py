"""Which (ONNX op, dtype) pairs ptonnx emits, derived from the compiler itself.

For every IR op of the elementwise/shape/tensor families and every dtype,
`emitted_pairs` builds a one-node IR graph, compiles it through `ptonnx.stages` (`unify_dtypes` as the passes)
and reads each emitted ONNX node's dtypes (after ONNX shape inference). So
the answer follows lowering as it changes: a new expansion shows up as new
pairs, a workaround as pairs that are gone.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import attrs
import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

from ptonnx import ir, stages
from ptonnx.errors import PtonnxError
from ptonnx.ir.types import ALL_DTYPES

FAMILIES = ("elementwise", "shape", "tensor")
#: families whose ops are enumerated only for the elementwise ONNX ops they emit (SiLU's
#: Sigmoid and Mul); their own CNN ops (Conv, pools, Resize) are not probed
ELEMENTWISE_ONLY_FAMILIES = ("nn", "fused")
CNN_SHAPE = (1, 2, 3, 3)
#: attributes that only lay data out; every other attribute changes what an op computes
LAYOUT_ATTRIBUTES = frozenset({"perm", "axis", "axes", "allowzero", "split", "to"})
#: ONNX ops whose first input is not the one that names the pair's dtype
DTYPE_INPUT = {"Where": 1}

#: IR ops that need attributes or shapes: (input shapes, attributes) cases; others get 1-D inputs
CASES: dict[str, list[tuple[list[tuple], dict]]] = {
    "Transpose": [([(2, 3)], {"perm": (1, 0)})],
    "Unsqueeze": [([(3,)], {"axes": (0,)})],
    "Squeeze": [([(1, 3)], {"axes": (0,)})],
    "Concat": [([(2, 3), (1, 3)], {"axis": 0})],
    "Split": [([(5,), np.array([2, 3])], {"axis": 0, "num_outputs": 2})],
    "Softmax": [([(2, 3)], {"axis": 1})],
    "MatMul": [([(2, 3), (3, 4)], {}), ([(2, 3), (3,)], {}), ([(3,), (3, 2)], {})],
    "Reshape": [([(2, 3), np.array([3, 2])], {})],
    "Expand": [([(1, 3), np.array([2, 3])], {})],
    "FusedConv": [([CNN_SHAPE, (2, 2, 1, 1), (2,)], {"activation": "silu"})],
}
ELEMENTWISE_SHAPE = (4,)


@attrs.frozen
class Pair:
    """One ONNX node as ptonnx emits it, reduced to what the probe needs."""

    op: str  # op type, plus the attributes that change what it computes: "Mod(fmod=1)"
    dtype: str  # the computing dtype; "float64->float16" for Cast
    op_type: str
    attributes: tuple  # ((name, value), ...) of the emitted node
    in_dtypes: tuple[str, ...]
    out_dtypes: tuple[str, ...]
    in_shapes: tuple  # static shapes from the one-node graph, None where unknown
    #: input index -> array, for inputs that are not data (axes, shapes, split sizes)
    consts: tuple = ()

    @property
    def key(self) -> tuple[str, str]:
        return (self.op, self.dtype)


@attrs.define
class Enumeration:
    pairs: dict[tuple[str, str], Pair]
    #: pair key -> the IR ops (with dtypes) whose lowering emits it
    origins: dict[tuple[str, str], set[str]]
    #: pair key -> every tuple of input shapes it was emitted with
    shapes: dict[tuple[str, str], set[tuple]]
    #: (IR op, dtype, reason) for dtypes the op allows but lowering refuses
    refused: list[tuple[str, str, str]]
    #: (IR op, reason) for ops no case could build
    not_enumerated: list[tuple[str, str]]


def schema_defaults(op_type: str) -> dict:
    """The opset-18 default of each attribute of `op_type` that has one."""
    schema = onnx.defs.get_schema(op_type, 18)
    return {k: _attr_value(a.default_value) for k, a in schema.attributes.items() if a.default_value.type}


def op_label(op_type: str, attributes: Iterable[tuple[str, object]]) -> str:
    """`op_type` with the attributes (defaults filled in) that change what it computes."""
    given = {**schema_defaults(op_type), **dict(attributes)}
    semantic = [(k, v) for k, v in sorted(given.items()) if k not in LAYOUT_ATTRIBUTES]
    if not semantic:
        return op_type
    return f"{op_type}({', '.join(f'{k}={v}' for k, v in semantic)})"


def dtype_label(op_type: str, in_dtypes, out_dtypes) -> str:
    if op_type in ("Cast", "CastLike"):
        return f"{in_dtypes[0]}->{out_dtypes[0]}"
    return in_dtypes[DTYPE_INPUT.get(op_type, 0)]


def is_data_input(op_type: str, index: int) -> bool:
    """An input typed by a type parameter is data; one of a fixed type (axes, shape) is not."""
    schema = onnx.defs.get_schema(op_type, 18)
    formal = schema.inputs[min(index, len(schema.inputs) - 1)]
    return not formal.type_str.startswith("tensor(")


def _attr_value(a: onnx.AttributeProto):
    value = helper.get_attribute_value(a)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return tuple(value)
    return value


def pairs_of_model(model: onnx.ModelProto) -> list[Pair]:
    """Every node of `model` as a Pair (dtypes and shapes from ONNX shape inference)."""
    inferred = shape_inference.infer_shapes(model)
    g = inferred.graph
    types: dict[str, tuple[str, tuple | None]] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        tt = vi.type.tensor_type
        shape = tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim) if tt.HasField("shape") else None
        types[vi.name] = (np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type)).name, shape)
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for name, arr in inits.items():
        types[name] = (arr.dtype.name, arr.shape)
    pairs = []
    for node in g.node:
        attributes = tuple((a.name, _attr_value(a)) for a in node.attribute)
        ins = [types[n] for n in node.input]
        outs = [types[n] for n in node.output]
        in_dtypes = tuple(t[0] for t in ins)
        out_dtypes = tuple(t[0] for t in outs)
        consts = tuple(
            (i, inits[n]) for i, n in enumerate(node.input) if n in inits and not is_data_input(node.op_type, i)
        )
        pairs.append(
            Pair(
                op_label(node.op_type, attributes), dtype_label(node.op_type, in_dtypes, out_dtypes),
                node.op_type, attributes, in_dtypes, out_dtypes, tuple(t[1] for t in ins), consts,
            )
        )
    return pairs


def _cases(schema: ir.OpSchema):
    """(input dtypes, shapes, attributes) for every dtype assignment of the op's type variables."""
    shapes_attrs = CASES.get(schema.name)
    if shapes_attrs is None:
        shape = CNN_SHAPE if schema.family in ELEMENTWISE_ONLY_FAMILIES else ELEMENTWISE_SHAPE
        shapes_attrs = [([shape] * len(schema.inputs), {})]
    variables = [v for v in dict.fromkeys(schema.input_vars) if v not in ALL_DTYPES]
    for shapes, attributes in shapes_attrs:
        n_inputs = len(shapes)
        var_of = schema.vars_of_inputs(n_inputs)
        for combo in itertools.product(sorted(ALL_DTYPES), repeat=len(variables)):
            chosen = dict(zip(variables, combo, strict=True))
            dtypes = [chosen.get(v, v) for v in var_of]
            if schema.name == "Cast":
                for to in sorted(ALL_DTYPES):
                    yield dtypes, shapes, {**attributes, "to": to}
            else:
                yield dtypes, shapes, attributes


def _allowed(schema: ir.OpSchema, dtypes, attributes) -> bool:
    var_of = schema.vars_of_inputs(len(dtypes))
    ok = all(d in schema.constraints.get(v, {v}) for v, d in zip(var_of, dtypes, strict=True))
    return ok and ("to" not in attributes or attributes["to"] in schema.constraints.get("T2", ALL_DTYPES))


def emitted_pairs(elementwise_ops: frozenset[str] = frozenset()) -> Enumeration:
    """The pairs lowering emits for the FAMILIES' ops, and the pairs of `elementwise_ops`
    (ONNX op types) it emits for the ELEMENTWISE_ONLY_FAMILIES' ops."""
    result = Enumeration({}, {}, {}, [], [])
    for name, schema in sorted(ir.all_schemas().items()):
        secondary = schema.family in ELEMENTWISE_ONLY_FAMILIES
        if schema.family not in FAMILIES and not secondary:
            continue
        built = 0
        last_error = ""
        for dtypes, shapes, attributes in _cases(schema):
            g = ir.Graph(f"{name}_probe")
            inputs = [  # an array among the shapes is a constant input (a shape, sizes)
                ir.Value.constant(s.astype(d)) if isinstance(s, np.ndarray) else g.add_input(ir.TensorType(d, s), f"x{i}")
                for i, (d, s) in enumerate(zip(dtypes, shapes, strict=True))
            ]
            try:
                node = ir.Builder(g).node(name, inputs, attributes)
                g.set_outputs(node.outputs)
                model = stages.compile_graph(g).model  # as ptonnx.compile compiles a lifted graph
            except PtonnxError as exc:
                last_error = str(exc).splitlines()[-1].strip()
                if _allowed(schema, dtypes, attributes) and not secondary:
                    result.refused.append((name, "/".join(dtypes), last_error))
                continue
            built += 1
            origin = f"{name} {'/'.join(dict.fromkeys(dtypes))}" + (f"->{attributes['to']}" if "to" in attributes else "")
            for pair in pairs_of_model(model):
                if secondary and pair.op_type not in elementwise_ops:
                    continue
                result.pairs.setdefault(pair.key, pair)
                result.origins.setdefault(pair.key, set()).add(origin)
                result.shapes.setdefault(pair.key, set()).add(pair.in_shapes)
        if not built and not secondary:
            result.not_enumerated.append((name, last_error))
    return result


def pair_from_label(op: str, dtype: str, shape: tuple = ELEMENTWISE_SHAPE) -> Pair:
    """The Pair a label names (`"Mod(fmod=1)"`, `"int16"`; `"float64->float16"` for Cast):
    for recorded quirks whose pair lowering no longer emits. Variadic inputs count twice."""
    op_type, _, rest = op.partition("(")
    attributes = {}
    for item in filter(None, rest.rstrip(")").split(", ")):
        k, _, v = item.partition("=")
        attributes[k] = int(v) if v.lstrip("-").isdigit() else v
    schema = onnx.defs.get_schema(op_type, 18)
    bool_only = {c.type_param_str for c in schema.type_constraints if list(c.allowed_type_strs) == ["tensor(bool)"]}
    if "->" in dtype:
        src, dst = dtype.split("->")
        attributes["to"] = helper.np_dtype_to_tensor_dtype(np.dtype(dst))
        in_dtypes, out_dtypes = (src,), (dst,)
    else:
        formals = [f for f in schema.inputs if f.option != f.option.Optional]
        if len(formals) == 1 and formals[0].option == formals[0].option.Variadic:
            formals = formals * 2
        in_dtypes = tuple("bool" if f.type_str in bool_only else dtype for f in formals)
        out_dtypes = tuple("bool" if o.type_str in bool_only else dtype for o in schema.outputs[:1])
    return Pair(op, dtype, op_type, tuple(sorted(attributes.items())), in_dtypes, out_dtypes, (shape,) * len(in_dtypes))
