"""Does ps1.q1 grade the split technique rather than one solution?

Kernels written from the problem statement (q threads per body, P threads per block,
``kernel[ceil(N q / P), P](bodies, softening_sq, acc)``, thread t working for body b P / q + t // q):
wrong techniques with right results must earn at most half of the question, right techniques
written differently (the share of each thread contiguous or interleaved, a shared-memory tree, a
serial sum, a warp-synchronous tree or shuffles for the reduction, the destination read from shared memory) full
marks.

Each variant is made by :func:`split_variant` from the choices that tell it apart (constants of the
kernel's closure), so that a family differs from the solution in one choice only.
"""

import sys
from pathlib import Path

import pytest
from numba import cuda, float32

from course_lib.grading import get_question, run_tests
from course_lib.nbody.kernels import interaction

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
import make_fixtures  # noqa: E402

POINTS = 6

#: Grading seeds: the hidden technique test draws its N, tile, q and profiled block from each.
SEEDS = (11, 12)


def grade(factory, seed=11):
    return run_tests(get_question("ps1.q1"), factory, hidden=True, seed=seed)


#: A q1 kernel in pieces: the staging loop around ``{sum}`` (what each thread sums of a staged tile), then
#: ``{reduce}`` (how a body's q partial sums become its stored sum). Each variant fills them from the choices
#: below; its source is run as a notebook cell is (no line of it is dead code the coverage test would flag).
TEMPLATE = """
def make_split_kernel(tile, q):
    share = tile // q

    @cuda.jit
    def kernel(bodies, softening_sq, acc):
        staged = cuda.shared.array((tile, 4), float32)
        partial = cuda.shared.array((tile, 3), float32)
        t = cuda.threadIdx.x
        part = t % q
        n = bodies.shape[0]
        body = cuda.blockIdx.x * (tile // q) + t // q
        px = bodies[body, 0] if body < n else float32(0)
        py = bodies[body, 1] if body < n else float32(0)
        pz = bodies[body, 2] if body < n else float32(0)
        ax = ay = az = float32(0)
{loop}
{reduce}
    return kernel
"""

STAGED_LOOP = """        for base in range(0, n, tile):
            src = base + t
            for c in range(4):
                staged[t, c] = bodies[src, c] if src < n else float32(0)
            cuda.syncthreads()
{sum}
            cuda.syncthreads()"""

ADD = """                g = interaction(px, py, pz, staged[s, 0], staged[s, 1], staged[s, 2], staged[s, 3],
                                softening_sq)
                ax += g[0]
                ay += g[1]
                az += g[2]"""

SUMS = {
    "contiguous": "            for s in range(part * share, part * share + share):\n" + ADD,
    "interleaved": "            for s in range(part, tile, q):\n" + ADD,
    "everything": "            for s in range(tile):\n" + ADD,
}
LOOPS = {name: STAGED_LOOP.format(sum=text) for name, text in SUMS.items()}
LOOPS["global"] = """        if body < n:
            for s in range(part, n, q):
                g = interaction(px, py, pz, bodies[s, 0], bodies[s, 1], bodies[s, 2], bodies[s, 3], softening_sq)
                ax += g[0]
                ay += g[1]
                az += g[2]"""
LOOPS["shared_destination"] = """        here = cuda.shared.array((tile, 3), float32)
        here[t, 0], here[t, 1], here[t, 2] = px, py, pz
""" + STAGED_LOOP.format(sum=SUMS["contiguous"].replace("interaction(px, py, pz,",
                                                        "interaction(here[t, 0], here[t, 1], here[t, 2],"))
LOOPS["whole"] = STAGED_LOOP.format(sum="            if part == 0:\n                for s in range(tile):\n"
                                        + ADD.replace("\n", "\n    ").replace("                g =",
                                                                            "                    g =", 1))

STORE = """        if part == 0 and body < n:
            acc[body, 0], acc[body, 1], acc[body, 2] = {x}, {y}, {z}
"""

_TREE = """        partial[t, 0], partial[t, 1], partial[t, 2] = ax, ay, az
        {first}
        half = q // 2
        while half > 0:
            if part < half:
                for c in range(3):
                    partial[t, c] += partial[t + half, c]
            {step}
            half //= 2
""" + STORE.format(x="partial[t, 0]", y="partial[t, 1]", z="partial[t, 2]")

