"""Why a runtime departs on a program: (program, runtime) -> the explanation and its reproducer.

A departure the matrix finds that is not here is "not explained yet" in docs/portability.md, and
fails `tests/test_portability.py` for the columns CI runs.
"""

from __future__ import annotations

DEVIATIONS: dict[tuple[str, str], str] = {
    ("betainc", "IREE"): "iree-compile 3.13 cannot legalise an ONNX `Loop` (docs/iree.md); ptonnx refuses the model.",
    ("cholesky_solve", "IREE"): "iree-compile 3.13 cannot legalise an ONNX `Loop` (docs/iree.md); ptonnx refuses the model.",
    ("ar1_scan", "IREE"): "a Loop whose body has a run-time check: IREE cannot report it, ptonnx refuses the model (docs/iree.md).",
    ("eigvalsh", "IREE"): "a Loop whose body has a run-time check: IREE cannot report it, ptonnx refuses the model (docs/iree.md).",
    ("reductions_indexing", "IREE"): "IREE sorts NaN first; ptonnx refuses float sorts for IREE (docs/iree.md).",
}
