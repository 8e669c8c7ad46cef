"""`FusedConv`: a Conv whose bias already holds a folded BatchNorm, plus an optional activation.

Passes create it (`fuse_conv_bn_silu`); lifting never does. It computes
exactly `activation(Conv(x, w, b))` with the Conv attributes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ptonnx.errors import TypeRuleError
from ptonnx.ir.ops import nn as _nn  # noqa: F401  (Conv must be registered first)
from ptonnx.ir.ops import nn_kernels as K
from ptonnx.ir.registry import get_schema
from ptonnx.ir.schema import define
from ptonnx.ir.types import FLOAT_DTYPES, TensorType

#: activation name -> numpy semantics
ACTIVATIONS = {"none": lambda y: y, "silu": K.silu}

_CONV = get_schema("Conv")


def _fused_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    if a["activation"] not in ACTIVATIONS:
        raise TypeRuleError(f"FusedConv: activation must be one of {sorted(ACTIVATIONS)}, got {a['activation']!r}")
    conv_attrs = {k: v for k, v in a.items() if k != "activation"}
    return _CONV.type_rule(types, conv_attrs)


def _fused(x, w, b=None, *, activation, **conv_attrs):
    return ACTIVATIONS[activation](_CONV.semantics(x, w, b, **conv_attrs))


define(
    "FusedConv",
    inputs=("x: T", "w: T", "b?: T"),
    outputs=("out: T",),
    dtypes={"T": FLOAT_DTYPES},
    type_rule=_fused_rule,
    semantics=_fused,
    attributes={**_CONV.attributes, "activation": (str, "none")},
    traits=("no_fold",),
    family="fused",
    doc="activation(Conv(x, w, b)): Conv with BatchNorm folded into w and b; activation 'none' or 'silu'",
)
