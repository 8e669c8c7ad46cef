"""State of one lowering: ONNX names, emitted nodes and initializers."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import helper

from ptonnx.errors import LoweringError
from ptonnx.ir import Value


#: the runtimes lowering knows: each reads the default form, except where an emitter says
TARGETS = ("onnxruntime", "iree")
#: the doc string of a declaration a consumer keeps over a more static type it infers (IREE's
#: importer needs a Loop's carried values typed exactly as the body: `iree_runtime.compile_model`)
KEPT_TYPE = "ptonnx: declared type kept"


def kept(infos) -> list[onnx.ValueInfoProto]:
    """`infos`, marked as declarations to keep (`KEPT_TYPE`)."""
    infos = list(infos)
    for info in infos:
        info.doc_string = KEPT_TYPE
    return infos


def onnx_dtype(dtype: str) -> int:
    try:
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    except (KeyError, TypeError):
        raise LoweringError(f"dtype {dtype} has no ONNX equivalent") from None


class LowerContext:
    """Emits ONNX nodes for IR nodes; hands out unique, readable names."""

    def __init__(self, target: str = "onnxruntime"):
        #: the runtime the model is lowered for (`TARGETS`): an emitter may choose its form by it
        self.target = target
        self.nodes: list[onnx.NodeProto] = []
        #: (name, array) of each initializer: the model's TensorProtos are filled once, at the end
        self.initializers: list[tuple[str, np.ndarray]] = []
        self._names: dict[Value, str] = {}
        #: name -> the IR values `bind` gave it (more than one where an emitter gave a value's name again)
        self._bound: dict[str, list[Value]] = {}
        self._taken: set[str] = set()
        self._counters: dict[str, int] = {}
        self._small_consts: dict[tuple, str] = {}
        self._produced: set[str] = set()
        #: output name -> the op type of the node that writes it
        self._op_of: dict[str, str] = {}
        #: node name -> what a failed run-time check there means (written to the model's metadata)
        self.checks: dict[str, dict[str, str]] = {}
        #: (op type, inputs, output count, attributes) -> the outputs of the node already emitted
        self._emitted: dict[tuple, list[str]] = {}
        #: the first output of each node in `_emitted` -> its key there
        self._key_of: dict[str, tuple] = {}
        #: output name -> (index in `nodes`, node) of each node `emit` made (`settle` renames them)
        self._writer: dict[str, tuple[int, onnx.NodeProto]] = {}
        #: target "iree": (check node name, int64 failure flag) of each check of this graph, its
        #: bodies' carried out (`lowering/check.py`); the model reports them as outputs
        self.flags: list[tuple[str, str]] = []
        #: declarations of values whose type shape inference cannot find (a Loop's buffers)
        self.infos: list[onnx.ValueInfoProto] = []
        #: constants as Constant nodes of this graph, not initializers (a body lowered for IREE)
        self._constant_nodes = False
        #: name -> array of each constant `const` made (`constant_value`)
        self._values: dict[str, np.ndarray] = {}
        #: float sums whose +0.0 (NumPy's sign of a sum of -0.0s) the one Add reading each adds
        self.owed_plus_zero: set[str] = set()

    def child(self) -> LowerContext:
        """A context for a body graph: its own nodes and value names, but one namespace and
        one set of initializers with this one (a body reads them from the outer scope)."""
        body = LowerContext(self.target)
        body.initializers, body._taken, body._counters = self.initializers, self._taken, self._counters
        body.checks = self.checks
        if self.target == "iree":
            # ONNX's shape inference does not read outer initializers' values inside a body (an
            # Unsqueeze's axes), and IREE's importer reads a value of unknown rank as a scalar
            body._constant_nodes = True
        else:
            body._small_consts = self._small_consts
        return body

    def unique(self, hint: str) -> str:
        hint = hint or "v"
        if hint not in self._taken:
            self._taken.add(hint)
            return hint
        n = self._counters.get(hint, 0)
        while True:
            n += 1
            name = f"{hint}_{n}"
            if name not in self._taken:
                self._counters[hint] = n
                self._taken.add(name)
                return name

    def name_of(self, value: Value, hint: str | None = None) -> str:
        """The ONNX name of an IR value (constants become initializers on first use)."""
        name = self._names.get(value)
        if name is None:
            if value.const is not None:
                name = self.const(value.const, value.name or "const")
            else:
                producer = value.producer
                default = producer.op.lower() if producer is not None else "input"
                name = self.unique(value.name or hint or default)
            self._names[value] = name
        return name

    def names(self):
        """(IR value, ONNX name) of every value named so far."""
        return self._names.items()

    def bind(self, value: Value, name: str) -> None:
        self._names[value] = name
        self._bound.setdefault(name, []).append(value)

    def const(self, array, hint: str = "const") -> str:
        """An initializer holding `array`; small equal constants share one."""
        array = np.asarray(array)
        key = None
        if array.nbytes <= 64:
            key = (array.dtype.str, array.shape, array.tobytes())
            if key in self._small_consts:
                return self._small_consts[key]
        name = self.unique(hint)
        self._values[name] = array
        if self._constant_nodes:
            self.nodes.append(helper.make_node("Constant", [], [name], name=self.unique("Constant_node"),
                                               value=onnx.numpy_helper.from_array(array, name)))
            self._produced.add(name)
            self._op_of[name] = "Constant"
        else:
            self.initializers.append((name, array))
        if key is not None:
            self._small_consts[key] = name
        return name

    def constant_value(self, name: str) -> np.ndarray | None:
        """The array of a constant this context made, or None for any other value."""
        return self._values.get(name)

    def ints(self, values) -> str:
        """An int64 initializer (axes, sizes, bounds)."""
        return self.const(np.asarray(values, dtype=np.int64), "ints")

    def scalar(self, value, dtype: str) -> str:
        return self.const(np.asarray(value, dtype=dtype), f"c_{dtype}")

    def emit(
        self, op_type: str, inputs: list[str], outputs: int | list[str] = 1, hint: str | None = None,
        node_name: str | None = None, **attributes,
    ) -> list[str]:
        """Append one ONNX node; returns its output names. A node equal to one already
        emitted in this graph (same op, inputs and attributes; outputs not named by the
        caller) is not emitted again: its outputs are returned. Emitters build small
        helper nodes (`Not(c)` for a Where, an index's `Shape`) per IR node, so two IR
        nodes over one value would otherwise repeat them; the IR's `cse` cannot see them."""
        if self.target == "iree" and op_type == "Reshape" and isinstance(outputs, int):
            folded = self._reshaped_constant(inputs, attributes)
            if folded is not None:
                return [folded]
        key = _key(op_type, inputs, outputs, attributes) if isinstance(outputs, int) and node_name is None else None
        if key is not None and key in self._emitted:
            return list(self._emitted[key])
        if isinstance(outputs, int):
            outputs = [self.unique(hint or op_type.lower()) for _ in range(outputs)]
        node_name = node_name or self.unique(f"{op_type}_node")
        node = helper.make_node(op_type, inputs, outputs, name=node_name, **attributes)
        for name in outputs:
            self._writer[name] = (len(self.nodes), node)
        self.nodes.append(node)
        self._produced.update(outputs)
        self._op_of.update(dict.fromkeys(outputs, op_type))
        if key is not None:
            self._emitted[key] = list(outputs)
            self._key_of[outputs[0]] = key
        return outputs

    def _reshaped_constant(self, inputs: list[str], attributes: dict) -> str | None:
        """A Reshape of a constant to a constant shape, as the reshaped constant (for IREE, which
        folds such a Reshape wrongly where a scatter reads it: set_subtensor(x[2], 5.0) wrote the
        index's bits, 1e-323, as the value)."""
        data, shape = (self.constant_value(name) for name in inputs)
        if data is None or shape is None:
            return None
        shape = [int(d) for d in shape]
        if not attributes.get("allowzero", 0):
            shape = [data.shape[i] if d == 0 else d for i, d in enumerate(shape)]
        return self.const(data.reshape(shape), "reshaped")

    def producer_op(self, name: str) -> str | None:
        """The op type of the emitted node that writes `name` (None for inputs and initializers)."""
        return self._op_of.get(name)

    def is_produced(self, name: str) -> bool:
        """Whether an emitted node writes `name` (not an input or an initializer)."""
        return name in self._produced

    def mark(self) -> tuple[int, int, int]:
        """Where the next emitter's work begins: for `made_since` and `settle`."""
        return len(self.nodes), len(self.infos), len(self.flags)

    def made_since(self, name: str, mark: tuple[int, int, int]) -> bool:
        """Whether `name` is written by a node `emit` made after `mark` (not a constant, an input,
        or a node emitted before: an earlier emitter's, or one the emit cache gave again)."""
        writer = self._writer.get(name)
        return writer is not None and writer[0] >= mark[0]

    def is_written(self, name: str) -> bool:
        """Whether `name` is written by a node `emit` made (not a constant, an input or an initializer)."""
        return name in self._writer

    def settle(self, name: str, mark: tuple[int, int, int], *, final: str | None = None, hint: str | None = None) -> str:
        """Make the node that writes `name` write its final name instead: `final`, claimed already
        (a graph output's), or `hint` made unique; returns that name. The node is one the current
        emitter (from `mark`) made, usually its last: only the nodes after it, and their bodies, may
        read `name` yet. For a node emitted before (a graph output an emitter gives as the value of
        an earlier node: a Squeeze of no axes), every node since and the values bound to `name`
        follow. `name` is given back (`unique` may hand it out again); a `name` the emitter made
        from `hint` stays."""
        if final is None:
            if name == hint or (name.startswith(f"{hint}_") and name[len(hint) + 1:].isdigit()):
                return name  # the emitter named it after the value already
            self._give_back(name)
            final = self.unique(hint)
        else:
            self._give_back(name)
        index, node = self._writer.pop(name)
        infos_from, flags_from = mark[1:] if index >= mark[0] else (0, 0)
        _replace(node.output, name, final)
        self._writer[final] = (index, node)
        for later in self.nodes[index + 1:]:
            self._read_as(later, name, final)
        for value in self._bound.get(name, ()):
            self._names[value] = final
        if name in self._bound:
            self._bound.setdefault(final, []).extend(self._bound.pop(name))
        self._produced.discard(name)
        self._produced.add(final)
        self._op_of[final] = self._op_of.pop(name)
        key = self._key_of.pop(name, None) or self._key_of.get(node.output[0])
        if key is not None:
            self._emitted[key] = list(node.output)
            self._key_of[node.output[0]] = key
        if name in self.owed_plus_zero:
            self.owed_plus_zero.discard(name)
            self.owed_plus_zero.add(final)
        for info in self.infos[infos_from:]:
            if info.name == name:
                info.name = final
        self.flags[flags_from:] = [(check, final if flag == name else flag) for check, flag in self.flags[flags_from:]]
        return final

    def _give_back(self, name: str) -> None:
        """`name` is no longer used: `unique` may hand it out again (next, if it was the last of its hint's)."""
        self._taken.discard(name)
        base, _, k = name.rpartition("_")
        if k.isdigit() and self._counters.get(base) == int(k):
            self._counters[base] = int(k) - 1

    def _read_as(self, node: onnx.NodeProto, name: str, final: str) -> None:
        """`node` (emitted after the one writing `name`) reads `final` where it read `name`,
        its body graphs too (which read outer names), and its emit cache entry follows."""
        if name in node.input:
            key = self._key_of.get(node.output[0]) if node.output else None
            _replace(node.input, name, final)
            if key is not None:
                op, ins, *rest = key
                new = (op, tuple(final if n == name else n for n in ins), *rest)
                self._emitted[new] = self._emitted.pop(key)
                self._key_of[node.output[0]] = new
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                _read_in(attribute.g.node, name, final)

    def emit1(self, op_type: str, inputs: list[str], hint: str | None = None, out: str | None = None, **attributes) -> str:
        return self.emit(op_type, inputs, [out] if out else 1, hint, **attributes)[0]


def _plain(value):
    """An attribute value as a key part: floats by their bits (0.0 and -0.0 differ), None for
    what cannot be compared cheaply (a graph, a tensor)."""
    if isinstance(value, float):
        return ("float", value.hex())
    return value if isinstance(value, (int, str, bytes)) else None


def _key(op_type: str, inputs, outputs: int, attributes: dict) -> tuple | None:
    """What makes two nodes the same computation, or None when it cannot be told cheaply."""
    items = []
    for name, value in sorted(attributes.items()):
        parts = [_plain(v) for v in value] if isinstance(value, (list, tuple)) else [_plain(value)]
        if any(part is None for part in parts):
            return None
        items.append((name, isinstance(value, (list, tuple)), tuple(parts)))
    return (op_type, tuple(inputs), outputs, tuple(items))


def _replace(field, name: str, final: str) -> None:
    for i, n in enumerate(field):
        if n == name:
            field[i] = final


def _read_in(nodes, name: str, final: str) -> None:
    """A body's nodes read `final` where they read the outer `name`."""
    for node in nodes:
        _replace(node.input, name, final)
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                _read_in(attribute.g.node, name, final)
