"""Run-time checks: `Check(x, *conds)` is `x` when every element of every cond is
true, and fails the run otherwise (PyTensor's Assert, CheckAndRaise, SpecifyShape,
Alloc's broadcast rule).

A check guards the value that depends on it: a shape vector before a Reshape or
an Expand, or a tensor. Dead-code elimination drops a check whose result is
unused, as PyTensor drops an unused Assert. `message` is what the user reads;
`exception` names the exception class PyTensor raises ("module:qualname").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.errors import CheckFailedError
from ptonnx.ir import dims
from ptonnx.ir import range_rules as rr
from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import ALL_DTYPES, TensorType


def _check_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    return [types[0]]


def _check(x, *conds, message, exception):
    if not all(bool(np.all(c)) for c in conds):
        raise CheckFailedError(message)
    return x


define("Check", ranges=rr.same, contents=dims.same_contents, inputs=("x: T", "*conds: bool"), outputs=("out: T",), dtypes={"T": ALL_DTYPES},
       type_rule=_check_rule, semantics=_check, family="check",
       attributes={"message": (str, REQUIRED), "exception": (str, "builtins:AssertionError")},
       traits=("nan_in_nan_out", "effect"), doc="`x`, after checking that every cond is all true; a false one fails the run with `message`")
