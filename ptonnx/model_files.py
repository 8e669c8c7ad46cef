"""Writing models to files, with ONNX external data for those protobuf cannot hold.

A protobuf message cannot exceed 2 GiB, so a model with more weights than that
cannot be serialised in one piece: onnx's checker and onnxruntime must read it
from a file whose large tensors live in a separate data file (external data).
The in-memory `ModelProto` stays whole, and is never edited, either way.
"""

from __future__ import annotations

import math
import os
import tempfile

import onnx
from onnx import helper

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

    `model` is not touched: with external data, a skeleton (every field but the large
    tensors' bytes, which point into the data file) is written. Moving the bytes out of
    `model` and back, as onnx's saver does, would leave a second copy of every weight in
    protobuf's arena for as long as the model lives.
    """
    if not external_data:
        onnx.save_model(model, path)
        return
    directory = os.path.dirname(os.path.abspath(path))
    location = os.path.basename(path) + ".data"
    skeleton = onnx.ModelProto()
    _copy_fields(model, skeleton, skip="graph")
    _copy_fields(model.graph, skeleton.graph, skip="initializer")
    with open(os.path.join(directory, location), "wb") as data:
        for tensor in model.graph.initializer:
            if not (tensor.HasField("raw_data") and _tensor_nbytes(tensor) >= EXTERNAL_DATA_MIN_BYTES):
                skeleton.graph.initializer.add().CopyFrom(tensor)
                continue
            offset = _align(data.tell())
            data.seek(offset)
            data.write(tensor.raw_data)  # one tensor's bytes at a time
            moved = skeleton.graph.initializer.add()
            _copy_fields(tensor, moved, skip="raw_data")
            moved.data_location = onnx.TensorProto.EXTERNAL
            for key, value in (("location", location), ("offset", offset), ("length", data.tell() - offset)):
                moved.external_data.add(key=key, value=str(value))
    onnx.save_model(skeleton, path)


def _copy_fields(source, target, skip: str) -> None:
    """Every set field of the message `source` but `skip`, copied into `target`."""
    for field, value in source.ListFields():
        if field.name == skip:
            continue
        if field.is_repeated:
            getattr(target, field.name).extend(value)
        elif field.message_type is not None:
            getattr(target, field.name).CopyFrom(value)
        else:
            setattr(target, field.name, value)


def _align(offset: int, to: int = 4096) -> int:
    """Tensors start on page boundaries in the data file (where onnxruntime can map them)."""
    return -(-offset // to) * to


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
