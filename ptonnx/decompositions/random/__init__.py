"""Random draws as decompositions over Threefry-2x32 bits (see `bits.py` for the key convention)."""

from ptonnx.decompositions.random import bits, continuous, discrete  # noqa: F401  (register the decompositions)
from ptonnx.decompositions.random import gamma, vonmises  # noqa: F401  (rejection samplers)
from ptonnx.decompositions.random import multivariate, permutations  # noqa: F401  (multivariate draws, draws without replacement)
from ptonnx.decompositions.random import binomial, hypergeometric, poisson  # noqa: F401  (discrete draws by loops)
