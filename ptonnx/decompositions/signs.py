"""The sign of zero in formulas: IEEE's -0.0 survives a product but not a `Select`
that takes it first, so formulas test for it and put it back by a factor."""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where


def is_negative(x: Ex) -> Ex:
    """x < 0 or x is -0.0 (1 / x < 0); false for NaN."""
    return (x < 0.0) | (x.op("Reciprocal") < 0.0)


def with_zero_sign(value: Ex, negative_zero: Ex) -> Ex:
    """`value`, but -0.0 where the bool `negative_zero` says a zero result is negative.

    Computed as |value| times -1 or 1: the factors are never zero, so no Select has
    a zero to lose the sign of.
    """
    factor = where((value < 0.0) | negative_zero, -1.0, 1.0, like=value)
    return abs(value) * factor
