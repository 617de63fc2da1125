"""Technique signatures: does a failure name the feature, the measured value against the bound and the technique,
and does every signature run on configurations that separate (blocks of several warps, a partial last block)?"""

import math

import numpy as np
import pytest
from numba import cuda

from course_lib.grading import get_question
from course_lib.grading.core import questions_of
from course_lib.grading.authoring.signature import Feature, at_least, at_most, between, signature_test


def test_a_feature_inside_its_bound_passes_and_outside_says_what_missed():
    feature = Feature("shared bytes allocated per block", lambda m, d: m["shared_bytes_per_block"],
                      between(1, lambda d: 16 * d["tile"]), "a block stages one tile, not the whole input")
    assert feature.judge({"shared_bytes_per_block": 128.0}, {"tile": 8}) is None
    message = feature.judge({"shared_bytes_per_block": 4096.0}, {"tile": 8})
    assert message == ("shared bytes allocated per block: measured 4.1e+03, the technique gives in [1, 128] here. "
                       "The technique: a block stages one tile, not the whole input")
    assert "at most 2" in Feature("x", lambda m, d: 3, at_most(2), "t").judge({}, {})
    assert "at least 32" in Feature("x", lambda m, d: 3, at_least(32), "t").judge({}, {})
    # A value that is not a finite number never passes.
    assert Feature("x", lambda m, d: math.nan, at_most(2), "t").judge({}, {}) is not None


def test_a_signature_needs_two_configurations_and_a_feature():
    feature = Feature("x", lambda m, d: 0, at_most(1), "t")
    one = [lambda rng, info: {}]
    with pytest.raises(ValueError, match="at least two configurations"):
        signature_test("t", 1, configs=one, launch=None, expect=None, features=[feature])
    with pytest.raises(ValueError, match="at least one feature"):
        signature_test("t", 1, configs=one * 2, launch=None, expect=None, features=[])


def _signature_tests(question, seed=0):
    """The question's technique tests that measure a signature: their inputs are one data set per configuration
    (drawn with the grading seed ``seed``)."""
    rng = np.random.default_rng(seed)
    found = []
    for test in question.tests:
        if test.technique:
            data = test.inputs(rng, {})
            # A signature's configurations are data sets (dicts); ps9.q3's are (C, B) pairs of a layout decision.
            if isinstance(data, dict) and isinstance(data.get("configs"), list) and \
                    all(isinstance(config, dict) for config in data["configs"]):
                found.append(data["configs"])
    return found


def _configs(question_id):
    """The configurations of every signature test of the question (visible, and hidden ones drawn at grading time)."""
    return [config for configs in _signature_tests(get_question(question_id)) for config in configs]


def _blocks(threads, block):
    """(threads per block, whether the last block is partial) of a 1-D launch over ``threads`` items."""
    return block, threads % block != 0


