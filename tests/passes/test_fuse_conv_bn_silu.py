"""fuse_conv_bn_silu on hand-built IR: what fuses, what must not, and that numbers are kept."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptonnx import ir
from ptonnx.ir import Builder, Graph, TensorType, Value
from ptonnx.ir.ops import fused as _fused  # noqa: F401  (registers FusedConv)
from ptonnx.passes.decompose import decompose
from ptonnx.passes.fuse_conv_bn_silu import FuseConvBnSilu

TOL = {"float32": dict(rtol=2e-5, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-10)}


def conv_graph(
    dtype="float32", c_in=4, c_out=6, k=3, group=1, bias=True, act="silu", eps=1e-3, stride=1,
    const_weight=True, const_stats=True, extra_user=None, seed=0,
):
    """x -> Conv -> BatchNorm -> activation ("silu", "mul_sigmoid" or None), decomposed."""
    rng = np.random.default_rng(seed)
    g = Graph("conv")
    x = g.add_input(TensorType(dtype, (1, c_in, 7, 7)), "x")
    w_arr = rng.normal(size=(c_out, c_in // group, k, k)).astype(dtype)
    w = Value.constant(w_arr, "w") if const_weight else g.add_input(TensorType(dtype, w_arr.shape), "w")
    b = Value.constant(rng.normal(size=c_out).astype(dtype) if bias else np.zeros(c_out, dtype), "b")
    stats = [
        rng.uniform(0.5, 1.5, c_out), rng.normal(0, 0.1, c_out), rng.normal(0, 0.1, c_out), rng.uniform(0.5, 2, c_out),
    ]
    stat_values = [Value.constant(s.astype(dtype), n) for s, n in zip(stats, ("gamma", "beta", "mean", "var"), strict=True)]
    if not const_stats:
        stat_values[3] = g.add_input(TensorType(dtype, (c_out,)), "var")
    bld = Builder(g)
    y = bld.op("Conv", x, w, b, strides=(stride, stride), pads=(k // 2,) * 4, group=group, name="conv")
    outputs = []
    if extra_user == "conv":
        outputs.append(bld.op("Neg", y))
    y = bld.op("BatchNorm", y, *stat_values, epsilon=eps, name="bn")
    if extra_user == "bn":
        outputs.append(bld.op("Neg", y))
    if act == "silu":
        y = bld.op("SiLU", y, name="act")
    elif act == "mul_sigmoid":
        s = bld.op("Sigmoid", y, name="sig")
        if extra_user == "sigmoid":
            outputs.append(bld.op("Neg", s))
        y = bld.op("Mul", y, s, name="act")
    g.set_outputs([y] + outputs)
    decompose(g)  # as compile does before any pass: the pass sees the sigmoid's formula
    arrays = [rng.normal(size=(1, c_in, 7, 7)).astype(dtype)]
    if not const_weight:
        arrays.append(w_arr)
    if not const_stats:
        arrays.append(stats[3].astype(dtype))
    return g, arrays


def fuse(g):
    result = FuseConvBnSilu().run(g)
    ir.verify(g)
    return result


def assert_same_numbers(kwargs, expect_ops):
    ref, arrays = conv_graph(**kwargs)
    g, _ = conv_graph(**kwargs)
    fuse(g)
    assert g.op_counts() == expect_ops, str(g)
    dtype = kwargs.get("dtype", "float32")
    for a, e in zip(ir.interpret(g, *arrays), ir.interpret(ref, *arrays), strict=True):
        np.testing.assert_allclose(a, e, **TOL[dtype])
    return g


@pytest.mark.parametrize("act", ["silu", "mul_sigmoid"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_bn_silu_becomes_one_fused_conv(act, dtype):
    g = assert_same_numbers(dict(act=act, dtype=dtype), {"FusedConv": 1})
    [node] = g.nodes
    assert node.attrs["activation"] == "silu" and node.attrs["pads"] == (1, 1, 1, 1)
    assert node.outputs[0].name == "act"


@pytest.mark.parametrize("bias", [True, False])
def test_conv_with_and_without_bias(bias):
    assert_same_numbers(dict(bias=bias, act=None), {"FusedConv": 1})


@pytest.mark.parametrize("group, c_in, c_out", [(2, 4, 6), (4, 4, 4), (8, 8, 8)])
def test_grouped_and_depthwise(group, c_in, c_out):
    assert_same_numbers(dict(group=group, c_in=c_in, c_out=c_out), {"FusedConv": 1})


@pytest.mark.parametrize("eps", [1e-5, 1e-3, 0.5])
def test_eps_is_used(eps):
    g = assert_same_numbers(dict(eps=eps, act=None), {"FusedConv": 1})
    other, _ = conv_graph(eps=eps * 2 + 0.1, act=None)
    fuse(other)
    assert not np.allclose(g.nodes[0].inputs[1].const, other.nodes[0].inputs[1].const)


def test_non_constant_weight_folds_no_batch_norm():
    g = assert_same_numbers(dict(const_weight=False, act=None), {"Conv": 1, "BatchNorm": 1})
    assert g.nodes[0].op == "Conv"


def test_non_constant_statistic_folds_no_batch_norm_but_silu_has_nothing_to_join():
    assert_same_numbers(dict(const_stats=False), {"Conv": 1, "BatchNorm": 1, "SiLU": 1})


def test_conv_then_silu_without_batch_norm_fuses():
    g = Graph()
    x = g.add_input(TensorType("float32", (1, 2, 5, 5)), "x")
    w = g.add_input(TensorType("float32", (3, 2, 1, 1)), "w")  # need not be constant
    b = Builder(g)
    c = b.op("Conv", x, w, Value.constant(np.zeros(3, np.float32)))
    g.set_outputs([b.op("Mul", b.op("Sigmoid", c), c)])
    decompose(g)
    fuse(g)
    assert g.op_counts() == {"FusedConv": 1} and g.nodes[0].inputs[1] is w


@pytest.mark.parametrize(
    "extra_user, expect",
    [
        ("conv", {"Conv": 1, "Neg": 1, "BatchNorm": 1, "SiLU": 1}),
        ("bn", {"FusedConv": 1, "Neg": 1, "SiLU": 1}),
        # the decomposed sigmoid stays whole: exp(min(x, 0)) / (1 + exp(-|x|)); its user Neg; the Mul
        ("sigmoid", {"FusedConv": 1, "Abs": 1, "Min": 1, "Exp": 2, "Neg": 2, "Add": 1, "Div": 1, "Mul": 1}),
    ],
)
def test_an_intermediate_with_a_second_user_is_not_fused_away(extra_user, expect):
    act = "mul_sigmoid" if extra_user == "sigmoid" else "silu"
    assert_same_numbers(dict(extra_user=extra_user, act=act), expect)


def test_a_shared_weight_is_never_mutated():
    g = Graph()
    x = g.add_input(TensorType("float32", (1, 2, 4, 4)), "x")
    w_arr = np.ones((2, 2, 1, 1), np.float32)
    w = Value.constant(w_arr, "shared")
    zero = Value.constant(np.zeros(2, np.float32))
    bld = Builder(g)
    c1 = bld.op("Conv", x, w, zero)
    c2 = bld.op("Conv", x, w, zero)
    stats = [Value.constant(np.full(2, v, np.float32)) for v in (2.0, 0.5, 0.1, 3.0)]
    g.set_outputs([bld.op("BatchNorm", c1, *stats), c2])
    fuse(g)
    assert g.op_counts() == {"FusedConv": 1, "Conv": 1}
    plain = next(n for n in g if n.op == "Conv")
    assert plain.inputs[1] is w and np.array_equal(w.const, np.ones((2, 2, 1, 1)))
    assert next(n for n in g if n.op == "FusedConv").inputs[1] is not w


def test_report_details_count_each_rewrite():
    g, _ = conv_graph(act="mul_sigmoid")
    result = fuse(g)
    assert result.details == {"x*sigmoid(x)->silu": 1, "conv+bn": 1, "conv+silu": 1} and result.rewrites == 3


@given(
    dtype=st.sampled_from(["float32", "float64"]),
    group=st.sampled_from([1, 2]),
    k=st.sampled_from([1, 3]),
    stride=st.sampled_from([1, 2]),
    bias=st.booleans(),
    act=st.sampled_from(["silu", "mul_sigmoid", None]),
    eps=st.sampled_from([1e-5, 1e-3]),
    seed=st.integers(0, 2**16),
)
def test_fused_and_unfused_give_the_same_numbers(dtype, group, k, stride, bias, act, eps, seed):
    kwargs = dict(dtype=dtype, group=group, k=k, stride=stride, bias=bias, act=act, eps=eps, seed=seed)
    assert_same_numbers(kwargs, {"FusedConv": 1})


#: the fused op -> the tests of this module whose graphs `fuse_conv_bn_silu` rewrites to it, each asserting
#: it is there and computes the numbers of the graph it replaces (read by tests/ir/test_registry.py)
REACHED_BY = {"FusedConv": ("test_conv_bn_silu_becomes_one_fused_conv", "test_conv_with_and_without_bias",
                            "test_fused_and_unfused_give_the_same_numbers")}


def test_every_fused_op_is_made_by_the_pass():
    g, _ = conv_graph()
    fuse(g)
    assert set(g.op_counts()) == set(REACHED_BY) == {name for name, s in ir.all_schemas().items() if s.family == "fused"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_the_decomposed_sigmoid_is_recognised_in_every_dtype(dtype):
    """float16's sigmoid is computed in float32 (Casts around the formula): x * sigmoid(x) is SiLU still;
    y * sigmoid(x) is not, nor is a formula with one constant changed (min(x, 1), not min(x, 0))."""
    g = Graph()
    x, y = (g.add_input(TensorType(dtype, (2, 3)), n) for n in "xy")
    b = Builder(g)
    g.set_outputs([b.op("Mul", x, b.op("Sigmoid", x)), b.op("Mul", y, b.op("Sigmoid", x))])
    decompose(g)
    fuse(g)
    assert g.outputs[0].producer.op == "SiLU" and g.outputs[1].producer.op == "Mul"
    assert g.op_counts()["SiLU"] == 1 and g.op_counts()["Div"] == 1  # the other sigmoid is kept whole

    other = Graph()
    x = other.add_input(TensorType(dtype, (2, 3)), "x")
    b = Builder(other)
    s = b.op("Div", b.op("Exp", b.op("Min", x, Value.constant(np.asarray(1.0, dtype)))),
             b.op("Add", b.op("Exp", b.op("Neg", b.op("Abs", x))), Value.constant(np.asarray(1.0, dtype))))
    other.set_outputs([b.op("Mul", x, s)])
    fuse(other)
    assert "SiLU" not in other.op_counts()


# -- text in, text out (tests/passes/text.py) -------------------------------------------------

from tests.passes.text import assert_rewrites  # noqa: E402

# 1x1 convolutions of one channel into two, BatchNorm statistics whose scale g / sqrt(var + eps)
# is [0.5, 2]: the folded weights are w * scale = [1, -2], the bias (b - mean) * scale + beta = [0.5, 2.5]
_W, _B = "const([[[[2.]]],[[[-1.]]]]: f32[2,1,1,1])", "const([1.5,2.]: f32[2])"
_STATS = "const([1.,2.]: f32[2]), const([0.,0.5]: f32[2]), const([0.5,1.]: f32[2]), const([4.,1.]: f32[2])"
_ATTRS = "dilations=(1, 1), group=1, pads=(0, 0, 0, 0), strides=(1, 1)"
_FOLDED = "const([[[[1.]]],[[[-2.]]]]: f32[2,1,1,1]), const([0.5,2.5]: f32[2])"


def test_text_batch_norm_folds_into_the_conv_weights():
    """Folding rounds differently from the two steps: numbers to a tolerance."""
    assert_rewrites("fuse_conv_bn_silu", f"""
        graph conv(%x: f32[1,1,2,2]) {{
          %conv: f32[1,2,2,2] = Conv(%x, {_W}, {_B}) {{{_ATTRS}}}
          %bn: f32[1,2,2,2] = BatchNorm(%conv, {_STATS}) {{epsilon=0.0}}
          return %bn
        }}
    """, f"""
        graph conv(%x: f32[1,1,2,2]) {{
          %bn: f32[1,2,2,2] = FusedConv(%x, {_FOLDED}) {{activation='none', {_ATTRS}}}
          return %bn
        }}
    """, rtol=1e-6)


def test_text_conv_batch_norm_and_x_times_its_sigmoid_are_one_fused_conv():
    """The sigmoid as `decompose` writes it, exp(min(x, 0)) / (1 + exp(-|x|)), is recognised."""
    assert_rewrites("fuse_conv_bn_silu", f"""
        graph conv(%x: f32[1,1,2,2]) {{
          %conv: f32[1,2,2,2] = Conv(%x, {_W}, {_B}) {{{_ATTRS}}}
          %bn: f32[1,2,2,2] = BatchNorm(%conv, {_STATS}) {{epsilon=0.0}}
          %low: f32[1,2,2,2] = Min(%bn, const(0.: f32[]))
          %top: f32[1,2,2,2] = Exp(%low)
          %abs: f32[1,2,2,2] = Abs(%bn)
          %neg: f32[1,2,2,2] = Neg(%abs)
          %e: f32[1,2,2,2] = Exp(%neg)
          %bottom: f32[1,2,2,2] = Add(%e, const(1.: f32[]))
          %sig: f32[1,2,2,2] = Div(%top, %bottom)
          %act: f32[1,2,2,2] = Mul(%bn, %sig)
          return %act
        }}
    """, f"""
        graph conv(%x: f32[1,1,2,2]) {{
          %act: f32[1,2,2,2] = FusedConv(%x, {_FOLDED}) {{activation='silu', {_ATTRS}}}
          return %act
        }}
    """, rtol=1e-6)


def test_text_a_conv_read_elsewhere_keeps_its_output():
    """Of two convs into a SiLU, the one whose output is also returned is not fused."""
    assert_rewrites("fuse_conv_bn_silu", f"""
        graph conv(%x: f32[1,1,2,2]) {{
          %c1: f32[1,2,2,2] = Conv(%x, {_W}, {_B}) {{{_ATTRS}}}
          %a1: f32[1,2,2,2] = SiLU(%c1)
          %c2: f32[1,2,2,2] = Conv(%x, {_W}, {_B}) {{{_ATTRS}}}
          %a2: f32[1,2,2,2] = SiLU(%c2)
          return %a1, %a2, %c2
        }}
    """, f"""
        graph conv(%x: f32[1,1,2,2]) {{
          %a1: f32[1,2,2,2] = FusedConv(%x, {_W}, {_B}) {{activation='silu', {_ATTRS}}}
          %c2: f32[1,2,2,2] = Conv(%x, {_W}, {_B}) {{{_ATTRS}}}
          %a2: f32[1,2,2,2] = SiLU(%c2)
          return %a1, %a2, %c2
        }}
    """)
