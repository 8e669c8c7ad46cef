"""Random PyTensor graphs: a seed gives one graph, its input arrays and the Python code that builds it.

A `Builder` keeps a pool of terms (PyTensor variables with their run-time
shapes) and grows it one op at a time (`fuzz.ops`); operands are drawn from
the pool, from fresh inputs whose shapes broadcast against them, or are Python
literals. Run-time shapes are tracked exactly, so every graph is one PyTensor
can evaluate: a dim that broadcasts is a static 1, as PyTensor requires.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pytensor.tensor as pt

from fuzz.values import DTYPES, random_array, random_literal

MAX_DIM = 4


@dataclass(eq=False)
class Term:
    """A PyTensor variable of the graph being built, with its run-time shape and its name in the code."""

    var: object
    shape: tuple[int, ...]
    name: str

    @property
    def static(self) -> tuple:
        return tuple(self.var.type.shape)

    @property
    def dtype(self) -> str:
        return self.var.type.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)


@dataclass(eq=False)
class Lit:
    """A Python literal operand."""

    value: int | float

    @property
    def var(self):
        return self.value

    @property
    def name(self) -> str:
        v = self.value
        if isinstance(v, float) and not np.isfinite(v):
            return f"float({str(v)!r})"
        return repr(v)

    @property
    def dtype(self) -> str:
        return pt.as_tensor_variable(self.value).dtype

    shape: tuple = ()
    static: tuple = ()
    ndim: int = 0


@dataclass(eq=False)
class Shape:
    """The broadcast of several operands: a run-time shape and the static shape PyTensor infers."""

    shape: tuple[int, ...]
    static: tuple


def broadcast(*operands) -> Shape:
    ndim = max(len(o.shape) for o in operands)
    pad = [((1,) * (ndim - len(o.shape)) + tuple(o.shape), (1,) * (ndim - len(o.static)) + tuple(o.static)) for o in operands]
    shape, static = [], []
    for axis in range(ndim):
        sizes = {p[0][axis] for p in pad} - {1}
        shape.append(sizes.pop() if sizes else 1)
        statics = {p[1][axis] for p in pad}
        known = statics - {None, 1}
        static.append(known.pop() if known else (1 if statics == {1} else None))
    return Shape(tuple(shape), tuple(static))


def broadcastable(*operands) -> bool:
    """True when PyTensor broadcasts these at run time: a size-1 dim that stretches is a static 1."""
    ndim = max(len(o.shape) for o in operands)
    for axis in range(1, ndim + 1):
        dims = [(o.shape[-axis], o.static[-axis]) for o in operands if len(o.shape) >= axis]
        sizes = {n for n, _ in dims}
        if len(sizes) == 1:
            continue
        target = sizes - {1}
        if len(target) > 1 or any(n == 1 and s != 1 for n, s in dims):
            return False
    return True


@dataclass
class Program:
    """One random graph: inputs, outputs, input arrays and the code that rebuilds it."""

    seed: int
    inputs: list
    outputs: list
    arrays: list
    lines: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    output_names: list[str] = field(default_factory=list)

    def code(self) -> str:
        """Python that rebuilds the graph and its inputs (runnable after `import numpy as np, pytensor.tensor as pt`)."""
        arrays = ", ".join(array_code(a) for a in self.arrays)
        return "\n".join(
            [*self.lines, f"inputs = [{', '.join(v.name for v in self.inputs)}]",
             f"outputs = [{', '.join(self.output_names)}]", f"arrays = [{arrays}]"]
        )


def array_code(a: np.ndarray) -> str:
    def item(v):
        v = v.item()
        if isinstance(v, float) and not np.isfinite(v):
            return f"float({str(v)!r})"
        return repr(v)

    body = ", ".join(item(v) for v in a.ravel())
    return f"np.array([{body}], dtype={a.dtype.name!r}).reshape({a.shape})"


class Builder:
    """The growing graph: a pool of terms, its inputs and their arrays, and the code so far."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.inputs: list[Term] = []
        self.arrays: list[np.ndarray] = []
        self.pool: list[Term] = []
        self.lines: list[str] = []
        self.ops: list[str] = []
        self.rejected: dict[str, int] = {}
        self.used: set[str] = set()

    # -- choices -------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def choice(self, options):
        return options[int(self.rng.integers(0, len(options)))]

    def dtype(self, like: str | None = None) -> str:
        if like is not None and self.chance(0.4):
            return like
        return self.choice(DTYPES)

    def dim(self) -> int:
        return 0 if self.chance(0.06) else int(self.rng.integers(1, MAX_DIM + 1))

    def shape(self, ndim: int | None = None) -> tuple[int, ...]:
        ndim = self.choice((0, 1, 1, 2, 2, 3, 3)) if ndim is None else ndim
        return tuple(self.dim() for _ in range(ndim))

    def pick(self, pred=lambda t: True) -> Term | None:
        """A pool term satisfying `pred`, recent terms likelier (deep graphs)."""
        candidates = [t for t in self.pool if pred(t)]
        if not candidates:
            return None
        weights = np.arange(1, len(candidates) + 1, dtype=float) ** 1.5
        return candidates[int(self.rng.choice(len(candidates), p=weights / weights.sum()))]

    # -- terms ---------------------------------------------------------------
    def fresh(self, dtype: str | None = None, shape: tuple[int, ...] | None = None, ones_static: tuple = ()) -> Term:
        """A new input; dims listed in `ones_static` (size 1, broadcasting) are static 1, others random."""
        dtype = dtype or self.dtype()
        shape = self.shape() if shape is None else tuple(shape)
        static = []
        for axis, n in enumerate(shape):
            if axis in ones_static or (n == 1 and self.chance(0.6)):
                static.append(1)
            else:
                static.append(n if self.chance(0.5) else None)
        name = f"x{len(self.inputs)}"
        var = pt.tensor(name, dtype=dtype, shape=tuple(static))
        term = Term(var, shape, name)
        self.inputs.append(term)
        self.arrays.append(random_array(self.rng, dtype, shape))
        self.pool.append(term)
        self.lines.append(f"{name} = pt.tensor({name!r}, dtype={dtype!r}, shape={tuple(static)!r})")
        return term

    def add(self, var, shape: tuple[int, ...], expr: str) -> Term:
        """Register a new intermediate `var` (built by `expr`) with run-time `shape`."""
        if any(var is t.var for t in self.pool):
            raise ValueError("the op returned an existing variable")
        name = f"v{len(self.lines)}"
        if var.name is None:
            var.name = name
        term = Term(var, tuple(int(n) for n in shape), name)
        self.lines.append(f"{name} = {expr}")
        self.pool.append(term)
        return term

    def partner(self, like, dtype: str | None = None) -> Term:
        """A term that broadcasts with `like` (a Term or Shape): from the pool, or a fresh input."""
        if self.chance(0.45):
            found = self.pick(lambda t: broadcastable(like, t) and (dtype is None or t.dtype == dtype))
            if found is not None:
                return found
        shape, ones = [], []
        for n, s in zip(like.shape, like.static, strict=True):
            if s == 1:
                m = self.choice((1, 1, 2, 3))
            else:
                m = 1 if self.chance(0.25) else n
            if m == 1 and n != 1:
                ones.append(len(shape))
            shape.append(m)
        if shape and self.chance(0.2):
            cut = int(self.rng.integers(1, len(shape) + 1))
            shape, ones = shape[cut:], [a - cut for a in ones if a >= cut]
        elif len(shape) < 3 and self.chance(0.1):
            shape, ones = [self.choice((1, 2))] + shape, [a + 1 for a in ones]
        return self.fresh(dtype or self.dtype(like=getattr(like, "dtype", None)), tuple(shape), tuple(ones))

    def operand(self, like, literal: float = 0.25, integer: bool | None = None, exponent: bool = False):
        """A partner of `like`, or (with probability `literal`) a Python literal."""
        if self.chance(literal):
            return Lit(random_literal(self.rng, integer, exponent))
        return self.partner(like)


