"""Audits of the installed runtime and of ptonnx's numbers, run by scripts and re-checked by tests.

Kernel audit: `references.kernels` probes every (ONNX op, dtype) ptonnx emits against
NumPy/SciPy with values at the ends of the range; `python -m audit.kernel_audit
--write` writes the table to `audit/results/kernels.md`. The quirks it finds are
recorded in `ptonnx/onnxruntime_kernels.py` (KERNEL_QUIRKS), and
`tests/test_kernel_audit.py` fails when the installed onnxruntime no longer
matches that record.
"""
