"""The rewrite driver, for passes: it lives in the IR (ptonnx/ir/rewrite.py) so that lifting's
idioms (ptonnx/lifting/idioms.py) use it too without importing the passes."""

from ptonnx.ir.rewrite import Replacement, Rewrite, apply_rewrites, node_rewriter, only_used_by  # noqa: F401

__all__ = ["Replacement", "Rewrite", "apply_rewrites", "node_rewriter", "only_used_by"]
