"""course_lib.sass: SASS of a kernel and its inner loop's instruction mix, without a GPU."""

import pytest
from numba import cuda, float32, uint32

from course_lib import sass as sass_mod
from course_lib.sass import (CLASSES, SassToolsMissing, classify, find_tool, innermost_loops, instruction_mix,
                             mix_of, parse_sass, sass)

# A hand-made disassembly: an outer loop (.L_x_1) around an inner one (.L_x_2), then the spin loop
# that ends every kernel (.L_x_3, a branch to itself).
FAKE_SASS = """
        /*0000*/                   S2R R0, SR_TID.X ;
.L_x_1:
        /*0010*/                   LDG.E R2, desc[UR4][R4.64] ;
        /*0020*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
.L_x_2:
        /*0030*/                   LDS.128 R8, [R3] ;
        /*0040*/                   FFMA R6, R8, R9, R6 ;
        /*0050*/                   MUFU.RSQ R7, R6 ;
        /*0060*/                   IADD3 R3, R3, 0x10, RZ ;
        /*0070*/                   ISETP.NE.AND P1, PT, R3, R5, PT ;
        /*0080*/               @P1 BRA `(.L_x_2) ;
        /*0090*/                   DADD R10, R10, R12 ;
        /*00a0*/               @P0 BRA `(.L_x_1) ;
        /*00b0*/                   STG.E desc[UR4][R4.64], R6 ;
        /*00c0*/                   EXIT ;
.L_x_3:
        /*00d0*/                   BRA `(.L_x_3);
"""


def test_classify_puts_each_opcode_in_its_class():
    expected = {"FFMA": "FP32", "FADD": "FP32", "FMUL": "FP32", "FSETP.GT.AND": "FP32", "DFMA": "FP64",
                "DADD": "FP64", "IADD3.X": "integer", "IMAD.WIDE.U32": "integer", "LEA.HI.X": "integer",
                "LOP3.LUT": "integer", "SEL": "integer", "ISETP.GE.U32.AND": "integer", "BRA": "control",
                "BAR.SYNC.DEFER_BLOCKING": "control", "EXIT": "control", "MUFU.RSQ": "MUFU", "LDS.128": "shared",
                "STS": "shared", "ATOMS.ADD": "shared", "LDG.E.128": "global", "STG.E": "global",
                "ATOMG.E.ADD": "global", "RED.E.ADD": "global", "MOV": "other", "S2R": "other", "LDC": "other"}
    assert {op: classify(op) for op in expected} == expected
    assert set(expected.values()) == set(CLASSES)


def test_parse_sass_reads_addresses_opcodes_labels_and_targets():
    instructions, labels = parse_sass(FAKE_SASS)
    assert [i.address for i in instructions] == list(range(0, 0xE0, 0x10))
    assert labels == {".L_x_1": 0x10, ".L_x_2": 0x30, ".L_x_3": 0xD0}
    branch = instructions[8]
    assert (branch.opcode, branch.target) == ("BRA", ".L_x_2")  # the guard predicate is not the opcode
    assert instructions[2].opcode == "BAR.SYNC.DEFER_BLOCKING"


def test_the_innermost_loop_is_found_and_the_end_spin_is_not_a_loop():
    loops = innermost_loops(*parse_sass(FAKE_SASS))
    assert [(lp.start, lp.end, lp.size) for lp in loops] == [(0x30, 0x80, 6)]


def test_mix_counts_one_trip_and_divides_slots_by_the_work_per_trip():
    mix = mix_of(FAKE_SASS, per=2)
    assert mix.counts == {"FP32": 1, "FP64": 0, "integer": 2, "control": 1, "MUFU": 1, "shared": 1, "global": 0,
                          "other": 0}
    assert mix.slots == 6 and mix.slots_per_unit == 3.0
    assert mix.per_unit()["integer"] == 1.0
    assert mix.opcodes["LDS"] == 1 and "slots" in mix.table() and "0x0030-0x0080" in str(mix)


def test_mix_refuses_code_without_a_loop_and_nonpositive_work():
    with pytest.raises(ValueError, match="no loop"):
        mix_of("        /*0000*/                   EXIT ;\n")
    with pytest.raises(ValueError, match="per must be positive"):
        mix_of(FAKE_SASS, per=0)
    with pytest.raises(ValueError, match="loop must be in 0..0"):
        mix_of(FAKE_SASS, loop=1)


