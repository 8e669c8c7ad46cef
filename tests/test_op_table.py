"""The op tables in `docs/supported.md` are generated from the registries and must be current,
so adding an op without regenerating them (`python -m ptonnx.op_table --write`) fails here."""

from __future__ import annotations

import pytensor
import pytest

from ptonnx import ir, op_table
from ptonnx.lifting import LIFTERS
from ptonnx.lifting.elemwise import scalar_op_classes, supported_scalar_ops

#: The table in docs/supported.md is generated under the default install (pytensor 3.0). Under pytensor
#: 2.38 (the pymc environment) ptonnx also lifts Ops that only that line has as Ops of
#: their own: SoftmaxGrad (gone in 3.0), EighGrad, EigvalshGrad; and 2.38 has one scalar op class that 3.0 dropped, Iv (3.0 keeps Ive). They, and
#: nothing else, make the table generated under 2.38 differ.
PYTENSOR_2_ONLY_LIFTED = frozenset({"SoftmaxGrad", "EighGrad", "EigvalshGrad"})
PYTENSOR_2_ONLY_SCALAR_OPS = frozenset({"Iv"})
PYTENSOR_2 = int(pytensor.__version__.split(".")[0]) < 3


def default_install_lifters() -> dict:
    """`LIFTERS` as the default install (pytensor 3.0) has them."""
    return {cls: rule for cls, rule in LIFTERS.items() if not (PYTENSOR_2 and cls.__name__ in PYTENSOR_2_ONLY_LIFTED)}


def default_install_scalar_op_classes() -> list[type]:
    """The installed PyTensor's scalar op classes that the default install (pytensor 3.0) has too."""
    return [cls for cls in scalar_op_classes() if not (PYTENSOR_2 and cls.__name__ in PYTENSOR_2_ONLY_SCALAR_OPS)]


@pytest.fixture(scope="module")
def section() -> str:
    return op_table._split(op_table.DOC.read_text(encoding="utf-8"))[1]


@pytest.mark.parametrize(("listed", "installed"), [
    (PYTENSOR_2_ONLY_LIFTED, lambda: LIFTERS), (PYTENSOR_2_ONLY_SCALAR_OPS, scalar_op_classes),
], ids=["lifters", "scalar ops"])
def test_what_only_pytensor_2_has_is_the_listed_names(listed, installed):
    """Under 2.38 the listed names are there; under 3.0 none is. Under 2.38 any other extra
    name shows in the generated table, so `test_the_op_table_is_current` fails on it."""
    names = {cls.__name__ for cls in installed()}
    if PYTENSOR_2:
        assert listed <= names, f"not there under pytensor {pytensor.__version__}: {listed - names}"
    else:
        assert not listed & names, f"there under pytensor {pytensor.__version__} too: drop them from the list"


def test_the_op_table_is_current(monkeypatch):
    monkeypatch.setattr(op_table, "LIFTERS", default_install_lifters())
    monkeypatch.setattr(op_table, "scalar_op_classes", default_install_scalar_op_classes)
    monkeypatch.setattr(op_table, "SPECIAL", {c: r for c, r in op_table.SPECIAL.items() if c in default_install_scalar_op_classes()})
    monkeypatch.setattr(op_table, "SCALAR_OPS", {c: r for c, r in op_table.SCALAR_OPS.items() if c in default_install_scalar_op_classes()})
    diff = op_table.stale_diff()
    assert not diff, f"docs/supported.md's op table is stale: run `{op_table.COMMAND}` (under the default install)\n{diff}"


def test_every_ir_op_has_a_row(section):
    for name, schema in ir.all_schemas().items():
        assert f"| {schema.family} | `{name}` |" in section, f"IR op {name} is missing from docs/supported.md's op table"


def test_every_lifted_op_class_and_scalar_op_is_named(section):
    lifted = section.split("**IR ops**")[0]
    for cls in default_install_lifters():
        assert f"`{cls.__name__}`" in lifted, f"{cls.__name__} is missing from docs/supported.md's op table"
    for name in supported_scalar_ops():
        if not (PYTENSOR_2 and name in PYTENSOR_2_ONLY_SCALAR_OPS):  # 2.38's Iv: lifted there, not in 3.0
            assert f"`{name}` " in lifted, f"scalar op {name} is missing from docs/supported.md's op table"


def test_every_scalar_op_of_pytensor_is_lifted_or_refused_with_a_reason(section):
    """Enumerated from the installed PyTensor's modules, not from a list."""
    from ptonnx.lifting.elemwise import REFUSED_SCALAR_OPS, SCALAR_OPS, SPECIAL, scalar_op_classes

    classes = scalar_op_classes()
    assert len(classes) > 90  # the enumeration found PyTensor's scalar ops
    for cls in classes:
        lifted = any(c in SCALAR_OPS or c in SPECIAL for c in cls.__mro__)
        assert lifted or cls.__name__ in REFUSED_SCALAR_OPS, f"{cls.__name__}: lift it or say why it is refused"
        if not lifted and cls in default_install_scalar_op_classes():  # docs/supported.md is the default install's
            assert f"| `{cls.__name__}` | {REFUSED_SCALAR_OPS[cls.__name__]}" in section


def test_a_refused_scalar_op_says_why():
    import pytensor.tensor as pt

    import ptonnx

    x, y = pt.dvectors("x", "y")
    with pytest.raises(ptonnx.errors.UnsupportedOpError, match="refuses .*Complex.* no complex dtype"):
        ptonnx.compile_function([x, y], [pt.real(pt.complex(x, y))])


def test_dtype_labels_are_compact():
    from ptonnx.ir.types import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, NUMERIC_DTYPES, SIGNED_INT_DTYPES

    assert op_table.dtype_label(ALL_DTYPES) == "all"
    assert op_table.dtype_label(NUMERIC_DTYPES) == "numeric"
    assert op_table.dtype_label(INT_DTYPES | {"bool"}) == "ints, bool"
    assert op_table.dtype_label(FLOAT_DTYPES | SIGNED_INT_DTYPES) == "floats, signed ints"
    assert op_table.dtype_label(frozenset({"int64", "int32"})) == "int32, int64"


def test_check_and_write_commands(tmp_path, capsys):
    doc = tmp_path / "supported.md"
    doc.write_text(f"# x\n\n{op_table.START}\nhand-written list\n{op_table.END}\n\nafter\n", encoding="utf-8")
    assert op_table.main(["--check", "--file", str(doc)]) == 1
    assert "stale" in capsys.readouterr().err
    assert op_table.main(["--write", "--file", str(doc)]) == 0
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# x\n\n") and text.endswith(f"{op_table.END}\n\nafter\n") and "hand-written" not in text
    assert op_table.main(["--check", "--file", str(doc)]) == 0
    doc.write_text("no markers\n", encoding="utf-8")
    assert op_table.main(["--check", "--readme", str(doc)]) == 1  # --readme: the option's old name
