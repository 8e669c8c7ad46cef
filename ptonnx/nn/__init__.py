"""CNN ops PyTensor lacks, as PyTensor Ops with NumPy `perform`s and IR liftings.

Layouts and semantics follow PyTorch and ONNX: NCHW data, OIHW weights; see
each module for padding order, ceil-mode and resize coordinate rules.
"""

from ptonnx.nn.activation import SiLU, silu
from ptonnx.nn.conv import Conv2D, conv2d
from ptonnx.nn.norm import BatchNorm, batch_norm
from ptonnx.nn.pool import GlobalPool2D, Pool2D, avg_pool2d, global_avg_pool2d, global_max_pool2d, max_pool2d
from ptonnx.nn.resize import Resize, resize, upsample

__all__ = [
    "BatchNorm", "Conv2D", "GlobalPool2D", "Pool2D", "Resize", "SiLU",
    "avg_pool2d", "batch_norm", "conv2d", "global_avg_pool2d", "global_max_pool2d",
    "max_pool2d", "resize", "silu", "upsample",
]
