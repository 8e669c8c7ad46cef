"""The README's op tables are generated from the registries and must be current,
so adding an op without regenerating them (`python -m ptonnx.op_table --write`) fails here."""

from __future__ import annotations

import pytest

from ptonnx import ir, op_table
from ptonnx.lifting import LIFTERS
from ptonnx.lifting.elemwise import supported_scalar_ops


@pytest.fixture(scope="module")
def section() -> str:
    return op_table._split(op_table.README.read_text(encoding="utf-8"))[1]


def test_readme_table_is_current():
    diff = op_table.stale_diff()
    assert not diff, f"README's op table is stale: run `{op_table.COMMAND}`\n{diff}"


def test_every_ir_op_has_a_row(section):
    for name, schema in ir.all_schemas().items():
        assert f"| {schema.family} | `{name}` |" in section, f"IR op {name} is missing from README's op table"


def test_every_lifted_op_class_and_scalar_op_is_named(section):
    lifted = section.split("**IR ops**")[0]
    for cls in LIFTERS:
        assert f"`{cls.__name__}`" in lifted, f"{cls.__name__} is missing from README's op table"
    for name in supported_scalar_ops():
        assert f"`{name}` " in lifted, f"scalar op {name} is missing from README's op table"


def test_dtype_labels_are_compact():
    from ptonnx.ir.types import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, NUMERIC_DTYPES, SIGNED_INT_DTYPES

    assert op_table.dtype_label(ALL_DTYPES) == "all"
    assert op_table.dtype_label(NUMERIC_DTYPES) == "numeric"
    assert op_table.dtype_label(INT_DTYPES | {"bool"}) == "ints, bool"
    assert op_table.dtype_label(FLOAT_DTYPES | SIGNED_INT_DTYPES) == "floats, signed ints"
    assert op_table.dtype_label(frozenset({"int64", "int32"})) == "int32, int64"


def test_check_and_write_commands(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{op_table.START}\nhand-written list\n{op_table.END}\n\nafter\n", encoding="utf-8")
    assert op_table.main(["--check", "--readme", str(readme)]) == 1
    assert "stale" in capsys.readouterr().err
    assert op_table.main(["--write", "--readme", str(readme)]) == 0
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# x\n\n") and text.endswith(f"{op_table.END}\n\nafter\n") and "hand-written" not in text
    assert op_table.main(["--check", "--readme", str(readme)]) == 0
    readme.write_text("no markers\n", encoding="utf-8")
    assert op_table.main(["--check", "--readme", str(readme)]) == 1
