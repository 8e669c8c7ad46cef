"""ptonnx's intermediate representation: small, typed, SSA."""

from ptonnx.ir import ops as _ops  # noqa: F401  (registers every op)
from ptonnx.ir.core import GRAPH_OUTPUT, Graph, Node, Value
from ptonnx.ir.nx import to_networkx
from ptonnx.ir.printer import format_node, format_value, print_graph
from ptonnx.ir.registry import (
    OpSchema,
    all_schemas,
    evaluate,
    get_schema,
    infer_types,
    register,
    target_dtypes,
)
from ptonnx.ir.builder import Builder
from ptonnx.ir.interpret import interpret
from ptonnx.ir.types import TensorType, promote
from ptonnx.ir.verify import verify

__all__ = [
    "GRAPH_OUTPUT", "Builder", "Graph", "Node", "OpSchema", "TensorType", "Value",
    "all_schemas", "evaluate", "format_node", "interpret", "format_value", "get_schema", "infer_types",
    "print_graph", "promote", "register", "target_dtypes", "to_networkx",
    "verify",
]
