"""The host-side seeding of ``numba.cuda.random``'s xoroshiro128+ states, in exact 64-bit arithmetic.

``create_xoroshiro128p_states`` seeds every generator on the host (``init_xoroshiro128p_states_cpu``:
SplitMix64 for the first state, then a jump of 2**64 steps per further state). On a GPU machine
numba compiles it in nopython mode, where uint64 arithmetic wraps modulo 2**64 as the algorithm
requires. Under the simulator numba-cuda compiles it in object mode, on NumPy uint64 scalars:
the same numbers, with a NumPy overflow warning at every wrapping multiply and add (hundreds per
call) and numba's object-mode fallback warnings. Here the same algorithm runs on Python integers
masked to 64 bits (wraparound is its defined behaviour: SplitMix64 and xoroshiro128+ are defined
modulo 2**64), so the states are bit for bit those of numba-cuda and nothing is warned.
"""

from __future__ import annotations

__all__ = ["init_xoroshiro128p_states_cpu"]

_MASK = (1 << 64) - 1
#: xoroshiro128+'s jump polynomial (2**64 steps), as in numba-cuda's ``xoroshiro128p_jump``.
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)


def _splitmix64(seed):
    z = (seed + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & _MASK


def _jump(s0, s1):
    """The state 2**64 steps after ``(s0, s1)``."""
    t0 = t1 = 0
    for word in _JUMP:
        for bit in range(64):
            if word >> bit & 1:
                t0 ^= s0
                t1 ^= s1
            s1 ^= s0  # xoroshiro128p_next, its result unused
            s0, s1 = _rotl(s0, 55) ^ s1 ^ ((s1 << 14) & _MASK), _rotl(s1, 36)
    return t0, t1


def init_xoroshiro128p_states_cpu(states, seed, subsequence_start):
    """Fill the host array ``states`` (dtype ``xoroshiro128p_dtype``) as numba-cuda's function of this name.

    Parameters
    ----------
    states : numpy.ndarray, shape (n,), dtype xoroshiro128p_dtype
    seed : int
        Converted to uint64 (wrapped), as numba does.
    subsequence_start : int
        Jumps of 2**64 steps applied to the first state.
    """
    n = states.shape[0]
    if n < 1:
        return
    s = _splitmix64(int(seed) & _MASK)
    s0, s1 = s, s
    for _ in range(int(subsequence_start) & _MASK):
        s0, s1 = _jump(s0, s1)
    values = [(s0, s1)]
    for _ in range(1, n):
        s0, s1 = _jump(s0, s1)
        values.append((s0, s1))
    states["s0"] = [v[0] for v in values]
    states["s1"] = [v[1] for v in values]


def module_functions():
    """(module, name, replacement) of the simulator's ``numba.cuda.random`` functions replaced here."""
    import warnings

    from numba.core.errors import NumbaDeprecationWarning

    with warnings.catch_warnings():
        # numba-cuda's random.py passes nopython=False to numba's jit on purpose under the simulator (its
        # functions take simulated arrays, in object mode); numba warns that the argument has no effect.
        warnings.filterwarnings("ignore", message="The keyword argument 'nopython=False' was supplied",
                                category=NumbaDeprecationWarning)
        from numba.cuda import random

    return [(random, "init_xoroshiro128p_states_cpu", init_xoroshiro128p_states_cpu)]
