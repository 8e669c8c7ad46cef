"""Passes over the IR. They see only the IR: no PyTensor, no ONNX."""

from ptonnx.passes.base import Pass, PassResult
from ptonnx.passes.constant_folding import ConstantFolding
from ptonnx.passes.dce import DeadCodeElimination
from ptonnx.passes.fuse_conv_bn_silu import FuseConvBnSilu
from ptonnx.passes.hoist_loop_invariants import HoistLoopInvariants
from ptonnx.passes.manager import DEFAULT_PASSES, PASSES, PassManager, PassRecord, Report, resolve
from ptonnx.passes.rewrite import Replacement, Rewrite, apply_rewrites, node_rewriter, only_used_by
from ptonnx.passes.unify_dtypes import UnifyDtypes

__all__ = [
    "DEFAULT_PASSES", "PASSES", "ConstantFolding", "DeadCodeElimination",
    "FuseConvBnSilu", "HoistLoopInvariants", "Pass", "PassManager",
    "PassRecord", "PassResult", "Replacement", "Report", "Rewrite", "UnifyDtypes", "apply_rewrites",
    "node_rewriter", "only_used_by", "resolve",
]
