"""Creation IR ops: Range (NumPy's arange of 0-D start, limit and delta)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir import range_rules as rr
from ptonnx.ir.schema import define
from ptonnx.ir.types import NUMERIC_DTYPES, TensorType


def _range_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    _need(all(t.ndim == 0 for t in types), "Range", lambda: f"start, limit and delta must be 0-D, got {list(types)}")
    bounds = (a["start"], a["limit"], a["delta"])
    length = None
    if all(isinstance(b, int | float) for b in bounds):
        start, limit, delta = bounds
        _need(delta != 0, "Range", "a delta of 0")
        length = max(math.ceil((limit - start) / delta), 0)
    return [TensorType(types[0].dtype, (length,))]


define("Range", ranges=rr.arange, inputs=("start: T", "limit: T", "delta: T"), outputs=("out: T",), dtypes={"T": NUMERIC_DTYPES},
       type_rule=_range_rule, reads=("start", "limit", "delta"), family="creation",
       semantics=lambda start, limit, delta: np.arange(start.item(), limit.item(), delta.item(), dtype=start.dtype),
       doc="start, start + delta, ... up to (not including) limit: NumPy's arange of the Python numbers "
           "(PyTensor's ARange; arange of 0-D arrays counts in their dtype and wraps)")
