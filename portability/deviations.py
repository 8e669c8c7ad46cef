"""Why a runtime departs on a program: (program, runtime) -> the explanation and its reproducer.

A departure the matrix finds that is not here is "not explained yet" in docs/portability.md, and
fails `tests/test_portability.py` for the columns CI runs.
"""

from __future__ import annotations

DEVIATIONS: dict[tuple[str, str], str] = {
    **{(name, "IREE"): "ptonnx's Loop form for IREE (per-trip values in buffers allocated before the Loop) needs "
                       "per-trip sizes known outside the body; these are not, and sizing the buffer from a first "
                       "trip made IREE 3.13 write wrong rows, so ptonnx refuses the model (docs/iree.md)"
       for name in ("cholesky_solve", "ar1_scan", "eigvalsh")},
    ("betainc", "IREE"): "its Loop body compiles to a dispatch needing 100 push constants, over IREE's CPU runtime "
                         "limit of 64: ptonnx refuses it at load (docs/iree.md)",
    ("reductions_indexing", "IREE"): "iree-compile 3.13 cannot compile a float TopK of run-time size; ptonnx "
                                     "refuses it (docs/iree.md; at static sizes sorts run, NaN last).",
    ("affine_int8_literal", "OpenVINO (float32 programs)"):
        "OpenVINO folds ((x * 2) + 3) / 4 into x / 2 + 0.75, so 2x no longer overflows for x near the float32 "
        "maximum (3.4e38 gives 1.7e38 where IEEE float32 and PyTensor give inf): its rewrites do not keep "
        "IEEE semantics. Not worked around: ptonnx emits x * 2 as written.",
}
