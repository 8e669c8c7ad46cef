"""Small helpers shared by type rules."""

from __future__ import annotations

from ptonnx.errors import TypeRuleError


def need(cond: bool, op: str, message) -> None:
    """Raise `TypeRuleError` unless `cond`; `message` may be a callable, formatted only on failure
    (type rules run for every node a pass builds: eager f-strings were a third of the fusion pass)."""
    if not cond:
        raise TypeRuleError(f"{op}: {message() if callable(message) else message}")
