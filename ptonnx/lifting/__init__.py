"""Lifting: PyTensor FunctionGraph -> IR. Knows PyTensor and the IR, never ONNX."""

from ptonnx.lifting import basic, checks, creation, elemwise, shape  # noqa: F401  (register the rules)
from ptonnx.lifting import advanced, extra, matmul, nn, pad, reduction, sequence, subtensor, tensor  # noqa: F401
from ptonnx.lifting import ifelse, index_math, random, scalar_loop, scan, signal, sparse, xtensor  # noqa: F401
from ptonnx.lifting.dispatch import LIFTERS, lifts
from ptonnx.lifting.lift import lift

__all__ = ["LIFTERS", "lift", "lifts"]
