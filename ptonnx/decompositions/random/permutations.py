"""Draws without replacement: choice (uniform and weighted) and permutation, by sorting keys.

For each batch element, n keys (one a candidate: an element of a's first core axis, or of
arange(a) for a scalar a) are sorted ascending and the first k indices taken (`Sort`'s indices):
- uniform: the keys are uniforms on [0, 1): every ordering is equally likely (ties need two
  equal 53-bit uniforms), so the first k are a uniform ordered sample without replacement, as
  NumPy's `choice(replace=False)`; a permutation is all n of them (NumPy's `permutation`).
- weighted: the keys are log(-log u) - log p, minus p's Gumbel-perturbed logs (Gumbel-top-k):
  the first k are drawn as p's sequential sampling without replacement (each next element with
  probability p over the p left, the Plackett-Luce order), which is the order NumPy's weighted
  `choice(replace=False)` draws in. p = 0 gives the key inf: never drawn while others remain.
Logs are taken on flat vectors of the keys (`vector`), whatever the batch.

NumPy's refusals are the run's (ValueError): k > n; p negative or NaN, not summing to 1 within
sqrt(eps) (of p's dtype, as NumPy's), or with fewer than k non-zero entries. The shapes stay
valid where a check fails: keys for max(n, k) candidates, gathered indices clipped to n - 1.
"""

from __future__ import annotations

import numpy as np

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.random.bits import count, open_unit, unit
from ptonnx.decompositions.random.draws import Draws
from ptonnx.decompositions.random.portable import log
from ptonnx.decompositions.random.rejection import zeros
from ptonnx.decompositions.registry import decomposes


def _ints(x: Ex, values) -> Ex:
    return Ex(x.scope, x.scope.constant(np.asarray(values, dtype=np.int64)))


def _vec(x: Ex) -> Ex:
    """An int64 scalar as a 1-vector."""
    return x.op("Unsqueeze", axes=(0,))


def _concat(*parts: Ex) -> Ex:
    return parts[0].op("Concat", *parts[1:], axis=0) if len(parts) > 1 else parts[0]


def _part(shape: Ex, start: int, stop: int) -> Ex:
    """shape[start:stop] of an int64 shape vector."""
    return shape.op("Slice", _ints(shape, [start]), _ints(shape, [stop]), _ints(shape, [1]), axes=(0,))


def _broadcast(x: Ex, shape: Ex) -> Ex:
    """x broadcast to `shape` (by adding zeros of that shape: no Expand, see rejection.zeros)."""
    return x + zeros(count(_concat(_ints(shape, [1]), shape))).cast(x.dtype).op("Reshape", shape)


