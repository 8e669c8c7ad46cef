"""Linear algebra as decompositions: Loops over blocks, the flops in MatMul."""

from ptonnx.decompositions.linalg import cholesky, determinant, eigh, expm, lu, qr, schur, svd, sylvester, triangular  # noqa: F401  (register them)
