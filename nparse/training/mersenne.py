"""``random.Random.random()`` in compiled code: the greedy walk on rows draws its exploration
numbers from the trainer's generator itself, so that a compiled walk takes the same transitions
as the Python one did with the same seed, and the generator goes on where it would have.

CPython's generator is MT19937 (Matsumoto & Nishimura 1998); ``random()`` takes 53 bits from two
32-bit outputs. ``state_of`` copies a ``random.Random``'s state into an array the kernels advance,
``restore`` puts it back; ``tests/test_walk_identity.py`` checks the draws against ``random()``.
"""

from __future__ import annotations

import random

import numpy as np
from numba import njit

N, M = 624, 397
MATRIX_A, UPPER, LOWER, MASK32 = 0x9908B0DF, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFF


def state_of(rng: random.Random) -> np.ndarray:
    """The generator's 624 words and position, as one int64 array."""
    version, internal, _ = rng.getstate()
    if version != 3 or len(internal) != N + 1:
        raise ValueError(f"unexpected random.Random state (version {version}, {len(internal)} words)")
    return np.array(internal, dtype=np.int64)


def restore(rng: random.Random, state: np.ndarray) -> None:
    """Put the advanced state back (the Gaussian cache, unused by training, is kept)."""
    version, _, gauss = rng.getstate()
    rng.setstate((version, tuple(int(x) for x in state), gauss))


@njit(cache=True)
def _next32(st):
    i = st[N]
    if i >= N:
        for k in range(N):
            y = (st[k] & UPPER) | (st[(k + 1) % N] & LOWER)
            v = st[(k + M) % N] ^ (y >> 1)
            if y & 1:
                v ^= MATRIX_A
            st[k] = v
        i = 0
    y = st[i]
    st[N] = i + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & MASK32


@njit(cache=True)
def draw(st):
    """The next ``random.random()`` of the generator whose state is ``st`` (advanced in place)."""
    a = _next32(st) >> 5
    b = _next32(st) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
