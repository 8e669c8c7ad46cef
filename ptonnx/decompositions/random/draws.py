"""`Draws`: what a random op's decomposition draws with, and the checks NumPy makes.

A decomposition takes a `Draws` of its node and asks for standard variates in the
draws' shape (`unit`, `open_unit`, `normal`), each from a lane of its own, then
transforms them with the parameters (float64, broadcast against the draws).
Parameters NumPy (or SciPy, where PyTensor calls it) refuses fail the run with the
same exception class (`checked`), as PyTensor's perform would raise.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, sqrt
from ptonnx.decompositions.random.bits import count, lane_bits, open_unit, stream_key, unit
from ptonnx.decompositions.random.portable import log, sincos_pi

VALUE_ERROR = "builtins:ValueError"


class Draws:
    """The key, shape and element count of one random node, and the lanes it has drawn."""

    def __init__(self, node, inputs: list[Ex]):
        key, self.shape, *self.raw = inputs
        self.key = stream_key(key, node.attrs["stream"])
        self.op = node.op
        self.n = count(self.shape)
        self._lanes = 0

    @property
    def params(self) -> list[Ex]:
        """The parameters in float64."""
        return [p.cast("float64") for p in self.raw]

    def bits(self, n: Ex | None = None) -> tuple[Ex, Ex]:
        """64 bits for each of `n` (default: every draw) elements, from the next lane."""
        lane, self._lanes = self._lanes, self._lanes + 1
        return lane_bits(self.key, lane, self.n if n is None else n)

    def shaped(self, flat: Ex) -> Ex:
        return flat.op("Reshape", self.shape)

    def unit(self) -> Ex:
        """Uniform on [0, 1) in the draws' shape (53 bits, NumPy's `random()`)."""
        return self.shaped(unit(self.bits()))

    def open_unit(self) -> Ex:
        """Uniform on (0, 1) in the draws' shape (52 bits and a half: its log is finite)."""
        return self.shaped(open_unit(self.bits()))

    def normal(self) -> Ex:
        """Standard normal in the draws' shape: Box-Muller on pairs, r cos t and r sin t from
        one pair of uniforms (r = sqrt(-2 log u), u in (0, 1): |z| < 8.6)."""
        pairs = (self.n + 1).op("IntDiv", 2)
        radius = sqrt(log(open_unit(self.bits(pairs)), normal=True) * -2.0)
        sin, cos = sincos_pi(unit(self.bits(pairs)) * 2.0)  # the turn 2 pi u
        both = (radius * cos).op("Concat", radius * sin, axis=0)
        zero = pairs.const(0).op("Unsqueeze", axes=(0,))
        first = both.op("Slice", zero, self.n.op("Unsqueeze", axes=(0,)), zero.const(1).op("Unsqueeze", axes=(0,)), axes=(0,))
        return self.shaped(first)

    def checked(self, draws: Ex, *conds: tuple[Ex, str], exception: str = VALUE_ERROR) -> Ex:
        """`draws`, failing the run with NumPy's message where a parameter condition is false."""
        for cond, message in conds:
            draws = draws.op("Check", cond, message=f"{self.op}: {message}", exception=exception)
        return draws


def at_least(value: Ex, bound: float) -> Ex:
    """value >= bound, true for NaN (NumPy's checks are `value < bound`: NaN passes)."""
    return (value < bound).op("Not")


def above(value: Ex, bound: float) -> Ex:
    """value > bound, true for NaN."""
    return (value <= bound).op("Not")