class Candidates:
    """What a draw without replacement chooses from: `rows` batch elements (`batch`: their shape)
    of `n` candidates each, `k` taken (`taken_ndim` axes of the draws); `core` the rank of a's
    core (the node's `core_ndim`; 0: arange(a))."""

    def __init__(self, node, d: Draws, a: Ex, taken_ndim: int):
        core = node.attrs["core_ndim"]
        self.d, self.a, self.core, self.dtype = d, a, core, node.attrs["dtype"]
        rank = d.shape.value.type.shape[0]
        self.nb = rank - taken_ndim - max(core - 1, 0)
        self.batch = _part(d.shape, 0, self.nb)
        self.rows = count(_concat(_ints(d.shape, [1]), self.batch))
        self.k = count(_concat(_ints(d.shape, [1]), _part(d.shape, self.nb, self.nb + taken_ndim)))
        first = a.value.type.ndim - core  # a's first core axis
        if core == 0:
            self.n = a.op("Reshape", _ints(a, [-1])).op("Gather", _ints(a, 0), axis=0).cast("int64")
        else:
            self.n = a.op("Shape", start=first, end=first + 1).op("Squeeze", axes=(0,))
        self.m = self.n.op("Max", self.k)  # keys for m >= k candidates: shapes valid when k > n

    def uniform_keys(self) -> Ex:
        """(rows, m) uniforms on [0, 1)."""
        return unit(self.d.bits(self.rows * self.m)).op("Reshape", _concat(_vec(self.rows), _vec(self.m)))

    def weighted_keys(self, p: Ex) -> Ex:
        """(rows, m) keys log(-log u) - log p (p padded with zeros to m)."""
        rows_n = _concat(_vec(self.rows), _vec(self.n))
        flat_p = _broadcast(p, _concat(self.batch, _vec(self.n))).op("Reshape", rows_n)
        pad = zeros(self.rows * (self.m - self.n)).op("Reshape", _concat(_vec(self.rows), _vec(self.m - self.n)))
        flat_p = flat_p.op("Concat", pad, axis=1).op("Reshape", _vec(self.rows * self.m))
        u = open_unit(self.d.bits(self.rows * self.m))
        keys = log(-log(u, normal=True), normal=True) - log(flat_p)
        return keys.op("Reshape", _concat(_vec(self.rows), _vec(self.m)))

    def take(self, keys: Ex) -> Ex:
        """The draws: the candidates of the k least keys of each row, in order."""
        _, order = keys.scope.builder.node("Sort", [keys.value], {"axis": 1}).outputs
        zero = _ints(keys, [0])
        first = Ex(keys.scope, order).op("Slice", zero, _vec(self.k), _ints(keys, [1]), axes=(1,))  # (rows, k)
        if self.core == 0:
            return first.cast(self.dtype).op("Reshape", self.d.shape)
        a, nba = self.a, self.a.value.type.ndim - self.core
        rest = a.op("Shape", start=nba + 1) if self.core > 1 else None
        shape = _concat(self.batch, a.op("Shape", start=nba))
        stacked = _concat(_vec(self.rows * self.n), *([rest] if rest is not None else []))
        flat_a = _broadcast(a, shape).op("Reshape", stacked)
        index = first.op("Min", (self.n - 1).op("Max", 0))
        base = self.n.const(0).op("Range", self.rows, self.n.const(1)) * self.n
        return flat_a.op("Gather", index + base.op("Unsqueeze", axes=(1,)), axis=0).op("Reshape", self.d.shape)


@decomposes("RandomChoice", as_given=True)
def choice(node, inputs):
    """k uniform draws without replacement: the k least of uniform keys."""
    d = Draws(node, inputs)
    a, core_shape = d.raw
    c = Candidates(node, d, a, core_shape.value.type.shape[-1])
    return d.checked(c.take(c.uniform_keys()), (c.k <= c.n, "Cannot take a larger sample than population when replace is False"))


@decomposes("RandomWeightedChoice", as_given=True)
def weighted_choice(node, inputs):
    """k draws without replacement weighted by p: Gumbel-top-k."""
    d = Draws(node, inputs)
    a, p_raw, core_shape = d.raw
    p = p_raw.cast("float64")
    c = Candidates(node, d, a, core_shape.value.type.shape[-1])
    last = p.value.type.ndim - 1
    atol = max(np.sqrt(np.finfo(np.float64).eps), np.sqrt(np.finfo(p_raw.dtype).eps) if p_raw.dtype.startswith("float") else 0.0)
    total = p.op("ReduceSum", axes=(last,))
    nonzero = where(p > 0.0, 1.0, 0.0, like=p).op("ReduceSum", axes=(last,))
    return d.checked(
        c.take(c.weighted_keys(p)),
        (c.k <= c.n, "Cannot take a larger sample than population when replace is False"),
        (p >= 0.0, "probabilities are not non-negative (or contain NaN)"),
        (abs(total - 1.0) <= atol, "probabilities do not sum to 1"),
        (nonzero >= c.k.cast("float64"), "Fewer non-zero entries in p than size"),
    )


@decomposes("RandomPermutation", as_given=True)
def permutation(node, inputs):
    """x's first core axis (arange(x) for a scalar x) in the order of uniform keys."""
    d = Draws(node, inputs)
    (x,) = d.raw
    c = Candidates(node, d, x, 1)
    return c.take(c.uniform_keys())


__all__ = ["Candidates", "choice", "permutation", "weighted_choice"]
