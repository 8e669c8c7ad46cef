"""Named weights for the model builders: loading, checking, random initialisation.

The builders ask a `Params` for each tensor by its Ultralytics state_dict name
and shape. Given a mapping, `Params` returns named PyTensor constants (so a
compiler sees constant weights, e.g. for Conv+BN folding); given none, it
returns typed placeholders and only records the names and shapes, which is how
the state_dict spec is derived from the very code that builds the graph.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Mapping

import numpy as np
import pytensor.tensor as pt

from ptonnx.models.errors import WeightsError

#: PyTorch BatchNorm bookkeeping entries, meaningless at inference; accepted and ignored.
IGNORED_SUFFIX = ".num_batches_tracked"


def _shape_error(name: str, expected, given) -> WeightsError:
    return WeightsError(
        f"weight {name!r} has shape {tuple(given)}, expected {tuple(expected)}; "
        "give the array of the state_dict entry with that name",
        misshaped={name: (tuple(expected), tuple(given))},
    )


class Params:
    """Hands out weights by state_dict name; records every name and shape asked for in `spec`."""

    def __init__(self, weights: Mapping | None = None):
        self.weights = weights
        self.spec: dict[str, tuple[int, ...]] = {}

    def __call__(self, name: str, shape) -> pt.TensorVariable:
        shape = tuple(int(s) for s in shape)
        if name in self.spec:
            raise ValueError(f"builder bug: weight {name!r} requested twice")
        self.spec[name] = shape
        if self.weights is None:
            return pt.tensor(name=name, dtype="float32", shape=shape)
        if name not in self.weights:
            raise WeightsError(
                f"weight {name!r} (shape {shape}) is missing; give an array with that state_dict name",
                missing=[name],
            )
        array = np.ascontiguousarray(self.weights[name], dtype=np.float32)
        if array.shape != shape:
            raise _shape_error(name, shape, array.shape)
        return pt.constant(array, name=name)


def as_params(weights) -> Params:
    """A `Params` as is, a mapping wrapped in one."""
    return weights if isinstance(weights, Params) else Params(weights)


def load_weights(weights) -> dict[str, np.ndarray]:
    """A mapping name -> array, or a path to an `.npz` with those names, as a dict of float32 arrays."""
    if isinstance(weights, str | os.PathLike):
        path = os.fspath(weights)
        if not os.path.isfile(path):
            raise WeightsError(f"weights file {path!r} does not exist; give an .npz path or a mapping name -> array")
        try:
            with np.load(path, allow_pickle=False) as npz:
                weights = {name: npz[name] for name in npz.files}
        except (ValueError, OSError) as exc:
            raise WeightsError(f"cannot read weights file {path!r} as .npz ({exc}); save it with numpy.savez") from exc
    if not isinstance(weights, Mapping):
        raise WeightsError(f"weights must be a mapping name -> array or an .npz path, got {type(weights).__name__}")
    out = {}
    for name, value in weights.items():
        if str(name).endswith(IGNORED_SUFFIX):
            continue
        try:
            out[str(name)] = np.ascontiguousarray(value, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise WeightsError(f"weight {name!r} is not a numeric array ({exc})") from exc
    return out


def check_weights(weights: Mapping, spec: Mapping, model: str = "model") -> None:
    """Raise one `WeightsError` naming every missing, unexpected and mis-shaped key."""
    missing = [name for name in spec if name not in weights]
    extra = [name for name in weights if name not in spec]
    misshaped = {
        name: (tuple(spec[name]), tuple(np.shape(weights[name])))
        for name in spec
        if name in weights and tuple(np.shape(weights[name])) != tuple(spec[name])
    }
    if not (missing or extra or misshaped):
        return
    lines = [f"weights do not match the {model} state_dict ({len(spec)} tensors expected):"]
    if missing:
        lines.append(f"  missing ({len(missing)}):")
        lines += [f"    {name}: expected shape {spec[name]}" for name in missing]
    if extra:
        lines.append(f"  unexpected ({len(extra)}):")
        lines += [f"    {name}: given shape {tuple(np.shape(weights[name]))}" for name in extra]
    if misshaped:
        lines.append(f"  wrong shape ({len(misshaped)}):")
        lines += [f"    {name}: expected {exp}, given {given}" for name, (exp, given) in misshaped.items()]
    lines.append(f"Give exactly the names and shapes of the {model} state_dict spec (num_batches_tracked may be left in).")
    raise WeightsError("\n".join(lines), missing=missing, extra=extra, misshaped=misshaped)


def random_tensor(name: str, shape: tuple[int, ...], spec: Mapping, seed: int, gain: float = 1.0) -> np.ndarray:
    """One tensor of the random initialisation, seeded by (seed, name) so subsets agree with the whole.

    Conv weights and biases: PyTorch's default (uniform ±1/sqrt(fan_in), i.e.
    kaiming-uniform with a=sqrt(5)), conv weights times `gain`. BatchNorm:
    gamma U(0.5, 1.5), beta N(0, 0.1), mean N(0, 0.1), var U(0.5, 2), so that
    folding BN into the conv really changes the numbers. DFL: arange(reg_max).
    """
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    if name.endswith("dfl.conv.weight"):
        array = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    elif ".bn." in name:
        kind = name.rsplit(".", 1)[1]
        array = {
            "weight": lambda: rng.uniform(0.5, 1.5, shape),
            "bias": lambda: rng.normal(0.0, 0.1, shape),
            "running_mean": lambda: rng.normal(0.0, 0.1, shape),
            "running_var": lambda: rng.uniform(0.5, 2.0, shape),
        }[kind]()
    else:
        weight_shape = shape if len(shape) == 4 else spec[name.rsplit(".", 1)[0] + ".weight"]
        bound = 1.0 / np.sqrt(np.prod(weight_shape[1:]))
        array = rng.uniform(-bound, bound, shape) * (gain if len(shape) == 4 else 1.0)
    return array.astype(np.float32)


def random_weights_for(spec: Mapping, seed: int = 0, gain: float = 1.0) -> dict[str, np.ndarray]:
    """A deterministic random float32 array for every entry of `spec`, in spec order."""
    return {name: random_tensor(name, tuple(shape), spec, seed, gain) for name, shape in spec.items()}