#: Per question with a signature: (threads per block, whether the size leaves a partial last block) of a
#: configuration, from its data.
SEPARATING = {
    "ps1.q1": lambda c: (c["tile"], len(c["bodies"]) % (c["tile"] // c["q"]) != 0),  # a block covers P / q bodies
    "ps2.q1": lambda c: _blocks(c["shape"][0] * c["lanes"], c["block"]),
    "ps3.q1": lambda c: _blocks(len(c["depth"]), c["block"]),
    "ps4.q1": lambda c: (c["block"][0] * c["block"][1], np.shape(c["labels"])[0] % c["block"][1] != 0 or
                        (np.shape(c["labels"])[1] + 1) // 2 % c["block"][0] != 0),  # a thread per cell of a colour
    "ps4.q3": lambda c: (c["block"][0] * c["block"][1], np.shape(c["planes"])[1] % c["block"][1] != 0 or
                        np.shape(c["planes"])[2] % c["block"][0] != 0),  # a thread per pixel
    "ps5.q1": lambda c: _blocks(len(c["keys"]), c["block"]),
    "ps6.q1": lambda c: (64, len(c["Wt"]) % 16 != 0 or c["batch"] % 16 != 0),  # 8 x 8 threads, 16 x 16 tiles
    "ps7.q1": lambda c: _blocks(len(c["flags"]), c["block"]),
    "ps8.q1": lambda c: _blocks(len(c["features"]), c["block"]),
    "ps9.q1": lambda c: (c["block"], len(c["x"]) % (4 * c["block"]) != 0),  # a block scans 4B values
    "ps9.q2": lambda c: _blocks(len(c["x"]), c["block"]),
}


def test_every_question_with_a_signature_is_checked_for_configurations_that_separate():
    """A new technique test (or problem set) cannot skip the check below: each is listed in SEPARATING."""
    with_signature = sorted(q.id for n in range(1, 10) for q in questions_of(f"ps{n}") if _signature_tests(q))
    assert with_signature == sorted(SEPARATING)
    assert {q.split(".")[0] for q in with_signature} == {f"ps{n}" for n in range(1, 10)}


@pytest.mark.parametrize("question_id", sorted(SEPARATING))
def test_every_signature_runs_on_blocks_of_several_warps_and_on_a_partial_last_block(question_id):
    shapes = [SEPARATING[question_id](c) for c in _configs(question_id)]
    assert len(shapes) >= 2
    assert any(block >= 64 for block, _ in shapes), shapes
    assert any(partial for _, partial in shapes), shapes


# ----------------------------------------------------------------------------- configurations drawn at grading time
def _what_it_is(config):
    """A configuration's sizes: its arrays' shapes and its scalars (not the arrays' contents)."""
    out = []
    for key, value in sorted(config.items()):
        if isinstance(value, np.ndarray):
            out.append((key, value.shape))
        elif isinstance(value, (int, float, str, tuple, type(None), np.integer, np.floating)):
            out.append((key, value))
    return out


@pytest.mark.parametrize("question_id", sorted(SEPARATING))
def test_every_signature_draws_a_configuration_at_grading_time(question_id):
    """The sizes, blocks or sampled blocks of some configuration change with the grading seed: a kernel cannot
    know every configuration its technique is measured on. Where the question lets the block size vary, blocks
    of exactly one warp are among those measured."""
    question = get_question(question_id)
    seeds = [[[_what_it_is(c) for c in configs] for configs in _signature_tests(question, seed)] for seed in range(4)]
    assert any(drawn != seeds[0] for drawn in seeds[1:]), f"{question_id}: the same configurations on every seed"
    blocks = {SEPARATING[question_id](c)[0] for seed in range(4) for configs in _signature_tests(question, seed)
              for c in configs}
    if len(blocks) > 1:
        assert 32 in blocks, f"{question_id}: no configuration with blocks of one warp ({sorted(blocks)})"


def test_sample_blocks_draws_distinct_blocks_anywhere_in_the_grid():
    from course_lib.grading.authoring.signature import sample_blocks

    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(200):
        picks = sample_blocks(rng, 10, k=3)
        assert len(set(picks)) == 3 and all(0 <= b < 10 for b in picks) and list(picks) == sorted(picks)
        seen.update(picks)
    assert seen == set(range(10))  # the first, the last (partial) and every interior block can be drawn
    assert sample_blocks(rng, 3, k=3) is None  # a small grid runs whole
    # Every draw of two blocks or more holds two neighbours along x (a kernel working one way in every other block
    # has both ways measured), and along y too in a grid of two dimensions.
    for _ in range(50):
        picks = sample_blocks(rng, 10, k=2)
        assert picks[1] == picks[0] + 1
        square = set(sample_blocks(rng, (4, 5), k=3))
        assert any((x + 1, y, z) in square and (x, y + 1, z) in square for x, y, z in square), square
    grid_picks = sample_blocks(rng, (4, 5), k=2)
    assert all(len(p) == 3 and p[0] < 4 and p[1] < 5 and p[2] == 0 for p in grid_picks)


def _doubling(kind):
    """A kernel doubling x; ``kind="lone"``: the first warp of each block does the block's work, but only on
    every block past the 4th (the technique only where a grader with small grids looks); ``kind="odd"``: only in
    every other block (odd ``blockIdx.x``), where a median over the sampled blocks cannot see it."""
    if kind == "even":
        @cuda.jit
        def kernel(x, out):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = 2 * x[i]
        return kernel
    odd = kind == "odd"

    @cuda.jit
    def kernel(x, out):
        t = cuda.threadIdx.x
        base = cuda.blockIdx.x * cuda.blockDim.x
        if (cuda.blockIdx.x % 2 == 0) if odd else (cuda.blockIdx.x < 4):
            if base + t < x.size:
                out[base + t] = 2 * x[base + t]
        elif t < 32:
            for k in range(t, cuda.blockDim.x, 32):
                if base + k < x.size:
                    out[base + k] = 2 * x[base + k]
                    out[base + k] += 0
        cuda.syncthreads()
    return kernel


def _sampled_signature():
    from course_lib.grading.authoring.harness import Launch, kernel, question
    from course_lib.grading.authoring.signature import sample_blocks, warp_share

    def fixed(n, block):
        def make(rng, info):
            x = rng.random(n).astype(np.float32) + 1
            return {"x": x, "block": block, "blocks": None}
        return make

    def drawn(rng, info):  # a large launch of many blocks, a sample of them profiled
        n, block = int(rng.integers(20_000, 40_000)), 256
        x = rng.random(n).astype(np.float32) + 1
        return {"x": x, "block": block, "blocks": sample_blocks(rng, -(-n // block), k=2)}

    def launch(answer, data):
        x = data["x"]
        return Launch(answer.kernel(), -(-len(x) // data["block"]), data["block"],
                      {"x": x, "out": np.full_like(x, np.nan)}, outputs=("out",), blocks=data["blocks"])

    test = signature_test("the even technique", 1, configs=[fixed(300, 64), fixed(97, 32), drawn], launch=launch,
                          expect=lambda d: {"out": 2 * d["x"]},
                          features=[warp_share(at_most(1.25), "each warp copies its own 32 elements")])
    return question("ps9.q1", "sampled", 1, answer=kernel("kernel"), tests=[test])


def test_a_sampled_configuration_measures_only_its_blocks_and_catches_the_technique_elsewhere():
    from course_lib.grading import run_tests

    q = _sampled_signature()
    assert run_tests(q, _doubling("even"), hidden=True, seed=3).points == 1
    lone = run_tests(q, _doubling("lone"), hidden=True, seed=3)
    assert lone.points == 0 and "busiest warp" in lone.outcomes[0].message + str(lone.outcomes[0].measurement)
    for seed in (3, 4):
        odd = run_tests(q, _doubling("odd"), hidden=True, seed=seed)
        assert odd.points == 0 and "busiest warp" in odd.outcomes[0].message + str(odd.outcomes[0].measurement)
