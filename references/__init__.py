"""What the tests and the audits both check against: the high-precision references (mpmath) of
the special functions (`*_reference.py`, `special_constants.py`) and the onnxruntime kernel
probe (`kernels.py`: every (ONNX op, dtype) ptonnx emits, probed against NumPy/SciPy with
values at the ends of the range; `probe`, `emitted`, `chains`, `reference`, `values`).

`tests/` and `audit/` import from here; nothing here imports either. The audits'
command lines and their written results stay in `audit/`.
"""
