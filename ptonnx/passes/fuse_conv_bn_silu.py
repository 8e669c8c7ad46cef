"""Conv -> BatchNorm -> SiLU becomes one `FusedConv` with BatchNorm folded into its weights.

    W' = W * g / sqrt(var + eps)        b' = (b - mean) * g / sqrt(var + eps) + beta

Three rewrites, run together to a fixed point by the worklist driver:
`x * Sigmoid(x)` -> `SiLU(x)`; Conv -> BatchNorm (constant weights and
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
from ptonnx.passes.rewrite import apply_rewrites, node_rewriter, only_used_by

CONVS = ("Conv", "FusedConv")


def _plain_conv(value: Value) -> Node | None:
    """The Conv (or activation-free FusedConv) producing `value`, if any."""
    node = value.producer
    if node is None or node.op not in CONVS or node.attrs.get("activation", "none") != "none":
        return None
    return node


def _conv_attrs(node: Node) -> dict:
    return {k: v for k, v in node.attrs.items() if k != "activation"}


def _replace(graph: Graph, old_nodes: list[Node], new_inputs, attrs: dict, anchor: Node) -> None:
    """Put a FusedConv in front of `anchor`, take over its output's uses, drop `old_nodes`."""
    out = anchor.outputs[0]
    fused = Builder(graph, before=anchor).op("FusedConv", *new_inputs, name=out.name, **attrs)
    graph.replace_all_uses(out, fused)
    for node in old_nodes:  # users first
        graph.remove(node)


@node_rewriter("Mul")
def mul_sigmoid_to_silu(graph: Graph, node: Node) -> bool:
    for x, s in (node.inputs, reversed(node.inputs)):
        sig = s.producer
        if sig is not None and sig.op == "Sigmoid" and sig.inputs[0] is x and only_used_by(s, [node]):
            if x.dtype != node.outputs[0].dtype:
                return False
            silu = Builder(graph, before=node).op("SiLU", x, name=node.outputs[0].name)
            graph.replace_all_uses(node.outputs[0], silu)
            graph.remove(node)
            graph.remove(sig)
            return True
    return False


@node_rewriter("BatchNorm")
def fold_batch_norm(graph: Graph, bn: Node) -> bool:
    x, gamma, beta, mean, var = bn.inputs
    conv = _plain_conv(x)
    if conv is None or not only_used_by(x, [bn]) or x.dtype != bn.outputs[0].dtype or x.type.ndim != 4:
        return False
    data, w, b = conv.inputs
    if any(v.const is None for v in (w, b, gamma, beta, mean, var)):
        return False
    dtype = bn.outputs[0].dtype
    # As the BatchNorm kernel does: epsilon is a float32 attribute, the rest in float64 here.
    eps = float(np.float32(bn.attrs.get("epsilon", 1e-5)))
    scale = gamma.const.astype(np.float64) / np.sqrt(var.const.astype(np.float64) + eps)
    w_new = (w.const.astype(np.float64) * scale[:, None, None, None]).astype(dtype)
    b_new = ((b.const.astype(np.float64) - mean.const) * scale + beta.const).astype(dtype)
    names = (f"{w.name}_bn" if w.name else None, f"{b.name or w.name or 'conv'}_bn_bias")
    _replace(
        graph,
        [bn, conv],
        [data, Value.constant(w_new, names[0]), Value.constant(b_new, names[1])],
        _conv_attrs(conv),
        bn,
    )
    return True


@node_rewriter("SiLU")
def fuse_silu(graph: Graph, silu: Node) -> bool:
    x = silu.inputs[0]
    conv = _plain_conv(x)
    if conv is None or not only_used_by(x, [silu]):
        return False
    _replace(graph, [silu, conv], list(conv.inputs), {**_conv_attrs(conv), "activation": "silu"}, silu)
    return True


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
