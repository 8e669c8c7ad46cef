"""Keys for the models that draw random numbers: two uint32 words, a model input.

A model ptonnx compiles from a graph with random variables takes one key input per
PyTensor generator (named for it) and returns the next key where the graph returns
the next generator. The same key gives the same draws on every runtime; a new key,
new draws. `key(seed)` makes one from an integer (or from a NumPy Generator, whose
state it advances, as drawing from it would).
"""

from __future__ import annotations

import copy

import numpy as np

from ptonnx.errors import SignatureError
from ptonnx.ir.ops.bits import threefry2x32

#: a key's dtype and shape
DTYPE, SHAPE = np.uint32, (2,)


def key(seed: int | np.random.Generator | np.ndarray) -> np.ndarray:
    """A key (uint32[2]) from an integer seed in [0, 2**64), a NumPy Generator, or a key."""
    if isinstance(seed, np.random.Generator):
        return seed.integers(0, 2**32, size=SHAPE, dtype=DTYPE)
    if isinstance(seed, np.ndarray | list | tuple):
        words = np.asarray(seed)
        if words.shape != SHAPE or words.dtype.kind not in "iu" or (words < 0).any() or (words >= 2**32).any():
            raise SignatureError(f"a key is two uint32 words (shape (2,)), got {words.dtype}{list(words.shape)}")
        return words.astype(DTYPE)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= int(seed) < 2**64:
        raise SignatureError(f"a key's seed is an integer in [0, 2**64) or a numpy Generator, got {seed!r}")
    seed = int(seed)
    return np.asarray([seed >> 32, seed & 0xFFFFFFFF], dtype=DTYPE)


def of_generator(generator: np.random.Generator) -> np.ndarray:
    """The key a NumPy Generator stands for, without advancing it: a PyTensor generator
    variable's value given to a model (`mode="ONNX"`), the same key while its state is."""
    return copy.deepcopy(generator).integers(0, 2**32, size=SHAPE, dtype=DTYPE)


def as_generator(k: np.ndarray) -> np.random.Generator:
    """A NumPy Generator seeded by a key: what `mode="ONNX"` stores in a shared generator
    variable for the next key a model returns (its `of_generator` is a new key)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(w) for w in key(k)])))


def split(k: np.ndarray, n: int) -> np.ndarray:
    """`n` independent keys (shape (n, 2)) derived from `k`: threefry(k, (2**32 - 2, i))."""
    k = key(k)
    y0, y1 = threefry2x32(k[0], k[1], np.uint32(0xFFFFFFFE), np.arange(n, dtype=np.uint32))
    return np.stack([y0, y1], axis=-1)
