"""Per-chain random numbers inside numba: xoroshiro128+ states in a ``(k, 2)`` uint64 array.

Each HMC chain ``j`` owns row ``j`` of the state array and only ever advances that row, so the numbers a chain
sees do not depend on how ``prange`` schedules chains onto threads: the same seed gives identical results on any
number of threads. States are seeded from the run's ``numpy.random.Generator`` (so the whole run follows from
one seed) and are saved in checkpoints as plain uint64 arrays.
"""

import math

import numpy as np
from numba import njit

_U24 = np.uint64(24)
_U16 = np.uint64(16)
_U37 = np.uint64(37)
_U40 = np.uint64(40)
_U27 = np.uint64(27)
_U11 = np.uint64(11)
_U64 = np.uint64(64)
# 2**-53: maps the top 53 bits of a uint64 onto [0, 1) with full double resolution.
_INV_2_53 = 1.0 / 9007199254740992.0


def seed_chain_states(generator: np.random.Generator, nchains: int) -> np.ndarray:
    """Draw ``(nchains, 2)`` xoroshiro128+ states from ``generator`` (never the all-zero state)."""
    states = generator.integers(1, np.iinfo(np.uint64).max, size=(nchains, 2), dtype=np.uint64, endpoint=True)
    return np.ascontiguousarray(states)


@njit(inline="always")
def _rotl(x, k):
    return (x << k) | (x >> (_U64 - k))


@njit(inline="always")
def next_uint64(states, j):
    """Advance chain ``j``'s xoroshiro128+ state and return the next 64-bit output."""
    s0 = states[j, 0]
    s1 = states[j, 1]
    result = s0 + s1
    s1 ^= s0
    states[j, 0] = _rotl(s0, _U24) ^ s1 ^ (s1 << _U16)
    states[j, 1] = _rotl(s1, _U37)
    return result


@njit(inline="always")
def uniform(states, j):
    """A double in [0, 1) from chain ``j``'s stream (top 53 bits: the low bits of xoroshiro128+ are weak)."""
    return float(next_uint64(states, j) >> _U11) * _INV_2_53


@njit(inline="always")
def normal(states, j):
    """A standard normal deviate from chain ``j``'s stream (Box-Muller; one of the pair is discarded so that
    the stream has no hidden cached value that a checkpoint would have to carry)."""
    u1 = 1.0 - uniform(states, j)  # in (0, 1]: log is finite
    u2 = uniform(states, j)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
