"""Read back what `ptonnx.ir.printer.print_graph` writes: `parse_graph(text) -> Graph`.

So passes can be tested text in, text out (tests/passes/text.py), as MLIR's and xDSL's are:
a graph written as it prints is shorter and plainer than the Builder calls that make it.

The grammar is the printer's, one item a line (blank lines are skipped; indentation is not
read, as each body follows its node and closes with `}`):

    graph NAME(%x: f32[?,batch], ...) {
      %y: f32[?,batch], ... = Op(%x, const([1.,2.]: f32[2]), ...) {attr=value, ...}
        graph BODY(...) { ... }          <- the bodies the node's `<graph BODY>` attributes name
      return %y, ...
    }

A value is `%name` (a printed `%<uid>` becomes the name "<uid>", so the text prints back as it
was) or an inline constant. Names are SSA and scoped to their graph (bodies are closed: they
read only their own inputs). Attributes are Python literals (`ast`-checked, with `nan`, `inf`
and NumPy scalars' `np.int64(1)` allowed) or `<graph NAME>`. Nodes are built with `Builder`
(defaults of attributes left out are filled in) and keep their printed output types.

Not read back: constants of more than 6 elements (printed `<N elems>`); names or symbolic
dims holding `, : ( ) [ ] = %` or spaces, a symbolic dim named `?` or like a number, two
values of one graph printed with the same name. Node names and sources are not printed.
"""

from __future__ import annotations

import ast
import math
import re

import numpy as np

from ptonnx.errors import IRError
from ptonnx.ir.builder import Builder
from ptonnx.ir.core import Graph, Value
from ptonnx.ir.registry import get_schema, has_op
from ptonnx.ir.types import DTYPES, TensorType

_SHORT = {short: name for name, short in DTYPES.items()}
_HEADER = re.compile(r"graph (?P<name>[^(]*)\((?P<sig>.*)\) \{")
_TYPE = re.compile(r"(?P<dtype>[a-z]\d+)\[(?P<dims>[^\]]*)\]")
_BODY_REF = re.compile(r"<graph (?P<name>.*)>")
_LITERAL_NAMES = {"nan": math.nan, "inf": math.inf}
#: NumPy scalars as NumPy 2 writes them in a tuple (`np.int64(3)`, `np.True_`)
_NUMPY_SCALARS = {*(name for name in DTYPES if name != "bool"), "bool_", "str_"}


def parse_graph(text: str) -> Graph:
    """The graph `text` prints (see the module doc for what can be read back)."""
    reader = _Reader(text)
    graph = reader.graph()
    if reader.peek() is not None:
        raise reader.error(reader.i + 1, "text after the graph's closing '}'")
    return graph


def _scan(text: str):
    """(index, char, bracket depth) of each character outside string literals; an opening
    bracket and its closing one have the same depth."""
    depth, quote, escaped = 0, None, False
    for i, c in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = None
            continue
        if c in "'\"":
            quote = c
            continue
        depth -= c in ")]}"
        yield i, c, depth
        depth += c in "([{"


def _split(text: str) -> list[str]:
    """`text` cut at its top-level commas (not those in brackets or strings)."""
    if not text.strip():
        return []
    cuts = [i for i, c, depth in _scan(text) if c == "," and depth == 0]
    return [text[a + 1 : b].strip() for a, b in zip([-1, *cuts], [*cuts, len(text)], strict=True)]


