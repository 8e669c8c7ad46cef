"""`carried`: a target's copy of the IR with the dtypes it has no tensors of held in wider ones.

The last legalisation, run per lowering target after `legalise` (`onnxruntime_dtypes.CARRIED` is the
per-target table): IREE's ONNX importer has no unsigned tensors, and ptonnx's generator
(`decompositions/random/bits.py`) computes in uint32 and uint64. The copy lowered for IREE
holds both in int64, each in the way that keeps every op exact:

- **uint32 as the same number** (in [0, 2**32)). Add, Sub, Mul, Neg and a left shift (a Mul
  by 2**r) are followed by `And 0xFFFFFFFF`: the low 32 bits of the int64 result are the
  uint32 result's. A right shift is a `TruncDiv` by 2**r (one ONNX Div: the number is never
  negative); Not is a Xor with the mask; a Cast to uint32 is a Cast to int64 and the mask.
  Numbers in [0, 2**32) keep their order, so comparisons, Max, Min, floor division and
  modulo need nothing (`IN_ORDER`).
- **uint64 as the same 64 bits** (two's complement: from 2**63 on, a negative int64). Add,
  Sub, Mul, Neg, Not and left shifts wrap alike; a right shift is an IntDiv by 2**r (an
  arithmetic shift) masked to its low 64 - r bits; a Cast from a signed integer sign-extends
  as NumPy wraps. Order is not kept: comparisons, Max, Min, divisions and Casts to floats of
  uint64 are refused.

Ops that move values (the `layout` trait: Gather, Concat, reshapes) or read their bits
(`BITWISE`: And, Or, Xor, Equal, Where) need nothing for either; bodies are carried inside,
and their node rebuilt by its type rule. Anything else on a carried dtype is refused by name
(`CarryError`), never computed otherwise. The graph's carried inputs and outputs become int64: `Carried` names
their positions, and the runtime converts those arrays (NumPy's `astype`, bit for bit).
"""

from __future__ import annotations

import attrs
import numpy as np

from ptonnx.errors import PassError
from ptonnx.ir import Builder, Graph, Node, Value, format_node, get_schema
from ptonnx.ir.core import bodies
from ptonnx.ir.ranges import Facts, analyse
from ptonnx.ir.types import TensorType
from ptonnx.onnxruntime_dtypes import CARRIED, Carry

#: ops that read their operands' bits or pass values on (with every op of the `layout` trait,
#: which moves them): the same on both carried forms
BITWISE = frozenset({"And", "Or", "Xor", "Equal", "NotEqual", "Where", "Select", "Identity", "Check"})
#: ops that read numbers in order: the same on numbers carried in [0, 2**bits), bits < 64
IN_ORDER = frozenset({
    "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Max", "Min", "ReduceMax", "ReduceMin", "Abs", "IntDiv", "Mod",
})
#: ops that wrap: the low `bits` of the int64 result are the narrow one's
WRAPPING = frozenset({"Add", "Sub", "Mul", "Neg"})


class CarryError(PassError):
    """A computation on a dtype the target lacks that its carrying cannot express."""


@attrs.frozen
class Carried:
    """The target's copy of the graph; the positions of its inputs and outputs now carried."""

    graph: Graph
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


def carried(graph: Graph, target: str) -> Carried:
    """`graph` for `target`: itself where the target lacks no dtype of it, else a copy with
    those dtypes carried (`graph` is left as it was)."""
    table = CARRIED[target]
    if not table or not _touches(graph, table):
        return Carried(graph, (), ())
    copy = _Carrier(table).graph(graph)
    return Carried(copy, tuple(i for i, v in enumerate(graph.inputs) if v.dtype in table),
                   tuple(i for i, v in enumerate(graph.outputs) if v.dtype in table))


def _touches(graph: Graph, table: dict) -> bool:
    if any(v.dtype in table for v in [*graph.inputs, *graph.outputs]):
        return True
    return any(any(v.dtype in table for v in [*n.inputs, *n.outputs]) or any(_touches(b, table) for b in bodies(n))
               for n in graph)


