"""Conv -> BatchNorm -> SiLU becomes one `FusedConv` with BatchNorm folded into its weights.

    W' = W * g / sqrt(var + eps)        b' = (b - mean) * g / sqrt(var + eps) + beta

Three rewrites, run together to a fixed point by the worklist driver:
`x * sigmoid(x)` -> `SiLU(x)`, the sigmoid as `decompose` wrote it (the IR's Sigmoid is
decomposed before any pass runs, so a constant's sigmoid folds to what a run-time one computes;
`passes/decomposed.py` recognises the decomposition by rebuilding it, not by a copy of its
shape). SiLU keeps onnxruntime's Sigmoid kernel, whose far negative tail is only absolutely
accurate (docs/limits.md): the fusion trades that for speed, as the default pass list chooses; Conv -> BatchNorm (constant weights and
statistics) -> FusedConv; Conv -> SiLU -> FusedConv(activation="silu").
Each fires only when the values it replaces have no other users. The folded
weights are new constants: a weight shared with another conv is never changed.
"""

from __future__ import annotations

import attrs
import numpy as np

from ptonnx.ir import Builder, Graph, Node
from ptonnx.ir.core import Value
from ptonnx.passes.base import PassResult
from ptonnx.passes.decomposed import decomposed
from ptonnx.passes.rewrite import Replacement, apply_rewrites, node_rewriter, only_used_by

CONVS = ("Conv", "FusedConv")


def _plain_conv(value: Value) -> Node | None:
    """The Conv (or activation-free FusedConv) producing `value`, if any."""
    node = value.producer
    if node is None or node.op not in CONVS or node.attrs.get("activation", "none") != "none":
        return None
    return node


def _conv_attrs(node: Node) -> dict:
    return {k: v for k, v in node.attrs.items() if k != "activation"}


def _fused(b: Builder, conv: Node, inputs, attrs: dict, anchor: Node) -> Replacement:
    """A FusedConv taking over `anchor`'s output; the Conv is absorbed (its output
    must have no other user: the driver refuses the fusion otherwise)."""
    fused = b.op("FusedConv", *inputs, **attrs)
    return Replacement({anchor.outputs[0]: fused}, absorbs=(conv,))


@node_rewriter("Mul")
def mul_sigmoid_to_silu(b: Builder, node: Node):
    """x * sigmoid(x), either order (the driver refuses it if a part of the sigmoid has another user)."""
    for x, s in (node.inputs, reversed(node.inputs)):
        if x.const is None and x.dtype == node.outputs[0].dtype and x.type == s.type:
            parts = decomposed("Sigmoid", x, s)
            if parts is not None:
                return Replacement({node.outputs[0]: b.op("SiLU", x)}, absorbs=parts)
    return None


@node_rewriter("BatchNorm")
def fold_batch_norm(b: Builder, bn: Node):
    x, gamma, beta, mean, var = bn.inputs
    conv = _plain_conv(x)
    if conv is None or not only_used_by(x, [bn]) or x.dtype != bn.outputs[0].dtype or x.type.ndim != 4:
        return None
    data, w, *bias = conv.inputs
    if any(v.const is None for v in (w, *bias, gamma, beta, mean, var)):
        return None
    dtype = bn.outputs[0].dtype
    bias = bias[0] if bias else Value.constant(np.zeros(mean.const.shape, dtype), f"{w.name or 'conv'}_bias")
    # As the BatchNorm kernel does: epsilon is a float32 attribute, the rest in float64 here.
    eps = float(np.float32(bn.attrs.get("epsilon", 1e-5)))
    scale = gamma.const.astype(np.float64) / np.sqrt(var.const.astype(np.float64) + eps)
    w_new = (w.const.astype(np.float64) * scale[:, None, None, None]).astype(dtype)
    b_new = ((bias.const.astype(np.float64) - mean.const) * scale + beta.const).astype(dtype)
    names = (f"{w.name}_bn" if w.name else None, f"{bias.name or w.name or 'conv'}_bn_bias")
    inputs = [data, Value.constant(w_new, names[0]), Value.constant(b_new, names[1])]
    return _fused(b, conv, inputs, _conv_attrs(conv), bn)


@node_rewriter("SiLU")
def fuse_silu(b: Builder, silu: Node):
    x = silu.inputs[0]
    conv = _plain_conv(x)
    if conv is None or not only_used_by(x, [silu]):
        return None
    return _fused(b, conv, list(conv.inputs), {**_conv_attrs(conv), "activation": "silu"}, silu)


@attrs.define
class FuseConvBnSilu:
    name: str = "fuse_conv_bn_silu"

    def run(self, graph: Graph) -> PassResult:
        fired = apply_rewrites(graph, [mul_sigmoid_to_silu, fold_batch_norm, fuse_silu])
        details = {
            "x*sigmoid(x)->silu": fired["mul_sigmoid_to_silu"],
            "conv+bn": fired["fold_batch_norm"],
            "conv+silu": fired["fuse_silu"],
        }
        return PassResult(bool(fired), sum(fired.values()), {k: v for k, v in details.items() if v})
