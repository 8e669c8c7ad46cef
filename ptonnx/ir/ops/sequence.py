"""Ops along one axis whose result depends on the order of the elements: CumSum,
CumProd (NumPy's cumsum/cumprod) and Sort (values and the indices that sort,
ascending, stable, NaN last: NumPy's `kind="stable"`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import ALL_DTYPES, NUMERIC_DTYPES, TensorType


def _axis_rule(op: str):
    def rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
        (x,) = types
        _need(0 <= a["axis"] < x.ndim, op, lambda: f"axis {a['axis']} must be in [0, {x.ndim})")
        return [x] if op != "Sort" else [x, x.with_dtype("int64")]

    return rule


def _cumulative(ufunc):
    def semantics(x, axis):
        with np.errstate(all="ignore"):
            return ufunc.accumulate(x, axis=axis, dtype=x.dtype)

    return semantics


def _sort(x, axis):
    order = np.argsort(x, axis=axis, kind="stable")
    return np.take_along_axis(x, order, axis=axis), order.astype(np.int64)


for _name, _ufunc in (("CumSum", np.add), ("CumProd", np.multiply)):
    define(_name, inputs=("x: T",), outputs=("out: T",), dtypes={"T": NUMERIC_DTYPES}, type_rule=_axis_rule(_name),
           semantics=_cumulative(_ufunc), attributes={"axis": (int, REQUIRED)}, traits=("batchable",), family="sequence",
           doc=f"running {'sums' if _name == 'CumSum' else 'products'} along `axis` (NumPy's {_ufunc.__name__}.accumulate)")
define("Sort", inputs=("x: T",), outputs=("values: T", "indices: int64"), dtypes={"T": ALL_DTYPES},
       type_rule=_axis_rule("Sort"), semantics=_sort, attributes={"axis": (int, REQUIRED)}, family="sequence",
       doc="ascending along `axis`, stable, NaN last; the sorted values and the indices that sort")