class _Carrier:
    def __init__(self, table: dict[str, Carry]):
        self.table = table
        self._masks: dict[tuple[Graph, int], Value] = {}

    def graph(self, graph: Graph) -> Graph:
        new = Graph(graph.name)
        values: dict[Value, Value] = {v: new.add_input(self._type(v.type), v.name) for v in graph.inputs}
        facts = analyse(graph)
        for node in graph:
            inputs = [self._value(values, v) for v in node.inputs]
            outputs = self._node(new, node, inputs, facts)
            values.update(zip(node.outputs, outputs, strict=True))
        new.set_outputs([self._value(values, v) for v in graph.outputs])
        return new

    def _type(self, t: TensorType) -> TensorType:
        carry = self.table.get(t.dtype)
        return t if carry is None else attrs.evolve(t, dtype=carry.wide)

    def _value(self, values: dict, v: Value) -> Value:
        if v not in values:
            if v.const is None:
                raise CarryError(f"{v!r} is read before it is defined (a ptonnx bug)")
            carry = self.table.get(v.dtype)
            # NumPy's astype: the same number below 2**63, the same 64 bits from there on
            values[v] = Value(v.type, v.name, const=v.const) if carry is None else Value.constant(v.const.astype(carry.wide), v.name)
        return values[v]

    def _node(self, new: Graph, node: Node, inputs: list[Value], facts: Facts) -> list[Value]:
        owned = bodies(node)
        dtypes = {v.dtype for v in [*node.inputs, *node.outputs]} & set(self.table)
        if not dtypes and not any(_touches(b, self.table) for b in owned):  # the node as it was
            outputs = [Value(o.type, o.name) for o in node.outputs]
            new.append(Node(node.op, inputs, outputs, node.attrs, node.name, node.source))
            return outputs
        builder = Builder(new, source=node.source)
        names = [o.name for o in node.outputs]
        if owned:
            attributes = {k: self.graph(v) if isinstance(v, Graph) else v for k, v in node.attrs.items()}
            return list(builder.node(node.op, inputs, attributes, names=names).outputs)
        if node.op == "Cast":
            return [self._cast(builder, node, inputs[0], facts, names[0])]
        bits = min(self.table[d].bits for d in dtypes)
        same = node.op in BITWISE or get_schema(node.op).has("layout")
        if same or (node.op in IN_ORDER and bits < 64) or (node.op in WRAPPING | {"Not"} and bits == 64):
            return list(builder.node(node.op, inputs, node.attrs, names=names).outputs)
        if node.op in WRAPPING:
            return [self._low_bits(builder, builder.op(node.op, *inputs), bits, names[0])]
        if node.op == "Not":
            return [builder.op("Xor", inputs[0], self._mask(new, bits), name=names[0])]
        if node.op == "ShiftLeft":
            factor = Value.constant(np.left_shift(np.int64(1), self._amount(node)), "shift_factor")
            return [self._low_bits(builder, builder.op("Mul", inputs[0], factor), bits, names[0])]
        if node.op == "ShiftRight":
            return [self._shift_right(builder, node, inputs[0], bits, names[0])]
        raise self._refused(node, f"{node.op} has no form that keeps {'/'.join(sorted(dtypes))} exact in int64")

    def _shift_right(self, builder: Builder, node: Node, x: Value, bits: int, name: str | None) -> Value:
        amount = self._amount(node)
        if (amount >= 63).any():
            raise self._refused(node, "a right shift by 63 or more")
        factor = Value.constant(np.left_shift(np.int64(1), amount), "shift_factor")
        if bits < 64:  # the number is never negative: truncation is the shift
            return builder.op("TruncDiv", x, factor, name=name)
        # the bits from 2**63 on make a negative int64: the arithmetic shift, its sign copies cleared
        kept = np.array([(1 << (64 - int(r))) - 1 if r else -1 for r in amount.reshape(-1)], dtype=np.int64).reshape(amount.shape)
        return builder.op("And", builder.op("IntDiv", x, factor), Value.constant(kept, "shift_kept"), name=name)

    def _cast(self, builder: Builder, node: Node, x: Value, facts: Facts, name: str | None) -> Value:
        to, source = node.attrs["to"], node.inputs[0]
        carry = self.table.get(to)
        if carry is None:  # from a carried dtype
            if self.table[source.dtype].bits == 64 and np.dtype(to).kind in "fc":
                raise self._refused(node, f"a Cast of {source.dtype} to {to}: the carried bits from 2**63 on are negative")
            return x if x.dtype == to else builder.op("Cast", x, to=to, name=name)
        if carry.bits == 64 and np.dtype(source.dtype).kind == "f" and not self._below_2_63(facts[source]):
            raise self._refused(node, f"a Cast of {source.dtype} to {to} of a value not known to stay in [0, 2**63)")
        wide = x if x.dtype == carry.wide else builder.op("Cast", x, to=carry.wide)
        return self._low_bits(builder, wide, carry.bits, name)

    @staticmethod
    def _below_2_63(fact) -> bool:
        return fact.lo > -1 and fact.hi < 2.0**63 and not fact.nan

    def _low_bits(self, builder: Builder, wide: Value, bits: int, name: str | None) -> Value:
        return wide if bits == 64 else builder.op("And", wide, self._mask(builder.graph, bits), name=name)

    def _mask(self, graph: Graph, bits: int) -> Value:
        """2**bits - 1, one constant per graph."""
        if (graph, bits) not in self._masks:
            self._masks[graph, bits] = Value.constant(np.int64((1 << bits) - 1), f"low_{bits}_bits")
        return self._masks[graph, bits]

    def _amount(self, node: Node) -> np.ndarray:
        amount = node.inputs[1].const
        if amount is None:
            raise self._refused(node, "a shift by an amount known only at run time")
        return amount.astype(np.int64)

    def _refused(self, node: Node, why: str) -> CarryError:
        dtypes = sorted({v.dtype for v in [*node.inputs, *node.outputs]} & set(self.table))
        reasons = "; ".join(f"{d}: {self.table[d].why}" for d in dtypes)
        return CarryError(f"{format_node(node)}: {why}. The target has no {'/'.join(dtypes)} tensors ({reasons})")
