"""Writing models to files, with ONNX external data for those protobuf cannot hold.

A protobuf message cannot exceed 2 GiB, so a model with more weights than that
cannot be serialised in one piece: onnx's checker and onnxruntime must read it
from a file whose large tensors live in a separate data file (external data).
The in-memory `ModelProto` stays whole either way.
"""

from __future__ import annotations

import math
import os
import tempfile

import onnx
from onnx import helper
from onnx.external_data_helper import load_external_data_for_tensor, set_external_data

#: a model estimated larger than this is written with external data (tests lower it)
MAX_PROTO_BYTES = onnx.checker.MAXIMUM_PROTOBUF
#: tensors at least this large go to the data file when a model is written with external data
EXTERNAL_DATA_MIN_BYTES = 1024
#: an upper bound of what one node or tensor header adds to the serialised model
_OVERHEAD_BYTES = 1024


def model_nbytes(model: onnx.ModelProto) -> int:
    """An upper bound of the model's serialised size, without serialising it (a 2 GiB copy)."""
    graph = model.graph
    return sum(_tensor_nbytes(t) for t in graph.initializer) + _OVERHEAD_BYTES * (len(graph.node) + len(graph.initializer) + 1)


def needs_external_data(model: onnx.ModelProto) -> bool:
    return model_nbytes(model) > MAX_PROTO_BYTES


def _tensor_nbytes(tensor: onnx.TensorProto) -> int:
    if not tensor.HasField("raw_data"):
        return tensor.ByteSize()  # small typed fields (numpy_helper writes raw_data for arrays)
    return math.prod(tensor.dims) * helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize


def save_model(model: onnx.ModelProto, path: str, external_data: bool) -> None:
    """Write `model` to `path`; with `external_data`, its large tensors go to `<path>.data`.

    `model` is left as it was (onnx's own saver moves the tensors' bytes out of it).
    """
    if not external_data:
        onnx.save_model(model, path)
        return
    directory = os.path.dirname(os.path.abspath(path))
    location = os.path.basename(path) + ".data"
    data_path = os.path.join(directory, location)
    if os.path.exists(data_path):
        os.remove(data_path)  # onnx appends to an existing data file
    moved = [t for t in model.graph.initializer if t.HasField("raw_data") and _tensor_nbytes(t) >= EXTERNAL_DATA_MIN_BYTES]
    try:
        for tensor in moved:
            set_external_data(tensor, location)
        onnx.save_model(model, path)  # writes each marked tensor to the data file and clears its raw_data
    finally:
        for tensor in moved:  # the bytes back, from the file where they were written
            if tensor.HasField("raw_data"):
                del tensor.external_data[:]
                tensor.data_location = onnx.TensorProto.DEFAULT
            else:
                load_external_data_for_tensor(tensor, directory)


class TempCopy:
    """The model written with external data to a temporary directory, on first use.

    onnx's checker and onnxruntime read a model over 2 GiB from such a file; the
    directory lives as long as this object (shared by a model's sessions).
    """

    def __init__(self, model: onnx.ModelProto):
        self._model = model
        self._dir: tempfile.TemporaryDirectory | None = None

    def path(self) -> str:
        if self._dir is None:
            directory = tempfile.TemporaryDirectory(prefix="ptonnx-")
            save_model(self._model, os.path.join(directory.name, "model.onnx"), external_data=True)
            self._dir = directory
        return os.path.join(self._dir.name, "model.onnx")