def test_missing_wheels_give_a_clear_error(monkeypatch):
    monkeypatch.setattr(sass_mod, "_wheel_bins", lambda: [])
    monkeypatch.setenv("PATH", "")
    with pytest.raises(SassToolsMissing, match=r"nvidia-cuda-nvcc wheel.*\[cu13\]"):
        find_tool("ptxas")
    with pytest.raises(SassToolsMissing, match="nvidia-cuda-nvdisasm"):
        find_tool("nvdisasm")

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled before checking the tools")

    monkeypatch.setattr("course_lib.compile_check.compile_kernel", no_compile)
    with pytest.raises(SassToolsMissing):
        sass(_nbody_uint32, "float32[:, ::1], float32, float32[:, ::1]")


def test_arch_and_signature_forms():
    assert sass_mod._arch_cc("sm_90") == (9, 0) and sass_mod._arch_cc("sm_80") == (8, 0)
    with pytest.raises(ValueError, match="sm_90"):
        sass_mod._arch_cc("hopper")
    form = "void(float32[::1], int64)"
    assert sass_mod._signature(form) == form
    assert sass_mod._signature("float32[::1], int64") == form
    assert sass_mod._signature(("float32[::1]", "int64")) == form


def _tools_installed():
    try:
        find_tool("ptxas"), find_tool("nvdisasm")
    except SassToolsMissing:
        return False
    return True


needs_tools = pytest.mark.skipif(not _tools_installed(), reason="ptxas/nvdisasm wheels not installed (cu13 extra)")

_TILE = 256


@cuda.jit(fastmath=True)
def _nbody_uint32(bodies, softening_sq, acc):
    # The tiled N-body kernel with an unsigned `while` counter: no 64-bit range() iterator and no
    # negative-index wrap-around in the inner loop.
    tile_bodies = cuda.shared.array((_TILE, 4), float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * _TILE + t
    n = bodies.shape[0]
    xi = bodies[i, 0]
    yi = bodies[i, 1]
    zi = bodies[i, 2]
    ax = float32(0.0)
    for start in range(0, n, _TILE):
        for c in range(4):
            tile_bodies[t, c] = bodies[start + t, c]
        cuda.syncthreads()
        k = uint32(0)
        while k < uint32(_TILE):
            dx = tile_bodies[k, 0] - xi
            dy = tile_bodies[k, 1] - yi
            dz = tile_bodies[k, 2] - zi
            r2 = dx * dx + (dy * dy + (dz * dz + softening_sq))
            inv = float32(1.0) / r2
            ax += tile_bodies[k, 3] * inv * dx
            k += uint32(1)
        cuda.syncthreads()
    acc[i, 0] = ax


@needs_tools
def test_the_committed_tiled_nbody_loop_matches_the_hand_count():
    from course_lib.nbody.kernels import BODY_SIG, nbody_tiled_kernel

    mix = instruction_mix(nbody_tiled_kernel(256), BODY_SIG, "sm_90", per=4)
    # numba-cuda 0.30.4 + ptxas 13.5: the loop is unrolled 4x; 13 FP32, one MUFU.RSQ and one LDS.128
    # per interaction, the rest is the 64-bit range() counter and index wrap-around.
    assert (mix.counts["FP32"], mix.counts["MUFU"], mix.counts["shared"], mix.counts["global"]) == (52, 4, 4, 0)
    assert mix.counts["integer"] >= 40
    assert 25 <= mix.slots_per_unit <= 30
    text = sass(nbody_tiled_kernel(256), BODY_SIG)
    assert "MUFU.RSQ" in text and "LDS.128" in text


@needs_tools
def test_a_kernel_written_here_compiles_and_an_unsigned_counter_removes_integer_work():
    signature = ("float32[:, ::1]", "float32", "float32[:, ::1]")
    text = sass(_nbody_uint32, signature, "sm_80")
    mix = mix_of(text, per=1)
    # ptxas unrolls the constant-trip unsigned loop entirely, so the innermost loop is the tile loop:
    # one LDS.128 per interaction (plus the staging STS) counts the interactions of one trip.
    trips = mix.counts["shared"] - 1
    assert trips >= 1
    per_unit = mix_of(text, per=trips)
    assert per_unit.counts["FP32"] >= 5 * trips
    assert per_unit.per_unit()["integer"] <= 2  # against 11.5-12.5 per interaction with range()
