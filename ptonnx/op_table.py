"""The tables of supported ops in `docs/supported.md`, rendered from the registries.

A hand-kept list goes stale as ops are added; this one is generated from
`LIFTERS`, the Elemwise scalar tables, `all_schemas()`, `EMITTERS` and
`onnxruntime_kernels`, and `tests/test_op_table.py` fails when the copy in
`docs/supported.md` differs. `python -m ptonnx.op_table --write` rewrites
`docs/supported.md` between the markers, `--check` exits 1 with a diff if it is stale, no flag prints the tables.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from pathlib import Path

from ptonnx import ir
from ptonnx.ir.types import DTYPES, FLOAT_DTYPES, INT_DTYPES, NUMERIC_DTYPES, SIGNED_INT_DTYPES, UNSIGNED_INT_DTYPES
from ptonnx.lifting import LIFTERS
from ptonnx.lifting.elemwise import REFUSED_SCALAR_OPS, SCALAR_OPS, SPECIAL, scalar_op_classes
from ptonnx.decompositions import DECOMPOSITIONS
from ptonnx.lowering import EMITTERS
from ptonnx.onnxruntime_kernels import NO_FLOAT64_KERNEL

START = "<!-- op-table:start -->"
END = "<!-- op-table:end -->"
#: the file that holds the generated tables, between START and END
DOC = Path(__file__).resolve().parent.parent / "docs" / "supported.md"
COMMAND = "python -m ptonnx.op_table --write"

#: named dtype groups, largest first: a constraint is described by the groups it contains
_GROUPS = (
    ("numeric", NUMERIC_DTYPES),
    ("floats", FLOAT_DTYPES),
    ("ints", INT_DTYPES),
    ("signed ints", SIGNED_INT_DTYPES),
    ("unsigned ints", UNSIGNED_INT_DTYPES),
)


def _cell(text: str) -> str:
    """One Markdown table cell: a single line, `|` escaped (GFM honours it in code spans too)."""
    return " ".join(text.split()).replace("|", "\\|")


def _first_paragraph(doc: str | None) -> str:
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def dtype_label(dtypes: frozenset[str]) -> str:
    """A compact name for a set of dtypes: "all", "floats", "ints, bool", or a list."""
    if dtypes == frozenset(DTYPES):
        return "all"
    rest, parts = set(dtypes), []
    for name, group in _GROUPS:
        if group <= rest:
            parts.append(name)
            rest -= group
    parts += [d for d in DTYPES if d in rest]  # DTYPES' order, not alphabetical
    return ", ".join(parts) or "none"


def _dtypes_of(schema) -> str:
    """Each constrained type variable's dtypes; once if they all agree (Cast: all -> all)."""
    ports = schema.inputs + schema.outputs
    vars_ = list(dict.fromkeys(p.var for p in ports if p.var in schema.constraints))
    if not vars_:  # only fixed dtypes (NonZero: bool in)
        return ", ".join(dict.fromkeys(p.var for p in schema.inputs)) or "none"
    labels = {v: dtype_label(frozenset(schema.constraints[v])) for v in vars_}
    if len(set(labels.values())) == 1:
        return next(iter(labels.values()))
    return "; ".join(f"{v}: {label}" for v, label in labels.items())


def _note(name: str) -> str:
    notes = []
    if name in NO_FLOAT64_KERNEL:
        notes.append("float64: no onnxruntime kernel (`LoweringError`, or `float64_via_float32=True`)")
    if name in DECOMPOSITIONS:
        found = DECOMPOSITIONS[name]
        whole = found.widen or found.own_dtype or found.as_given
        notes.append(("" if whole else "float64: ") + "decomposed into IR ops (`decompositions/`)")
    elif name not in EMITTERS:
        notes.append("not lowered yet")
    return "; ".join(notes)


def pytensor_table() -> str:
    """One row per lifting module: its Op classes and the first paragraph of its docstring."""
    by_module: dict[str, list[type]] = {}
    for cls, rule in LIFTERS.items():
        by_module.setdefault(rule.__module__, []).append(cls)
    rows = ["| lifting module | PyTensor ops | what it lifts, and to what |", "|---|---|---|"]
    for module in sorted(by_module):
        classes = sorted(by_module[module], key=lambda c: (c.__name__, c.__module__))
        names = ", ".join(f"`{c.__name__}`" for c in classes)
        doc = _first_paragraph(importlib.import_module(module).__doc__)
        short = module.removeprefix("ptonnx.lifting.")
        rows.append(f"| `{short}` | {names} | {_cell(doc)} |")
    return "\n".join(rows)


def scalar_ops_line() -> str:
    """Scalar ops inside Elemwise, with the IR op each becomes (or what its own rule does)."""
    items = {}
    for cls in set(SCALAR_OPS) | set(SPECIAL):
        if cls in SCALAR_OPS:
            items[cls.__name__] = f"`{cls.__name__}` → `{SCALAR_OPS[cls]}`"
        else:
            doc = _first_paragraph(getattr(SPECIAL[cls], "__doc__", None)).rstrip(".")
            items[cls.__name__] = f"`{cls.__name__}` ({doc or 'a rule of its own'})"
    # one per line: the paragraph renders the same, and a new op is a one-line diff
    return ",\n".join(items[k] for k in sorted(items, key=lambda n: (n.lower(), n))) + "."


