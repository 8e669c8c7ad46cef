"""What the target runtime (onnxruntime's CPU provider) cannot run, as data.

Shared by lowering (which refuses such models) and passes (which can rewrite
around the gaps); it names IR ops and dtypes, and imports neither PyTensor
nor ONNX. Probed on onnxruntime 1.31.
"""

#: IR ops onnxruntime has no float64 kernel for (FusedConv lowers to a Conv)
NO_FLOAT64_KERNEL = frozenset({"Conv", "FusedConv", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Resize", "Erf"})