REDUCTIONS = {
    "tree": _TREE.format(first="cuda.syncthreads()", step="cuda.syncthreads()"),
    "syncwarp": _TREE.format(first="cuda.syncwarp()", step="cuda.syncwarp()"),
    "racy": _TREE.replace("        {first}\n", "").replace("            {step}\n", ""),
    "serial": """        partial[t, 0], partial[t, 1], partial[t, 2] = ax, ay, az
        cuda.syncthreads()
        if part == 0 and body < n:
            for c in range(3):
                total = float32(0)
                for k in range(q):
                    total += partial[t + k, c]
                acc[body, c] = total
""",
    "shuffle": """        lanes = ((1 << q) - 1) << (t % 32 // q * q)  # the body's q lanes (a block of 24 has no lanes 24-31)
        step = q // 2
        while step > 0:
            ax += cuda.shfl_xor_sync(lanes, ax, step)
            ay += cuda.shfl_xor_sync(lanes, ay, step)
            az += cuda.shfl_xor_sync(lanes, az, step)
            step //= 2
""" + STORE.format(x="ax", y="ay", z="az"),
    "none": STORE.format(x="ax", y="ay", z="az"),
}


def variant_source(loop="contiguous", reduction="tree"):
    """The source of a q1 answer: ``loop`` one of ``LOOPS``, ``reduction`` one of ``REDUCTIONS``."""
    return TEMPLATE.format(loop=LOOPS[loop], reduce=REDUCTIONS[reduction])


def _factory(source, name):
    namespace = make_fixtures.run_cell(source, {"cuda": cuda, "float32": float32, "interaction": interaction})
    factory = namespace["make_split_kernel"]
    factory.__name__ = name
    return factory


def _named(name, loop="contiguous", reduction="tree"):
    return _factory(variant_source(loop, reduction), name)


def _dispatch(name, condition, other):
    """The right kernel where ``condition`` (of tile and q) is false, ``other`` where it is true."""
    namespace = {"right": _named(name + "_right"), "other": other}
    source = f"def make_split_kernel(tile, q):\n    return other(tile, q) if {condition} else right(tile, q)\n"
    factory = make_fixtures.run_cell(source, namespace)["make_split_kernel"]
    factory.__name__ = name
    return factory


def split_only_up_to_512_bodies():
    """The split while N <= 512 (every size the visible tests use); beyond, part 0 of each body sums it whole."""
    whole = LOOPS["whole"].replace("            if part == 0:", "            if part == 0 or n <= 512:")
    whole = whole.replace("range(tile)", "range(part * share, part * share + share) if n <= 512 else range(tile)")
    return _factory(TEMPLATE.format(loop=whole, reduce=REDUCTIONS["tree"]), "split_only_up_to_512_bodies")


# ----------------------------------------------------------------------------- wrong techniques
WRONG = [
    _named("one_thread_sums_the_whole_body", "whole", "none"),
    _named("split_reading_sources_from_global_memory", "global", "tree"),
    _named("every_thread_of_a_body_sums_everything", "everything", "none"),
    _named("reduction_without_barriers", "contiguous", "racy"),
]

#: The technique only on part of the range the question states: q up to 8, q other than 2 (on every tile or one),
#: or N up to 512.
WRONG_ON_SOME_CONFIGURATIONS = [
    _dispatch("split_only_up_to_q_8", "q > 8", _named("whole_body", "whole", "none")),
    _dispatch("every_thread_sums_everything_at_q_2", "q == 2", _named("everything_at_q_2", "everything", "none")),
    # ...at q = 2 on the smallest tile only (the one visible q = 2 test's), which runs every line of the kernel.
    _dispatch("every_thread_sums_everything_at_q_2_on_tile_8", "q == 2 and tile == 8",
              _named("everything_at_q_2_tile_8", "everything", "none")),
    split_only_up_to_512_bodies(),
]

# ----------------------------------------------------------------------------- right, written differently
RIGHT = [
    _named("interleaved_shares_shuffle_reduction", "interleaved", "shuffle"),
    _named("serial_sum_of_the_partials", "contiguous", "serial"),
    _named("interleaved_shares_warp_synchronous_tree", "interleaved", "syncwarp"),
    _named("destination_read_from_shared_memory", "shared_destination", "serial"),
]


@pytest.mark.parametrize("factory", WRONG, ids=lambda f: f.__name__)
def test_a_wrong_technique_with_right_results_earns_at_most_half(factory):
    result = grade(factory)
    assert result.points <= POINTS / 2, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("factory", WRONG_ON_SOME_CONFIGURATIONS, ids=lambda f: f.__name__)
def test_the_technique_only_on_part_of_the_range_earns_at_most_half(factory, seed):
    result = grade(factory, seed)
    assert result.points <= POINTS / 2, str(result)
    assert any(o.technique and not o.passed for o in result.outcomes), str(result)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("factory", RIGHT, ids=lambda f: f.__name__)
def test_the_technique_written_differently_earns_full_marks(factory, seed):
    result = grade(factory, seed)
    assert result.points == POINTS, str(result)
