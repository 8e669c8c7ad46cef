"""Calling a compiled model: the user's arrays checked and fed to onnxruntime, its errors
raised as ptonnx's.

A call of a small model costs onnxruntime a few µs, so the Python around it must cost well
under one: what is known before the first call (names, dtypes, ranks, static dims, the named
dims shared by several inputs, run options) is worked out once, in `CallPlan`, and an input
that is already the array the model needs is passed on as it is.

The run goes to the session's C++ object (`InferenceSession._sess.run`) where the installed
onnxruntime has it, as the pinned 1.32 line does: the public `run` only re-checks the feed's
names (which the plan has done) and would cost ~1 µs a call more (1.18x a bare `run` at
n = 100, against the issue's 1.1x). It is found once per session, by feature test, and a
release without it gets the public `run`: slower, never wrong.

IOBinding is not used: on the CPU provider `run` already hands onnxruntime's output
buffers to numpy without a copy, and binding inputs and outputs costs more per call than it
saves (`benchmarks/call_overhead.py` measures both)"""

from __future__ import annotations

import numpy as np

from ptonnx.check_errors import failed_check
from ptonnx.errors import RuntimeMismatchError


class CallPlan:
    """What every call of one model needs, worked out once."""

    def __init__(self, model, ir_inputs, checks: dict):
        self.names = [i.name for i in model.graph.input]
        self.output_names = [o.name for o in model.graph.output]
        #: per input: name, numpy dtype, rank, ((axis, static size), ...), IR value
        self.fast = [
            (name, np.dtype(v.dtype), v.type.ndim, tuple((axis, d) for axis, d in enumerate(v.shape) if isinstance(d, int)), v)
            for name, v in zip(self.names, ir_inputs, strict=True)
        ]
        #: every (input, axis, dim_param) place, in the order the error message reports them
        self.dims = [
            (i.name, axis, d.dim_param)
            for i in model.graph.input
            for axis, d in enumerate(i.type.tensor_type.shape.dim)
            if d.dim_param
        ]
        places: dict[str, list[tuple[int, int]]] = {}
        index = {name: k for k, name in enumerate(self.names)}
        for name, axis, param in self.dims:
            places.setdefault(param, []).append((index[name], axis))
        #: the only places the sizes must be compared: named dims of two or more places
        self.shared = [tuple(p) for p in places.values() if len(p) > 1]
        self.checks = checks
        self.run_options = _run_options(checks)
        self._session = self._run = None

    def feed(self, arrays) -> dict[str, np.ndarray]:
        """The input feed: an array already of the input's dtype, rank, byte order, layout
        and static dims as given; anything else through `as_input`."""
        if len(arrays) != len(self.fast):
            raise RuntimeMismatchError(f"the model takes {len(self.fast)} inputs ({', '.join(self.names)}), got {len(arrays)}")
        feed = {}
        for (name, dtype, ndim, static, value), array in zip(self.fast, arrays, strict=True):
            if not (
                type(array) is np.ndarray
                and (array.dtype is dtype or array.dtype == dtype)  # `==`: a native dtype equals only a native one
                and array.ndim == ndim
                and array.flags.c_contiguous
                and (not static or all(array.shape[axis] == size for axis, size in static))
            ):
                array = as_input(name, value, array)
            feed[name] = array
        if self.shared:
            fed = list(feed.values())
            for (first, axis), *rest in self.shared:
                size = fed[first].shape[axis]
                if any(fed[k].shape[a] != size for k, a in rest):
                    self._dims_error(feed)
        return feed

    def _dims_error(self, feed: dict[str, np.ndarray]) -> None:
        """Raise for the first place whose size disagrees with its named dim's first place."""
        sizes: dict[str, tuple[str, int]] = {}
        for name, axis, param in self.dims:
            size = feed[name].shape[axis]
            first = sizes.setdefault(param, (name, size))
            if first[1] != size:
                raise RuntimeMismatchError(
                    f"inputs {first[0]} and {name} share the dimension {param!r} but disagree on its size "
                    f"({first[1]} vs {size}): {describe(feed)}"
                )

    def run(self, session, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        """onnxruntime's outputs (fresh arrays each call), or its error as ptonnx's."""
        if session is not self._session:
            self._session, self._run = session, runner(session)
        try:
            return self._run(self.output_names, feed, self.run_options)
        except Exception as exc:
            if not type(exc).__module__.startswith("onnxruntime"):
                raise
            check = failed_check(exc, self.checks)
            if check is not None:
                raise check from None
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RuntimeMismatchError(
                f"onnxruntime could not run the model on the inputs {describe(feed)}:\n  {message}\n"
                "Check that the input shapes fit together as the PyTensor graph needs (dims that broadcast "
                "are equal or 1); if they do, this is a ptonnx bug: please report it."
            ) from exc


def runner(session):
    """The session's run: its C++ object's where it has one (see the module's docstring)."""
    inner = getattr(session, "_sess", None)
    run = getattr(inner, "run", None)
    return run if callable(run) else session.run


def _run_options(checks):
    """A failed check is an exception here; onnxruntime need not also log it."""
    if not checks:
        return None
    import onnxruntime as ort

    options = ort.RunOptions()
    options.log_severity_level = 4
    return options


def describe(feed: dict[str, np.ndarray]) -> str:
    return ", ".join(f"{name}: {a.dtype} {tuple(a.shape)}" for name, a in feed.items())


def as_input(name: str, value, array) -> np.ndarray:
    """`array` as the model's input `name` needs it, or a RuntimeMismatchError saying why not."""
    python_float = isinstance(array, float) and value.dtype.startswith("float")
    try:
        arr = np.asarray(array)
        if not arr.dtype.isnative:  # onnxruntime reads the bytes as they lie: big-endian data must be swapped
            arr = arr.astype(arr.dtype.newbyteorder("="))
        if arr.dtype.name != value.dtype:
            with np.errstate(all="ignore"):
                cast = arr.astype(value.dtype)
            # Python floats are taken in the input's precision, as PyTensor takes them; so is a dtype PyTensor
            # casts without asking (int64 to float64: rounded beyond 2**53); any other only where it converts exactly.
            if not (python_float or np.promote_types(arr.dtype, value.dtype) == cast.dtype or converts_exactly(arr, cast)):
                raise RuntimeMismatchError(f"input {name} is {value.dtype}; the {arr.dtype} array given does not convert exactly")
            arr = cast
    except (TypeError, ValueError) as exc:
        if isinstance(exc, RuntimeMismatchError):
            raise
        raise RuntimeMismatchError(f"input {name} is {value.dtype}; got {type(array).__name__} {array!r:.80}, which is not that ({exc})") from None
    if arr.ndim != value.type.ndim or any(isinstance(d, int) and d != n for d, n in zip(value.shape, arr.shape, strict=True)):
        raise RuntimeMismatchError(f"input {name} has type {value.type}; got shape {arr.shape}")
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")
    return arr


def converts_exactly(arr: np.ndarray, cast: np.ndarray) -> bool:
    """`cast` holds `arr`'s values exactly: equal, back in `arr`'s dtype too, and (between integers
    and floats) within the integer dtype's range, where a conversion is defined (2**53 + 1 as a
    float32 is 2**53: equal to it as a float64, not as an int64)."""
    nan = arr.dtype.kind == "f"
    with np.errstate(all="ignore"):
        for floats, ints in ((arr, cast), (cast, arr)):
            if floats.dtype.kind == "f" and ints.dtype.kind in "iu" and not _within(floats, ints.dtype):
                return False
        return np.array_equal(cast, arr, equal_nan=nan) and np.array_equal(cast.astype(arr.dtype), arr, equal_nan=nan)


def _within(floats: np.ndarray, dtype: np.dtype) -> bool:
    """Every value is finite and converts to the integer dtype without overflow."""
    info = np.iinfo(dtype)
    low, high = float(info.min), float(info.max) + 1.0  # both powers of two (or 0): exact as floats
    wide = floats.astype(np.float64)  # exact; the bounds too
    return bool(np.all((wide >= low) & (wide < high)))
