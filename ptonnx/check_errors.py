"""What a failed run-time check of a compiled model raises.

Lowering writes each check's Gather node name, message and exception class to
the model's metadata (`ptonnx.lowering.check`). When onnxruntime stops on one of
those nodes, the model raises a `ptonnx.errors.CheckFailedError` that is also
the exception PyTensor raises there (AssertionError for Assert and SpecifyShape,
the op's own class for CheckAndRaise), so code written for PyTensor catches it.
"""

from __future__ import annotations

import builtins
import json
import re
import sys

from ptonnx.errors import CheckFailedError
from ptonnx.lowering.check import CHECKS_KEY, FLAGS_KEY

_NODE = re.compile(r"Name:'([^']+)'")
_CLASSES: dict[type, type] = {}


def read_checks(model) -> dict[str, dict[str, str]]:
    """The checks recorded in an ONNX model: node name -> {"message", "exception"}."""
    for prop in model.metadata_props:
        if prop.key == CHECKS_KEY:
            return json.loads(prop.value)
    return {}


def read_flags(model) -> list[str]:
    """The checks whose failure flags a model lowered for IREE gives after the user's outputs, in order."""
    for prop in model.metadata_props:
        if prop.key == FLAGS_KEY:
            return json.loads(prop.value)
    return []


def failed_check(exc: BaseException, checks: dict[str, dict[str, str]]) -> CheckFailedError | None:
    """The exception to raise for an onnxruntime error, when it comes from a check (also one
    in a Loop or If body: the error then names the Loop or If first, the check after)."""
    check = next((checks[name] for name in _NODE.findall(str(exc)) if name in checks), None)
    return None if check is None else check_exception(check)


def check_exception(check: dict[str, str]) -> CheckFailedError:
    """The exception a failed check raises (its metadata entry: message, exception class)."""
    return _error_class(check.get("exception", ""))(check["message"])


def _exception_class(spec: str) -> type | None:
    """"module:qualname" of an already imported module (a model's metadata never imports code)."""
    module_name, _, qualname = spec.partition(":")
    obj = builtins if module_name == "builtins" else sys.modules.get(module_name)
    for part in qualname.split(".") if obj is not None else ():
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) and issubclass(obj, Exception) else None


def _error_class(spec: str) -> type:
    base = _exception_class(spec)
    if base is None or issubclass(base, CheckFailedError):
        return CheckFailedError
    if base not in _CLASSES:
        try:
            _CLASSES[base] = type(base.__name__, (CheckFailedError, base), {"__module__": "ptonnx.errors"})
        except TypeError:  # a base whose layout cannot be combined (e.g. OSError)
            _CLASSES[base] = CheckFailedError
    return _CLASSES[base]
