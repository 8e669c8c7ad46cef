"""Models too large for one protobuf message, and writing models to files.

A protobuf message cannot exceed 2 GiB, so a model with more weights than that
cannot be serialised in one piece: onnx's checker and onnxruntime must read it from a
file whose large tensors live in a separate data file (ONNX external data).

Such a model is lowered with its large tensors as references from the start: the
in-memory `ModelProto` holds each one's name, dtype, dims and place in the data file,
and the bytes stay in the IR's arrays (the `weights`: name -> read-only array; a lifted
weight is a view of the user's own array). Nothing copies them: the data file is
written straight from the arrays, and onnxruntime is handed the same arrays as shared
initializers. A model under the limit is whole, as `onnx.load` would give it.
"""

from __future__ import annotations

import math
import os
import tempfile

import numpy as np
import onnx
from onnx import helper

#: a model estimated larger than this is written with external data (tests lower it)
MAX_PROTO_BYTES = onnx.checker.MAXIMUM_PROTOBUF
#: tensors at least this large go to the data file when a model is written with external data
EXTERNAL_DATA_MIN_BYTES = 1024
#: an upper bound of what one node or tensor header adds to the serialised model
_OVERHEAD_BYTES = 1024
#: the data file the in-memory references name (beside `model.onnx` in a `TempCopy`)
WEIGHTS_FILE = "model.onnx.data"


def too_large(arrays, nodes: int) -> bool:
    """Whether a model of these initializer arrays and `nodes` nodes could exceed one protobuf message."""
    arrays = list(arrays)
    return sum(a.nbytes for a in arrays) + _OVERHEAD_BYTES * (nodes + len(arrays) + 1) > MAX_PROTO_BYTES


def model_nbytes(model: onnx.ModelProto) -> int:
    """An upper bound of the model's serialised size, without serialising it (a 2 GiB copy)."""
    graph = model.graph
    return sum(_tensor_nbytes(t) for t in graph.initializer) + _OVERHEAD_BYTES * (len(graph.node) + len(graph.initializer) + 1)


def needs_external_data(model: onnx.ModelProto) -> bool:
    return any(map(is_reference, model.graph.initializer)) or model_nbytes(model) > MAX_PROTO_BYTES


def is_reference(tensor: onnx.TensorProto) -> bool:
    return tensor.data_location == onnx.TensorProto.EXTERNAL


def stored_outside(array: np.ndarray) -> bool:
    """Whether a model written with external data keeps `array` in its data file (large, and
    stored as raw little-endian bytes)."""
    return array.nbytes >= EXTERNAL_DATA_MIN_BYTES and array.dtype.kind in "biuf" and array.dtype.byteorder != ">"


def refer(tensor: onnx.TensorProto, name: str, array: np.ndarray, offset: int) -> int:
    """Make `tensor` a reference to `array` at the first page boundary from `offset` in
    `WEIGHTS_FILE`; returns where the next tensor may start."""
    tensor.name = name
    tensor.data_type = helper.np_dtype_to_tensor_dtype(array.dtype)
    tensor.dims.extend(array.shape)
    start = _align(offset)
    _point(tensor, WEIGHTS_FILE, start, array.nbytes)
    return start + array.nbytes


def _point(tensor: onnx.TensorProto, location: str, offset: int, length: int) -> None:
    tensor.data_location = onnx.TensorProto.EXTERNAL
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        tensor.external_data.add(key=key, value=str(value))


def _tensor_nbytes(tensor: onnx.TensorProto) -> int:
    if not tensor.HasField("raw_data"):
        return tensor.ByteSize()  # small typed fields (numpy_helper writes raw_data for arrays); references
    return math.prod(tensor.dims) * helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize


def save_model(model: onnx.ModelProto, path: str, external_data: bool, weights: dict | None = None) -> None:
    """Write `model` to `path`; with `external_data`, its large tensors go to `<path>.data`.

    `weights` holds the arrays of the tensors `model` refers to. `model` is not touched:
    with external data, a skeleton (every field but the large tensors' bytes, which point
    into the data file) is written; the bytes go to the file one tensor at a time, the
    referred arrays without any copy. Moving the bytes out of `model` and back, as onnx's
    saver does, would leave a second copy of every weight in protobuf's arena.
    """
    weights = weights or {}
    if not external_data:
        onnx.save_model(_whole(model, weights) if weights else model, path)
        return
    location = os.path.basename(path) + ".data"
    skeleton = onnx.ModelProto()
    _copy_fields(model, skeleton, skip="graph")
    _copy_fields(model.graph, skeleton.graph, skip="initializer")
    with open(os.path.join(os.path.dirname(os.path.abspath(path)), location), "wb") as data:
        for tensor in model.graph.initializer:
            if is_reference(tensor):
                source = _bytes_of(weights[tensor.name])
            elif tensor.HasField("raw_data") and _tensor_nbytes(tensor) >= EXTERNAL_DATA_MIN_BYTES:
                source = tensor.raw_data  # one tensor's bytes at a time
            else:
                skeleton.graph.initializer.add().CopyFrom(tensor)
                continue
            offset = _align(data.tell())
            data.seek(offset)
            data.write(source)
            moved = skeleton.graph.initializer.add()
            _copy_fields(tensor, moved, skip="raw_data")
            _point(moved, location, offset, data.tell() - offset)
    onnx.save_model(skeleton, path)


def _whole(model: onnx.ModelProto, weights: dict) -> onnx.ModelProto:
    """A copy of `model` with its referred tensors' bytes inline (one file, asked for by name)."""
    whole = onnx.ModelProto()
    whole.CopyFrom(model)
    for tensor in whole.graph.initializer:
        if is_reference(tensor):
            del tensor.external_data[:]
            tensor.data_location = onnx.TensorProto.DEFAULT
            tensor.raw_data = _bytes_of(weights[tensor.name]).tobytes()
    return whole


def _bytes_of(array: np.ndarray) -> memoryview:
    """The array's bytes, without a copy (a weight is C-contiguous and little-endian)."""
    return memoryview(np.ascontiguousarray(array)).cast("B")


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

    def __init__(self, model: onnx.ModelProto, weights: dict | None = None):
        self._model = model
        self._weights = weights
        self._dir: tempfile.TemporaryDirectory | None = None

    def path(self) -> str:
        if self._dir is None:
            directory = tempfile.TemporaryDirectory(prefix="ptonnx-")
            save_model(self._model, os.path.join(directory.name, "model.onnx"), external_data=True, weights=self._weights)
            self._dir = directory
        return os.path.join(self._dir.name, "model.onnx")