def generate(seed: int, max_ops: int = 8) -> Program:
    """The graph of `seed`: 1-3 inputs, then 1..max_ops random ops (see `fuzz.ops.OPS`)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # PyTensor typing literals such as 1e300 as float32 first
        return _generate(seed, max_ops)


def _generate(seed: int, max_ops: int) -> Program:
    from fuzz.ops import OPS, WEIGHTS

    rng = np.random.default_rng(seed)
    b = Builder(rng)
    base = b.shape()
    for _ in range(int(rng.integers(1, 3))):
        b.partner(Shape(base, tuple(None for _ in base))) if b.inputs else b.fresh(shape=base)
    added: list[Term] = []
    steps = int(rng.integers(1, max_ops + 1))
    attempts = 0
    while len(b.ops) < steps and attempts < 10 * steps:
        attempts += 1
        name = str(rng.choice(list(OPS), p=WEIGHTS))
        mark = (len(b.pool), len(b.lines), len(b.inputs))
        try:
            name, new = OPS[name](b)
        except Exception as exc:  # PyTensor refuses this combination (a dtype it does not take...): draw again
            b.rejected[f"{name}: {type(exc).__name__}"] = b.rejected.get(f"{name}: {type(exc).__name__}", 0) + 1
            new = None
        if not new:
            del b.pool[mark[0]:], b.lines[mark[1]:], b.inputs[mark[2]:], b.arrays[mark[2]:]
            continue
        b.ops.append(name)
        added.extend(new)
    outputs = [added[-1]] if added else [b.pool[-1]]
    leaves = [t for t in added[:-1] if t.name not in b.used]
    for _ in range(int(rng.integers(0, 3))):
        if leaves:
            outputs.append(leaves.pop(int(rng.integers(0, len(leaves)))))
    from pytensor.graph.traversal import ancestors

    needed = set(ancestors([t.var for t in outputs]))
    used = [(t.var, a) for t, a in zip(b.inputs, b.arrays, strict=True) if t.var in needed]
    return Program(
        seed, [v for v, _ in used], [t.var for t in outputs], [a for _, a in used], list(b.lines), list(b.ops),
        [t.name for t in outputs],
    )