def refused_scalar_ops_table() -> str:
    """Every scalar op class of the installed PyTensor that is not lifted, with why."""
    rows = ["| scalar op | why it is refused |", "|---|---|"]
    for cls in scalar_op_classes():
        if not any(c in SCALAR_OPS or c in SPECIAL for c in cls.__mro__):
            rows.append(f"| `{cls.__name__}` | {_cell(REFUSED_SCALAR_OPS.get(cls.__name__, 'no lifting rule yet'))} |")
    return "\n".join(rows)


def ir_table() -> str:
    """One row per IR op, sorted by family then name."""
    schemas = ir.all_schemas()
    rows = ["| family | IR op | dtypes | what it computes | note |", "|---|---|---|---|---|"]
    for name, schema in sorted(schemas.items(), key=lambda kv: (kv[1].family, kv[0])):
        rows.append(f"| {schema.family} | `{name}` | {_cell(_dtypes_of(schema))} | {_cell(schema.doc)} | {_note(name)} |")
    return "\n".join(rows)


def compute_dtype_table() -> str:
    """The rows of `ptonnx/onnxruntime_dtypes.py`, in the order they are matched."""
    from ptonnx.onnxruntime_dtypes import rows as legality_rows

    lines = ["| IR ops | on | computed in | why |", "|---|---|---|---|"]
    for row in legality_rows():
        ops = "every op that computes" if row.ops is None else ", ".join(f"`{op}`" for op in sorted(row.ops))
        if row.refuse is not None:
            what = f"refused ({row.refuse.format(op='…')}); {row.narrow} with `float64_via_float32=True`"
        else:
            what = row.compute
        lines.append(f"| {_cell(ops)} | {dtype_label(frozenset(row.dtypes))} | {_cell(what)} | {_cell(row.why)} |")
    return "\n".join(lines)


def carried_dtype_table() -> str:
    """`onnxruntime_dtypes.CARRIED`: per lowering target, the dtypes it has no tensors of."""
    from ptonnx.onnxruntime_dtypes import CARRIED

    lines = ["| target | dtype | carried in | why |", "|---|---|---|---|"]
    for target, table in CARRIED.items():
        for dtype, carry in table.items():
            lines.append(f"| {target} | {dtype} | {carry.wide} | {_cell(carry.why)} |")
    return "\n".join(lines)


def render() -> str:
    """The tables and their captions, as Markdown."""
    return "\n\n".join([
        f"These tables are generated from ptonnx's registries; after adding an op, run `{COMMAND}`.",
        "**PyTensor ops lifted** (`ptonnx.lifting.LIFTERS`; a rule also lifts subclasses of its Op class):",
        pytensor_table(),
        "**Scalar ops inside `Elemwise`** (and inside `Composite`), with the IR op each becomes:\n" + scalar_ops_line(),
        "**Scalar ops refused**: every other scalar op class of the installed PyTensor "
        "(`pytensor.scalar.basic` and `pytensor.scalar.math`), with the reason:",
        refused_scalar_ops_table(),
        "**IR ops** (`ptonnx.ir.all_schemas()`), with the dtypes of their type variables "
        "(numeric = all but bool; ints = signed and unsigned):",
        ir_table(),
        "**Compute dtypes** (`ptonnx/onnxruntime_dtypes.py`, applied by the `legalise` stage, last before lowering; "
        "the first row that names an op and dtype decides; a wider dtype is followed to the end of its chain):",
        compute_dtype_table(),
        "**Carried dtypes** (`onnxruntime_dtypes.CARRIED`, per lowering target, applied to the target's copy of the IR by "
        "`passes/carry_dtypes.py`; uint32 as the same number, uint64 as the same bits):",
        carried_dtype_table(),
    ])


def _block() -> str:
    """What goes between the markers: blank lines keep the last table row apart from END."""
    return f"\n{render()}\n\n"


def _split(text: str) -> tuple[str, str, str]:
    """(before, between, after) the markers; raise if they are missing or out of order."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"the file must contain {START} then {END}, once each")
    before, rest = text.split(START)
    between, after = rest.split(END)
    return before, between, after


def stale_diff(path: Path = DOC) -> str:
    """A unified diff from the file's table (`docs/supported.md`) to the generated one; empty if current."""
    current = _split(path.read_text(encoding="utf-8"))[1]
    wanted = _block()
    if current == wanted:
        return ""
    diff = difflib.unified_diff(current.splitlines(True), wanted.splitlines(True), f"{path} (op table)", "generated")
    return "".join(diff)


def write(path: Path = DOC) -> bool:
    """Rewrite the table in place; True if the file changed."""
    text = path.read_text(encoding="utf-8")
    before, _, after = _split(text)
    new = f"{before}{START}{_block()}{END}{after}"
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ptonnx.op_table", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite docs/supported.md between the markers")
    mode.add_argument("--check", action="store_true", help="exit 1 with a diff if docs/supported.md is stale")
    parser.add_argument(
        "--file", "--readme", dest="file", type=Path, default=DOC, help=f"the file with the op table markers (default: {DOC})"
    )
    args = parser.parse_args(argv)
    try:
        if args.write:
            print(f"{args.file}: {'rewritten' if write(args.file) else 'already current'}")
        elif args.check:
            diff = stale_diff(args.file)
            if diff:
                print(f"{args.file}: the op table is stale; run `{COMMAND}`\n{diff}", file=sys.stderr)
                return 1
            print(f"{args.file}: op table is current")
        else:
            print(render())
    except (OSError, ValueError) as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
