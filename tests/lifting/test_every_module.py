"""Every lifting module has its own test module, tests/lifting/test_<module>.py, which names every
PyTensor Op class (and scalar op class with a rule of its own) the module registers a rule for."""

from __future__ import annotations

import re
from pathlib import Path

import ptonnx.lifting
from ptonnx.lifting import LIFTERS
from ptonnx.lifting.elemwise import SPECIAL

LIFTING = Path(ptonnx.lifting.__file__).parent
TESTS = Path(__file__).parent
#: modules that register no rule: the package, the lifting state and the dispatch table
INFRASTRUCTURE = frozenset({"__init__", "context", "dispatch"})


def _modules() -> list[str]:
    return sorted(p.stem for p in LIFTING.glob("*.py"))


def _rules() -> dict[str, set[str]]:
    """module name -> the names of the Op classes (and scalar op classes) it registers rules for."""
    found: dict[str, set[str]] = {}
    for table in (LIFTERS, SPECIAL):
        for cls, rule in table.items():
            found.setdefault(rule.__module__.rpartition(".")[2], set()).add(cls.__name__)
    return found


def test_every_lifting_module_has_a_test_module():
    missing = [m for m in _modules() if m not in INFRASTRUCTURE and not (TESTS / f"test_{m}.py").exists()]
    assert not missing, f"lifting modules without tests/lifting/test_<module>.py: {missing}"


def test_every_module_that_registers_rules_is_tested_and_infrastructure_registers_none():
    rules = _rules()
    assert set(rules) <= set(_modules()), set(rules) - set(_modules())
    assert not set(rules) & INFRASTRUCTURE, f"infrastructure modules registering rules: {set(rules) & INFRASTRUCTURE}"
    assert not [m for m in rules if not (TESTS / f"test_{m}.py").exists()]


def test_each_test_module_names_every_op_class_its_module_lifts():
    unnamed = {}
    for module, classes in _rules().items():
        text = (TESTS / f"test_{module}.py").read_text()
        missing = sorted(c for c in classes if not re.search(rf"\b{re.escape(c)}\b", text))
        if missing:
            unnamed[module] = missing
    assert not unnamed, f"Op classes with a lifting rule that their module's tests never name: {unnamed}"
