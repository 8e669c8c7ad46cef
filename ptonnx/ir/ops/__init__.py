"""IR op definitions; importing this package registers every op."""

from ptonnx.ir.ops import bits, check, creation, elementwise, indexing, shape  # noqa: F401
from ptonnx.ir.ops import random  # noqa: F401  (builds on bits)
from ptonnx.ir.ops import nn, reduction, sequence, special, tensor  # noqa: F401
from ptonnx.ir.ops import fused  # noqa: F401  (builds on nn.Conv)
from ptonnx.ir.ops import control  # noqa: F401
from ptonnx.ir.ops import linalg, linalg_eigen, linalg_orthogonal, linalg_schur, linalg_sylvester  # noqa: F401
