"""Linear algebra as decompositions: Loops over blocks, the flops in MatMul."""

from ptonnx.decompositions.linalg import cholesky, expm, lu, triangular  # noqa: F401  (register the decompositions)
