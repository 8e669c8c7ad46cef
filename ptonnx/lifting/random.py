"""Random variables: each PyTensor RandomVariable node as the IR's `Random<Name>` op.

A generator (`RandomGeneratorType`) is a key, two uint32 words (`ptonnx.keys`): a
generator the graph takes is a key input, the next generator an RV returns is
`NextKey` of its key. Each RV node gets a stream number of its own (its place among
the graph's RV nodes), so two RVs given one generator draw independent numbers.
"""

from __future__ import annotations

try:
    from pytensor.graph.traversal import io_toposort
except ImportError:  # pytensor 2.38
    from pytensor.graph.basic import io_toposort
from pytensor.tensor.random.op import RandomVariable

from ptonnx.errors import UnsupportedOpError
from ptonnx.lifting.dispatch import lifts

#: PyTensor's RV name (`op.name`) -> the IR op that draws it
RANDOM_OPS = {
    "uniform": "RandomUniform", "normal": "RandomNormal", "halfnormal": "RandomHalfNormal",
    "lognormal": "RandomLogNormal", "exponential": "RandomExponential", "truncexpon": "RandomTruncExpon",
    "gumbel": "RandomGumbel", "logistic": "RandomLogistic", "laplace": "RandomLaplace", "cauchy": "RandomCauchy",
    "halfcauchy": "RandomHalfCauchy", "weibull": "RandomWeibull", "pareto": "RandomPareto",
    "triangular": "RandomTriangular", "wald": "RandomWald", "bernoulli": "RandomBernoulli",
    "geometric": "RandomGeometric", "integers": "RandomIntegers", "categorical": "RandomCategorical",
    # rejection samplers
    "gamma": "RandomGamma", "invgamma": "RandomInvGamma", "beta": "RandomBeta", "t": "RandomStudentT",
    "gengamma": "RandomGenGamma", "dirichlet": "RandomDirichlet", "vonmises": "RandomVonMises",
    # multivariate draws and draws without replacement (`_variant` picks the weighted choice)
    "multivariate_normal": "RandomMvNormal", "choice_without_replacement": "RandomChoice", "permutation": "RandomPermutation",
    # discrete draws by loops
    "poisson": "RandomPoisson", "binomial": "RandomBinomial", "negative_binomial": "RandomNegBinomial",
    "beta_binomial": "RandomBetaBinomial", "hypergeometric": "RandomHyperGeometric", "multinomial": "RandomMultinomial",
}


def _variant(ir_op: str, op) -> tuple[str, dict]:
    """The IR op for an RV of `ir_op`'s name, and the attributes it takes from the op's properties
    (`ptonnx.ir.ops.random.ATTRIBUTES`): a choice with `p` is the weighted one; the method of a
    multivariate normal; the core rank of a choice's or permutation's first parameter."""
    if ir_op == "RandomMvNormal":
        return ir_op, {"method": op.method}
    if ir_op in ("RandomChoice", "RandomPermutation"):
        weighted = ir_op == "RandomChoice" and op.has_p_param
        return ("RandomWeightedChoice" if weighted else ir_op), {"core_ndim": op.ndims_params[0]}
    return ir_op, {}


def _draws_shape(ctx, node):
    """The draws' shape as an int64 vector: static sizes as a constant, else PyTensor's own
    shape graph for the RV (`_infer_shape`), lifted."""
    import pytensor.tensor as pt

    out = node.outputs[1]
    if all(isinstance(d, int) for d in out.type.shape):
        return ctx.ints(out.type.shape)
    _, size, *params = node.inputs
    sizes = node.op._infer_shape(size, params)
    shape = pt.as_tensor([pt.cast(s, "int64") for s in sizes], ndim=1, dtype="int64") if sizes else pt.as_tensor([], dtype="int64")
    from ptonnx.lifting.lift import lift_applies  # lift_applies dispatches to this module's rule

    lift_applies(ctx, io_toposort(node.inputs, [shape]))
    return ctx.value(shape)


@lifts(RandomVariable)
def lift_random_variable(ctx, node):
    op = node.op
    ir_op = RANDOM_OPS.get(op.name)
    rng, _, *params = node.inputs
    if ir_op is None:
        raise UnsupportedOpError(op, node.outputs[1], sorted(RANDOM_OPS), family="random variables",
                                 reason=f"ptonnx does not draw {op.name} yet; it draws {', '.join(sorted(RANDOM_OPS))}")
    ir_op, extra = _variant(ir_op, op)
    stream = ctx.next_stream()
    key = ctx.value(rng)
    draws = ctx.builder.node(ir_op, [key, _draws_shape(ctx, node), *(ctx.value(p) for p in params)],
                             {"stream": stream, "dtype": node.outputs[1].dtype, **extra}, names=[node.outputs[1].name]).output
    return [ctx.op("NextKey", key, stream=stream), draws]
