"""Decompositions: one per IR op the runtime lacks, `fn(node, inputs) -> Ex | [Ex] | None`.

A decomposition rewrites one IR node into IR ops onnxruntime runs (`passes/decompose.py`
applies them, first thing after lifting), so every pass sees inside it and constant
folding computes the very formula the model runs: a number is defined once.

Each is written for float64 (or, `any_float`, for every float dtype). `inputs` are the node's inputs as `Ex` formulas in the
compute dtype: float64 for a float64 node, and (with `widen`, the default) for float16
and float32 nodes too, rounded once at the end (onnxruntime's float32 kernels for these
functions are few and uneven). A decomposition that returns None leaves the node to
lowering (onnxruntime's own float32 Erf, say).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

#: the dtypes a decomposition is written in
COMPUTE = "float64"
#: computed in COMPUTE and rounded once, where a decomposition widens
NARROW = frozenset({"float16", "float32"})


@attrs.frozen
class Decomposition:
    op: str
    fn: Callable
    #: float16/float32 nodes computed in float64 (else left to lowering)
    widen: bool = True
    #: written for every float dtype: a node is decomposed in the dtype the dtype table
    #: computes it in (its own, or wider), as its emitter would have been (Sigmoid in float32)
    any_float: bool = False
    #: written for the node's own dtypes (integer bookkeeping, such as LAPACK's pivots): no widening
    own_dtype: bool = False
    #: given the inputs in their own dtypes (a random op's key, shape and parameters), casting what it computes
    #: itself; the result is cast to the output's dtype
    as_given: bool = False


#: IR op -> its decomposition
DECOMPOSITIONS: dict[str, Decomposition] = {}


def decomposes(*ops: str, widen: bool = True, any_float: bool = False, own_dtype: bool = False, as_given: bool = False):
    """Register `fn(node, inputs) -> Ex | [Ex] | None` as the decomposition of `ops`
    (`any_float`: written for every float dtype, see `Decomposition`)."""

    def decorate(fn):
        for op in ops:
            if op in DECOMPOSITIONS:
                raise ValueError(f"{op} already has a decomposition ({DECOMPOSITIONS[op].fn.__qualname__})")
            DECOMPOSITIONS[op] = Decomposition(op, fn, widen and not any_float and not own_dtype and not as_given, any_float,
                                               own_dtype, as_given)
        return fn

    return decorate


def binary(fn):
    """A decomposition applying `fn` (Ex, Ex -> Ex) to a binary node's inputs."""

    def decomposition(node, inputs):
        return fn(*inputs)

    decomposition.__doc__ = fn.__doc__
    decomposition.__qualname__ = fn.__qualname__
    return decomposition


def unary(fn):
    """A decomposition applying `fn` (Ex -> Ex) to a unary node's input."""

    def decomposition(node, inputs):
        return fn(inputs[0])

    decomposition.__doc__ = fn.__doc__
    decomposition.__qualname__ = fn.__qualname__
    return decomposition
