"""Does the pooled compacting simulator give the reference's counts, and what does a call cost the host
(allocations, uploads, downloads, waits) on its first call and on later calls of the same problem?"""

import pytest

from course_lib import cellsim as cs
from course_lib.cellsim import _pooled as pooled
from course_lib.sim import record

KW = {"tau_max": 120.0, "phi_min": 8.7}


@pytest.fixture(autouse=True)
def fresh_pool():
    pooled.release_workspaces()
    yield
    pooled.release_workspaces()


def _pooled(h0, types, seed, **options):
    with record() as log:
        result = cs.simulate(h0, types, seed=seed, method="compact_pooled", **KW, **options)
    return result, log


@pytest.fixture(scope="module")
def h0():
    """Fewer cells than the unit's shared population: the pooled calls run twice each."""
    return cs.lognormal_histogram(24, seed=1, median=200.0)


@pytest.mark.parametrize("n_cells, block", [(1, 32), (31, 32), (33, 32), (37, 16)])
def test_awkward_sizes_equal_the_reference_on_every_call(thesis_types, n_cells, block):
    h0 = cs.lognormal_histogram(n_cells, seed=n_cells, median=100.0)
    expected = cs.simulate(h0, thesis_types, seed=n_cells, method="reference", **KW)
    compact = cs.simulate(h0, thesis_types, seed=n_cells, method="compact", block=block, **KW)
    for call in range(2):  # the first call sizes the pool, the second sweeps without waiting
        result, _ = _pooled(h0, thesis_types, n_cells, block=block)
        assert result.same_as(expected), (call, result, expected)
        assert result.stats["deepest_generation"] == compact.stats["deepest_generation"]
        assert result.stats["waited"] == (call == 0)


def test_a_second_call_allocates_uploads_and_waits_for_nothing(h0, thesis_types):
    reference = cs.simulate(h0, thesis_types, seed=5, method="reference", **KW)
    first, first_log = _pooled(h0, thesis_types, 5)
    assert first.same_as(reference)
    assert first.stats["waited"] and first.stats["synchronisations"] > 0  # the first call sizes the buffers
    assert len(first_log.allocations) == first.stats["device_allocations"] > 0
    for seed in (5, 6):  # another seed of the same problem: the same buffers, still no wait
        second, log = _pooled(h0, thesis_types, seed)
        assert second.same_as(cs.simulate(h0, thesis_types, seed=seed, method="reference", **KW))
        s = log.summary()
        assert len(log.allocations) == 0 and second.stats["device_allocations"] == 0
        assert second.stats["synchronisations"] == 0 and not second.stats["waited"]
        assert s["HtoD_count"] == 0 and s["DtoH_count"] == 1  # the counts, once, at the end
        depth = second.stats["depth_bound"]
        # clear + init, then per generation a fate launch and (but the deepest) a scan and a scatter
        assert s["launches"] >= 2 + (depth + 1) + 2 * depth


def test_compact_waits_once_per_batch_and_allocates_on_every_call(h0, thesis_types):
    """What the pooled version removes: the lesson's "compact" allocates its buffers and constants on every
    call and waits once per batch."""
    with record() as log:
        compact = cs.simulate(h0, thesis_types, seed=5, method="compact", **KW)
    assert compact.stats["synchronisations"] == compact.stats["batches"]
    assert len(log.allocations) > 0 and log.summary()["HtoD_count"] >= 5


def test_a_sweep_whose_buffers_are_too_small_is_redone_exactly(h0, thesis_types):
    """A later call whose population outgrows the buffers the first call sized (here: one generation's
    buffers shrunk by hand) overflows the sweep; the call is redone waiting, with the same result."""
    from course_lib.cellsim.api import BatchArrays

    expected = cs.simulate(h0, thesis_types, seed=4, method="reference", **KW)
    first, _ = _pooled(h0, thesis_types, 4)
    (ws,) = pooled._pool().values()
    g = max(1, first.stats["deepest_generation"] // 2)
    ws.frames[g] = BatchArrays(1, 32)
    again, _ = _pooled(h0, thesis_types, 4)
    assert again.same_as(expected)
    assert again.stats["retried"] and again.stats["synchronisations"] > 0
    third, _ = _pooled(h0, thesis_types, 4)  # the redone call grew the buffers again
    assert third.same_as(expected) and not third.stats["waited"]


def test_batches_under_a_small_budget_wait_and_stay_within_it(h0, thesis_types):
    budget = 5000
    expected = cs.simulate(h0, thesis_types, seed=3, method="reference", **KW)
    for _ in range(2):
        result, _ = _pooled(h0, thesis_types, 3, memory_budget=budget, block=16)
        assert result.same_as(expected)
        assert result.stats["peak_device_bytes"] <= budget
        assert result.stats["cells_per_batch"] < h0.n_cells
        assert result.stats["synchronisations"] > 0  # a batched generation: the host must cut it


def test_release_frees_the_pool(h0, thesis_types):
    _pooled(h0, thesis_types, 1)
    assert pooled.workspace_bytes() > 0
    pooled.release_workspaces()
    assert pooled.workspace_bytes() == 0