def _literal(node: ast.AST):
    """A Python literal as the printer writes attributes and constants: `ast.literal_eval`'s,
    plus `nan`, `inf` and NumPy scalars."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _LITERAL_NAMES:
        return _LITERAL_NAMES[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.Tuple | ast.List):
        items = [_literal(e) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "np":
        if node.attr in ("True_", "False_"):
            return np.bool_(node.attr == "True_")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(node.args) == 1 and not node.keywords:
        func = node.func
        if isinstance(func.value, ast.Name) and func.value.id == "np" and func.attr in _NUMPY_SCALARS:
            return getattr(np, func.attr)(_literal(node.args[0]))
    raise ValueError(f"not a literal: {ast.unparse(node)}")


class _BodyRef:
    """An attribute printed `<graph NAME>`: the body printed after its node."""

    def __init__(self, name: str):
        self.name = name


class _Reader:
    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.i = 0  # index of the next line to read

    def error(self, lineno: int, why: str) -> IRError:
        shown = self.lines[lineno - 1].strip() if 0 < lineno <= len(self.lines) else ""
        return IRError(f"line {lineno}: {why}" + (f"\n  {shown}" if shown else ""))

    def peek(self) -> str | None:
        while self.i < len(self.lines) and not self.lines[self.i].strip():
            self.i += 1
        return self.lines[self.i].strip() if self.i < len(self.lines) else None

    def next(self, expected: str) -> tuple[int, str]:
        content = self.peek()
        if content is None:
            raise IRError(f"line {len(self.lines)}: the text ends where {expected} was expected")
        self.i += 1
        return self.i, content

    # -- graphs and nodes -------------------------------------------------------------
    def graph(self) -> Graph:
        lineno, content = self.next("a graph header 'graph NAME(...) {'")
        header = _HEADER.fullmatch(content)
        if header is None:
            raise self.error(lineno, "expected a graph header 'graph NAME(%x: f32[2], ...) {'")
        graph, scope = Graph(header["name"]), {}
        for item in _split(header["sig"]):
            name, type_ = self.typed(item, lineno)
            self.define(scope, name, graph.add_input(type_, name), lineno)
        while True:
            lineno, content = self.next(f"the 'return' of graph {graph.name!r}")
            if content == "return" or content.startswith("return "):
                graph.set_outputs([self.value(t, scope, lineno) for t in _split(content[len("return"):])])
                lineno, content = self.next(f"the '}}' closing graph {graph.name!r}")
                if content != "}":
                    raise self.error(lineno, f"expected '}}' closing graph {graph.name!r}")
                return graph
            self.node(graph, scope, lineno, content)

    def node(self, graph: Graph, scope: dict, lineno: int, content: str) -> None:
        outs, sep, rest = ("", "=", content[2:]) if content.startswith("= ") else content.partition(" = ")
        opening = rest.find("(")
        if not sep or opening < 1:
            raise self.error(lineno, "expected a node '%out: type, ... = Op(inputs) {attrs}', a 'return' or a graph")
        op = rest[:opening].strip()
        closing = next((i for i, c, d in _scan(rest) if i > opening and c == ")" and d == 0), None)
        if closing is None:
            raise self.error(lineno, f"the inputs of {op} have no closing ')'")
        if not has_op(op):
            raise self.error(lineno, f"unknown op {op!r}")
        outputs = [self.typed(item, lineno) for item in _split(outs)]
        inputs = [self.value(t, scope, lineno) for t in _split(rest[opening + 1 : closing])]
        attrs = self.attrs(rest[closing + 1 :].strip(), lineno)
        bodies = []
        while (self.peek() or "").startswith("graph "):
            bodies.append(self.graph())
        refs = {k: v.name for k, v in attrs.items() if isinstance(v, _BodyRef)}
        if len(refs) != len(bodies):
            raise self.error(lineno, f"{op} names {len(refs)} body graph(s) but {len(bodies)} follow it")
        # printed in the node's attribute order, which `Builder` makes the schema's
        order = list(get_schema(op).attributes)
        for key in sorted(refs, key=lambda k: order.index(k) if k in order else len(order)):
            found = next((b for b in bodies if b.name == refs[key]), None)
            if found is None:
                raise self.error(lineno, f"attribute {key}=<graph {refs[key]}> names no body printed after the node")
            attrs[key] = found
            bodies.remove(found)
        try:
            node = Builder(graph).node(op, inputs, attrs, names=[n for n, _ in outputs], out_types=[t for _, t in outputs])
        except IRError as exc:
            raise self.error(lineno, str(exc)) from None
        for value in node.outputs:
            self.define(scope, value.name, value, lineno)

    def attrs(self, text: str, lineno: int) -> dict:
        if not text:
            return {}
        if not (text.startswith("{") and text.endswith("}")):
            raise self.error(lineno, f"expected attributes '{{name=value, ...}}' after the inputs, not {text!r}")
        found = {}
        for item in _split(text[1:-1]):
            key, sep, value = (s.strip() for s in item.partition("="))
            if not sep or not key.isidentifier():
                raise self.error(lineno, f"expected an attribute 'name=value', not {item!r}")
            ref = _BODY_REF.fullmatch(value)
            found[key] = _BodyRef(ref["name"]) if ref else self.literal(value, lineno, f"attribute {key}")
        return found

    # -- values and types ---------------------------------------------------------------
    def define(self, scope: dict, name: str, value: Value, lineno: int) -> None:
        if name in scope:
            raise self.error(lineno, f"%{name} is defined twice (SSA: each name once in its graph)")
        scope[name] = value

    def typed(self, item: str, lineno: int) -> tuple[str, TensorType]:
        """`%name: type` (a graph input or a node output)."""
        name, sep, type_ = item.partition(": ")
        if not sep or not name.startswith("%") or len(name) < 2:
            raise self.error(lineno, f"expected '%name: type', not {item!r}")
        return name[1:], self.type(type_, lineno)

    def type(self, text: str, lineno: int) -> TensorType:
        match = _TYPE.fullmatch(text.strip())
        if match is None or match["dtype"] not in _SHORT:
            raise self.error(lineno, f"expected a type such as f32[2,?,n], not {text!r} (dtypes: {', '.join(_SHORT)})")
        dims = [d.strip() for d in match["dims"].split(",")] if match["dims"].strip() else []
        shape = [None if d == "?" else int(d) if re.fullmatch(r"-?\d+", d) else d for d in dims]
        return TensorType(_SHORT[match["dtype"]], shape)

    def value(self, text: str, scope: dict, lineno: int) -> Value:
        if text.startswith("%"):
            if text[1:] not in scope:
                raise self.error(lineno, f"{text} is not defined (before this line, in this graph)")
            return scope[text[1:]]
        if not (text.startswith("const(") and text.endswith(")")):
            raise self.error(lineno, f"expected a value '%name' or 'const(...: type)', not {text!r}")
        body, sep, type_text = text[len("const(") : -1].rpartition(": ")
        type_ = self.type(type_text, lineno)
        if re.fullmatch(r"<\d+ elems>", body):
            raise self.error(lineno, f"the constant {text} cannot be read back: the printer shows only constants "
                                     "of at most 6 elements (give the test a smaller one)")
        if not type_.is_static:
            raise self.error(lineno, f"a constant has a static shape, not {type_}")
        literal = self.literal(body, lineno, "the constant")
        try:
            array = np.array(literal, dtype=type_.dtype).reshape(type_.shape)
        except (ValueError, TypeError, OverflowError) as exc:
            raise self.error(lineno, f"the constant {body} is not a {type_}: {exc}") from None
        return Value.constant(array)

    def literal(self, text: str, lineno: int, what: str):
        try:
            return _literal(ast.parse(text, mode="eval").body)
        except (SyntaxError, ValueError) as exc:
            raise self.error(lineno, f"{what}: {text!r} is not a Python literal ({exc})") from None
