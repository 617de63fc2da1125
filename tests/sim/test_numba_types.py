"""Values computed in the types numba-cuda gives them: unification where paths merge, bit intrinsics at the
argument's width (special registers included), block-wide votes of wide predicates.

Each expectation was checked with numba-cuda 0.30.4's compiler without the simulator (``compile_ptx`` or
``numba.cuda.compiler.compile_cuda``, cc 8.0); the PTX quoted is what it emitted. They hold on a GPU too.
"""

import numpy as np
import pytest
from numba import cuda

from course_lib import device

needs_typing = pytest.mark.skipif(device.backend() != "sim", reason="the simulator's typing (a GPU types by itself)")


@cuda.jit
def _merges_int_and_float(out, n):
    if n > 0:
        v = 2**62
    else:
        v = 1.5
    out[0] = v * 4  # float64 on a GPU: v is unified to float64 (an int64 product would wrap to 0)


@cuda.jit
def _merges_uint32_and_int64(out, a):
    t = a[0]
    if a[1] > 0:
        t = -1
    out[0] = -t  # t is int64 after the merge: -5 (negating a uint32 would give 4294967291)


def test_a_variable_merged_from_an_int_and_a_float_is_a_float64():
    # compile_cuda's typemap: v Literal[int](1), v.1 float64, v.2 float64, and the phi turned into the
    # converting copy "v.2 = v" (float64 <- Literal[int]) at the end of the int path.
    out = np.zeros(1, np.float64)
    _merges_int_and_float[1, 1](out, 1)
    assert out[0] == float(2**64)
    _merges_int_and_float[1, 1](out, 0)
    assert out[0] == 6.0


def test_a_uint32_merged_with_an_int64_is_an_int64():
    # compile_cuda: t uint32 (from the array), t.1 int64, the copy t.2 = t converts uint32 -> int64.
    out = np.zeros(1, np.int64)
    _merges_uint32_and_int64[1, 1](out, np.array([5, 0], np.uint32))
    assert out[0] == -5
    _merges_uint32_and_int64[1, 1](out, np.array([5, 1], np.uint32))
    assert out[0] == 1


@cuda.jit
def _bit_counts_wide(out, a, b):
    out[0] = cuda.clz(a[0])                 # int8 1: 7 (8 bits)
    out[1] = cuda.clz(cuda.threadIdx.x)     # tid.x is 32 bits: 32 for thread 0
    t = cuda.laneid
    out[2] = cuda.clz(t)                    # laneid is 32 bits too
    out[3] = cuda.popc(a[1])                # int8 -1: 8 bits set
    out[4] = cuda.clz(cuda.grid(1))         # cuda.grid(1) is an int64: 64
    out[5] = cuda.brev(a[1])                # int8 -1 sign-extended to 32 bits: 0xFFFFFFFF
    out[6] = cuda.clz(b[0])                 # int16 1: 15


def test_bit_intrinsics_count_at_the_width_numba_cuda_compiles():
    # compile_ptx, cc 8.0: clz(int8) is "ld.global.u8; cvt.u32.u16; clz.b32; sub.s16 ..., 16; add.s16 ..., -8"
    # (8 bits); clz(cuda.threadIdx.x) is "mov.u32 %r1, %tid.x; clz.b32"; popc(int8) "popc.b32" of the
    # zero-extended byte; brev(int8) "ld.global.s8; brev.b32". PTX ISA: clz, popc, brev.
    out = np.zeros(7, np.int64)
    _bit_counts_wide[1, 1](out, np.array([1, -1], np.int8), np.array([1], np.int16))
    assert out.tolist() == [7, 32, 32, 8, 64, 0xFFFFFFFF, 15]


@cuda.jit
def _ffs_of_a_byte(out, a):
    out[0] = cuda.ffs(a[0])


@needs_typing
def test_ffs_of_a_narrow_integer_is_refused_as_numba_cuda_refuses_it():
    # compile_ptx: "No definition for lowering <class 'numba.cuda.stubs.ffs'>(int8,) -> uint32".
    from course_lib.sim._typing import GPUTypingError

    with pytest.raises(GPUTypingError, match="No definition for lowering"):
        _ffs_of_a_byte[1, 1](np.zeros(1, np.int64), np.ones(1, np.int8))


@cuda.jit
def _votes(out, wide):
    t = cuda.threadIdx.x
    out[0, t] = cuda.syncthreads_count(wide[t])
    out[1, t] = cuda.syncthreads_or(wide[t])
    out[2, t] = cuda.syncthreads_and(wide[t] + 1)


def test_block_votes_truncate_a_wide_predicate_to_32_bits():
    # compile_ptx of syncthreads_count(int64): "ld.global.u32 %r1; setp.ne.u32 %p1, %r1, 0;
    # bar.red.popc.u32": only the low 32 bits are tested, so 2**32 is false (PTX ISA, bar.red).
    wide = np.array([2**32, 2**33, 2**32 + 1, 0], np.int64)
    out = np.zeros((3, 4), np.int64)
    _votes[1, 4](out, wide)
    assert out[0].tolist() == [1] * 4       # only 2**32 + 1 counts
    assert out[1].tolist() == [1] * 4
    assert out[2].tolist() == [1] * 4       # 2**32 + 1, 2**33 + 1, 2**32 + 2, 1: all nonzero in 32 bits


def test_xoroshiro_states_are_seeded_without_warnings_and_bit_exact():
    # SplitMix64 and xoroshiro128+ are defined modulo 2**64 (numba-cuda's random.py, after Vigna's C code):
    # the first output of SplitMix64 from seed 0 is 0xE220A8397B1DCDAF. The simulator seeds in exact 64-bit
    # arithmetic, with none of the NumPy overflow warnings of numba-cuda's object-mode seeding; the states of
    # seed 1 are those numba-cuda's nopython seeding gives on the CPU (init_xoroshiro128p_states_cpu).
    import warnings

    from numba.cuda.random import create_xoroshiro128p_states

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zero = create_xoroshiro128p_states(4, seed=0).copy_to_host()
        one = create_xoroshiro128p_states(3, seed=1).copy_to_host()
    assert int(zero[0]["s0"]) == int(zero[0]["s1"]) == 0xE220A8397B1DCDAF
    assert [int(x) for x in one["s0"]] == [0x910A2DEC89025CC1, 0x73C19A5348FC9098, 0xB3D0CD6DDFA7A4C]
    assert [int(x) for x in one["s1"]] == [0x910A2DEC89025CC1, 0x6C96C932F21D71EE, 0xD3C2C33E9B8E707A]
