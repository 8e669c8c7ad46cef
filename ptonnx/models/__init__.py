"""Models built as PyTensor graphs with named constant weights: YOLO11n and its blocks."""

from ptonnx.models.block_graphs import BLOCKS, block_graph
from ptonnx.models.errors import ModelArgumentError, WeightsError
from ptonnx.models.yolo11n import SIGNAL_GAIN, random_weights, yolo11n, yolo11n_state_dict_spec

__all__ = [
    "BLOCKS", "SIGNAL_GAIN", "ModelArgumentError", "WeightsError", "block_graph",
    "random_weights", "yolo11n", "yolo11n_state_dict_spec",
]
