"""Random draws: one IR op per distribution, `Random<Name>(key, out_shape, *params) {stream, dtype}`.

`key` is a generator key, two uint32 words (`ptonnx.keys`); `out_shape` the draws' shape
(int64, PyTensor's size with the support dims); `stream` a constant that separates the
draws of two ops given one key (lifting numbers the random nodes of a graph). The
parameters broadcast against the draws as PyTensor's do.

Each op is defined by its decomposition over `Threefry2x32` bits
(`ptonnx/decompositions/random/`): that is the one definition of the numbers, so the
op's NumPy semantics runs it (`passes.decompose.evaluate_decomposed`, registered in `BY_DECOMPOSITION`), and interpret,
constant folding and every runtime give the same bits for the same key. Draws are
matched to SciPy in distribution, not to NumPy's bit streams (`tests/random/`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.errors import IRError
from ptonnx.ir.ops.bits import threefry2x32
from ptonnx.ir.ops.rules import need
from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import FLOAT_DTYPES, INT_DTYPES, NUMERIC_DTYPES, TensorType

#: IR op -> (its parameters, the dtypes its draws may have, what it draws); the parameter
#: names are PyTensor's (`pytensor.tensor.random.basic`)
DISTRIBUTIONS: dict[str, tuple[tuple[str, ...], frozenset[str], str]] = {
    "RandomUniform": (("low", "high"), FLOAT_DTYPES, "uniform on [low, high)"),
    "RandomNormal": (("loc", "scale"), FLOAT_DTYPES, "normal (Gaussian)"),
    "RandomHalfNormal": (("loc", "scale"), FLOAT_DTYPES, "loc + scale |normal|"),
    "RandomLogNormal": (("mean", "sigma"), FLOAT_DTYPES, "exp(mean + sigma normal)"),
    "RandomExponential": (("scale",), FLOAT_DTYPES, "exponential of mean `scale`"),
    "RandomTruncExpon": (("b", "loc", "scale"), FLOAT_DTYPES, "exponential truncated to [0, b], shifted and scaled (SciPy's truncexpon)"),
    "RandomGumbel": (("loc", "scale"), FLOAT_DTYPES, "Gumbel (largest extreme value)"),
    "RandomLogistic": (("loc", "scale"), FLOAT_DTYPES, "logistic"),
    "RandomLaplace": (("loc", "scale"), FLOAT_DTYPES, "Laplace (double exponential)"),
    "RandomCauchy": (("loc", "scale"), FLOAT_DTYPES, "Cauchy"),
    "RandomHalfCauchy": (("loc", "scale"), FLOAT_DTYPES, "loc + scale |Cauchy|"),
    "RandomWeibull": (("shape",), FLOAT_DTYPES, "Weibull of scale 1 (NumPy's weibull)"),
    "RandomPareto": (("b", "scale"), FLOAT_DTYPES, "Pareto of shape b on [scale, inf) (SciPy's pareto)"),
    "RandomTriangular": (("left", "mode", "right"), FLOAT_DTYPES, "triangular"),
    "RandomWald": (("mean", "scale"), FLOAT_DTYPES, "Wald (inverse Gaussian) of mean `mean` and shape `scale`"),
    "RandomBernoulli": (("p",), INT_DTYPES, "1 with probability p, else 0"),
    "RandomGeometric": (("p",), INT_DTYPES, "trials to the first success, 1, 2, ..."),
    "RandomIntegers": (("low", "high"), INT_DTYPES, "integers on [low, high)"),
    "RandomCategorical": (("p",), INT_DTYPES, "an index drawn with the probabilities on p's last axis"),
    # rejection samplers (decompositions/random/gamma.py); PyTensor's `shape` is `alpha` (the draws' shape is `shape`)
    "RandomGamma": (("alpha", "scale"), FLOAT_DTYPES, "gamma of shape `alpha` and scale `scale` (NumPy's gamma)"),
    "RandomInvGamma": (("alpha", "scale"), FLOAT_DTYPES, "inverse gamma: 1 / gamma(alpha, 1 / scale)"),
    "RandomBeta": (("alpha", "beta"), FLOAT_DTYPES, "beta"),
    "RandomStudentT": (("df", "loc", "scale"), FLOAT_DTYPES, "Student's t of `df` degrees of freedom, shifted and scaled"),
    "RandomGenGamma": (("alpha", "p", "lambd"), FLOAT_DTYPES, "generalized gamma: lambd G**(1/p), G a gamma of shape alpha / p"),
    "RandomDirichlet": (("alphas",), FLOAT_DTYPES, "Dirichlet of the concentrations on alphas' last axis"),
    "RandomVonMises": (("mu", "kappa"), FLOAT_DTYPES, "von Mises of mode mu and concentration kappa, on [-pi, pi] (decompositions/random/vonmises.py)"),
    # multivariate draws and draws without replacement (decompositions/random/multivariate.py, permutations.py)
    "RandomMvNormal": (("mean", "cov"), FLOAT_DTYPES, "multivariate normal: mean + A z, A from cov by `method` (cholesky, eigh, svd)"),
    "RandomChoice": (("a", "core_shape"), NUMERIC_DTYPES, "core_shape draws without replacement from a's first core axis (arange(a) for a scalar a)"),
    "RandomWeightedChoice": (("a", "p", "core_shape"), NUMERIC_DTYPES, "draws without replacement weighted by p (NumPy's sequential draws), as RandomChoice"),
    "RandomPermutation": (("x",), NUMERIC_DTYPES, "x shuffled along its first core axis (arange(x) for a scalar x)"),
    # discrete draws by loops (decompositions/random/poisson.py, binomial.py, hypergeometric.py)
    "RandomPoisson": (("lam",), INT_DTYPES, "Poisson of mean lam"),
    "RandomBinomial": (("n", "p"), INT_DTYPES, "successes in n trials of probability p"),
    "RandomNegBinomial": (("n", "p"), INT_DTYPES, "failures before the n-th success, of probability p (SciPy's nbinom)"),
    "RandomBetaBinomial": (("n", "a", "b"), INT_DTYPES, "binomial of n trials of a probability drawn from beta(a, b) (SciPy's betabinom)"),
    "RandomHyperGeometric": (("ngood", "nbad", "nsample"), INT_DTYPES, "goods among nsample items drawn without replacement from ngood goods and nbad bads"),
    "RandomMultinomial": (("n", "p"), INT_DTYPES, "counts of n draws among the categories of probabilities on p's last axis"),
}
#: the attributes an op takes beyond `stream` and `dtype`, name -> (type, default): what the
#: PyTensor op fixes in its properties (lifting/random.py reads them there)
ATTRIBUTES: dict[str, dict[str, tuple[type, Any]]] = {
    "RandomMvNormal": {"method": (str, "cholesky")},
    # the rank of the first parameter's core (PyTensor's ndims_params[0]); 0: an implicit arange
    "RandomChoice": {"core_ndim": (int, REQUIRED)},
    "RandomWeightedChoice": {"core_ndim": (int, REQUIRED)},
    "RandomPermutation": {"core_ndim": (int, REQUIRED)},
}


def _draws_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    key, shape = types[0], types[1]
    need(key.shape == (2,), "Random", lambda: f"a key is two uint32 words, got {key}")
    need(shape.ndim == 1 and isinstance(shape.shape[0], int), "Random", lambda: f"the shape must be 1-D of static length, got {shape}")
    known = a.get("out_shape")
    sizes = tuple(known) if isinstance(known, tuple) else (None,) * shape.shape[0]
    return [TensorType(a["dtype"], tuple(d if isinstance(d, int | str) else None for d in sizes))]


#: how to evaluate an op by its decomposition: `ptonnx.passes.decompose` registers it here (the IR
#: does not import passes), `evaluate(op, arrays, attributes) -> tuple of arrays`
BY_DECOMPOSITION: list = []


def _by_decomposition(op: str):
    def semantics(*arrays, **attributes):
        if not BY_DECOMPOSITION:
            raise IRError(f"{op} is defined by its decomposition: import ptonnx (its passes) to evaluate it")
        return BY_DECOMPOSITION[0](op, arrays, attributes)

    return semantics


for _name, (_params, _dtypes, _doc) in DISTRIBUTIONS.items():
    define(
        _name,
        inputs=("key: uint32", "out_shape: int64", *(f"{p}: P{i}" for i, p in enumerate(_params))),
        outputs=("out: O",),
        dtypes={"O": _dtypes, **{f"P{i}": NUMERIC_DTYPES for i in range(len(_params))}},
        type_rule=_draws_rule,
        semantics=_by_decomposition(_name),
        attributes={"stream": (int, REQUIRED), "dtype": (str, REQUIRED), **ATTRIBUTES.get(_name, {})},
        reads=("out_shape",),
        traits=("no_fold",),
        family="random",
        doc=f"draws: {_doc}",
    )


#: the counter's second word for the key a random op passes on (its first is the op's stream)
NEXT = 0xFFFFFFFF


def _next_key(key, stream):
    y0, y1 = threefry2x32(key[0], key[1], stream, NEXT)
    return np.stack([y0, y1]).astype(np.uint32)


define("NextKey", inputs=("key: uint32",), outputs=("out: uint32",), dtypes={}, type_rule=lambda types, a: [types[0]],
       semantics=_next_key, attributes={"stream": (int, REQUIRED)}, family="random",
       doc="the key a random op of `stream` passes on (PyTensor's next generator): threefry(key, (stream, 2**32 - 1))")
