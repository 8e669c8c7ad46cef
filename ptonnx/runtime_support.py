"""What the target runtime (onnxruntime's CPU provider) cannot run, as data.

Shared by lowering (which refuses such models) and passes (which can rewrite
around the gaps); it names IR ops and dtypes, and imports neither PyTensor
nor ONNX. Probed on onnxruntime 1.31.
"""

#: IR ops onnxruntime has no float64 kernel for (FusedConv lowers to a Conv)
NO_FLOAT64_KERNEL = frozenset({"Conv", "FusedConv", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Resize", "Erf"})


#: (ONNX op, dtype) pairs valid in ONNX that onnxruntime's CPU provider has no
#: kernel for, and the dtype that computes the same result exactly. Probed on
#: onnxruntime 1.31 with every opset-18 elementwise op and dtype.
RUNTIME_WIDENING = {
    ("Max", "int16"): "int32",
    ("Max", "uint16"): "uint32",
    ("Min", "int16"): "int32",
    ("Min", "uint16"): "uint32",
    ("Where", "bool"): "uint8",
    ("Where", "int16"): "int32",
    ("Where", "uint16"): "uint32",
    ("Where", "uint64"): "int64",  # a pure selection: the bit pattern round-trips
}
