"""Decompositions: the functions onnxruntime lacks, written as IR rewrites (`registry.py`)."""

from ptonnx.decompositions import elementary, linalg, random, special  # noqa: F401  (registers the decompositions)
from ptonnx.decompositions.registry import DECOMPOSITIONS, Decomposition, decomposes

__all__ = ["DECOMPOSITIONS", "Decomposition", "decomposes"]
