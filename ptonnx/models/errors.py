"""Errors of the model builders: bad weights or a bad model argument.

They live here rather than in `ptonnx/errors.py` because only `ptonnx.models`
raises them; they still derive from `PtonnxError`, so `except PtonnxError`
catches them.
"""

from __future__ import annotations

from ptonnx.errors import PtonnxError


class WeightsError(PtonnxError, ValueError):
    """Given weights do not match the model's state_dict spec (missing, extra or mis-shaped keys).

    `missing`, `extra` and `misshaped` keep the offending keys for programs;
    the message lists every one of them.
    """

    def __init__(self, message: str, missing=(), extra=(), misshaped=None):
        self.missing = tuple(missing)
        self.extra = tuple(extra)
        self.misshaped = dict(misshaped or {})
        super().__init__(message)


class ModelArgumentError(PtonnxError, ValueError):
    """A model-building argument (image size, batch, block name) is out of range."""
