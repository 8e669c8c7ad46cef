"""Calling a model IREE compiled, at the lowest cost IREE's Python runtime offers.

`iree.runtime.FunctionInvoker` (what `context.modules.module[name](...)` calls) costs 5.1 µs
per input or output, twice this path's 2.5 (`benchmarks/results/iree_call.md`): it packs
arguments and wraps every result in a `DeviceArray` through several Python layers. `IreeCall` does what it does with the runtime's own
objects: one `allocate_buffer_copy` per input, `VmContext.invoke`, one `map` per output read
through the buffer protocol (not `MappedMemory.asarray`, which costs more) and copied (the
mapping lives only as long as IREE's buffer). The lowering
packs a model's static inputs and outputs of one dtype into one buffer each
(`lowering/iree_signature.py`); `Signature` packs and unpacks the user's arrays. What both
cost: `python -m benchmarks.iree_call --write`.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import helper

from ptonnx.errors import RuntimeMismatchError
from ptonnx.lowering.iree_signature import SIGNATURE_KEY


class Signature:
    """How the user's inputs and outputs map to the compiled model's (packed) ones."""

    def __init__(self, model: onnx.ModelProto):
        layout = next((json.loads(p.value) for p in model.metadata_props if p.key == SIGNATURE_KEY), None)
        self.n_inputs = len(layout["inputs"]) if layout else None
        #: per compiled input: an original position, or [(position, offset, size), ...]
        self._inputs = _places(layout["inputs"]) if layout else None
        #: per original output: (compiled position, None) or (compiled position, (offset, size, shape))
        self._outputs = [(p[0], None if len(p) == 1 else (p[1], int(np.prod(p[2], dtype=np.int64)), tuple(p[2])))
                         for p in layout["outputs"]] if layout else None
        self._dtypes = [helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type) for i in model.graph.input]

    def pack(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        if self._inputs is None:
            return arrays
        if len(arrays) != self.n_inputs:
            raise RuntimeMismatchError(f"the model takes {self.n_inputs} inputs, got {len(arrays)}")
        packed = []
        for place, dtype in zip(self._inputs, self._dtypes, strict=True):
            if isinstance(place, int):
                packed.append(arrays[place])
                continue
            buffer = np.empty(place[-1][1] + place[-1][2], dtype)
            for k, start, size in place:
                if arrays[k].size != size:
                    raise RuntimeMismatchError(f"input {k} has {arrays[k].size} elements where the model takes {size}")
                buffer[start: start + size] = arrays[k].reshape(-1)
            packed.append(buffer)
        return packed

    def unpack(self, outputs: list[np.ndarray]) -> list[np.ndarray]:
        if self._outputs is None:
            return outputs
        return [outputs[k] if piece is None else outputs[k][piece[0]: piece[0] + piece[1]].reshape(piece[2])
                for k, piece in self._outputs]


def _places(entries: list) -> list:
    places: list = []
    for k, entry in enumerate(entries):
        if len(entry) == 1:
            places.append(k)
            continue
        position, offset, shape = entry
        if position == len(places):
            places.append([])
        places[position].append((k, offset, int(np.prod(shape, dtype=np.int64))))
    return places


class IreeCall:
    """One compiled function of an IREE context, called with numpy arrays of the dtypes its
    inputs and outputs were compiled with."""

    def __init__(self, runtime, context, name: str, input_dtypes: list[np.dtype], output_dtypes: list[np.dtype]):
        from iree.runtime.array_interop import map_dtype_to_element_type

        self._runtime = runtime
        self._device = context.config.device
        self._allocator = self._device.allocator
        self._vm_context = context.vm_context
        self._function = context.modules.module[name].vm_function
        self._input_types = [map_dtype_to_element_type(np.dtype(d)) for d in input_dtypes]
        self._n_outputs = len(output_dtypes)
        #: IREE element type -> numpy dtype, for the element types the outputs may come in
        self._dtypes = {int(map_dtype_to_element_type(np.dtype(d))): np.dtype(d) for d in output_dtypes}
        self._memory, self._usage = runtime.MemoryType.DEVICE_LOCAL, runtime.BufferUsage.DEFAULT

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        runtime, allocate = self._runtime, self._allocator.allocate_buffer_copy
        args = runtime.VmVariantList(len(arrays))
        for a, element_type in zip(arrays, self._input_types, strict=True):
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            args.push_ref(allocate(memory_type=self._memory, allowed_usage=self._usage, device=self._device, buffer=a,
                                   element_type=element_type))
        results = runtime.VmVariantList(self._n_outputs)
        self._vm_context.invoke(self._function, args, results)
        outputs = []
        for k in range(self._n_outputs):
            view = results.get_as_object(k, runtime.HalBufferView)
            dtype = self._dtypes.get(int(view.element_type)) or runtime.HalElementType.map_to_dtype(view.element_type)
            outputs.append(np.frombuffer(view.map(), dtype=dtype).reshape(view.shape).copy())
        return outputs
