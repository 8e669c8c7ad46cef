"""A differential fuzzer: random PyTensor graphs through ptonnx and onnxruntime, against PyTensor.

`python -m fuzz --seconds 600 --seed 0` runs it (see `fuzz.cli`); a seed
reproduces one graph (`fuzz.generate.generate(seed)`), `fuzz.check` judges it.
"""

from fuzz.check import KINDS, OUTCOMES, Finding, check_program
from fuzz.generate import Program, generate

__all__ = ["KINDS", "OUTCOMES", "Finding", "Program", "check_program", "generate"]
