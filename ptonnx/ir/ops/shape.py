"""Layout IR ops: Transpose, Unsqueeze, Squeeze (ONNX meaning; axes are attributes here)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ptonnx.errors import TypeRuleError
from ptonnx.ir.registry import OpSchema, register
from ptonnx.ir.types import ALL_DTYPES, TensorType


def _transpose_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (t,) = types
    perm = a["perm"]
    if sorted(perm) != list(range(t.ndim)):
        raise TypeRuleError(f"Transpose perm {perm} is not a permutation of {t.ndim} axes")
    return [t.with_shape(tuple(t.shape[p] for p in perm))]


def _unsqueeze_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (t,) = types
    axes = a["axes"]
    ndim = t.ndim + len(axes)
    if sorted(axes) != list(axes) or len(set(axes)) != len(axes) or any(not 0 <= ax < ndim for ax in axes):
        raise TypeRuleError(f"Unsqueeze axes {axes} must be sorted, distinct and in [0, {ndim})")
    dims = iter(t.shape)
    return [t.with_shape(tuple(1 if i in axes else next(dims) for i in range(ndim)))]


def _squeeze_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    (t,) = types
    axes = a["axes"]
    if sorted(set(axes)) != list(axes) or any(not 0 <= ax < t.ndim for ax in axes):
        raise TypeRuleError(f"Squeeze axes {axes} must be sorted, distinct and in [0, {t.ndim})")
    for ax in axes:
        if t.shape[ax] not in (1, None) and not isinstance(t.shape[ax], str):
            raise TypeRuleError(f"Squeeze of axis {ax} with static size {t.shape[ax]} (must be 1)")
    return [t.with_shape(tuple(d for i, d in enumerate(t.shape) if i not in axes))]



SHAPE_OPS = {
    "Transpose": (_transpose_rule, lambda x, perm: np.transpose(x, perm), "perm", "permute axes"),
    "Unsqueeze": (_unsqueeze_rule, lambda x, axes: np.expand_dims(x, axes), "axes", "insert size-1 axes (positions in the output)"),
    "Squeeze": (_squeeze_rule, lambda x, axes: np.squeeze(x, axes) if axes else x, "axes", "drop size-1 axes"),
}

for _name, (_rule, _fn, _attr, _doc) in SHAPE_OPS.items():
    register(
        OpSchema(
            name=_name,
            inputs=("T",),
            outputs=("T",),
            constraints={"T": ALL_DTYPES},
            type_rule=_rule,
            semantics=_fn,
            attributes={_attr: (tuple, attrs.NOTHING)},
            family="shape",
            layout_only=True,
            doc=_doc,
        )
    )
