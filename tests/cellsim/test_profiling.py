"""Do the course's tools measure what the lesson claims?"""

from course_lib.cellsim import model, profiling

KW = {"tau_max": 150.0, "phi_min": 11.0, "seed": 3}


def test_tree_copies_every_level_back_and_compaction_copies_counts(h0, thesis_types):
    tree = profiling.transfers(h0, thesis_types, method="tree", **KW)
    compact = profiling.transfers(h0, thesis_types, method="compact", **KW)
    assert tree["result"].same_as(compact["result"])
    levels = tree["result"].stats["levels"]
    assert tree["dtoh_copies"] == 3 * levels  # states, fluorescence and types of each new level
    # bytes copied back double every level: 2 * L * 2**g slots x (4 + 8 + 4) bytes
    per_level = [tree["record"].transfers[i].nbytes for i in range(len(tree["record"].transfers))
                 if tree["record"].transfers[i].direction == "DtoH"]
    assert per_level[:3] == [2 * h0.n_cells * 4, 2 * h0.n_cells * 8, 2 * h0.n_cells * 4]
    assert tree["dtoh_bytes"] == sum(2 * h0.n_cells * 2**g * 16 for g in range(levels))
    # compaction: the histogram and the per-level counts, whatever the batches (the totals reach the host mapped)
    assert compact["result"].stats["batches"] > 1
    assert compact["dtoh_copies"] == 2
    assert compact["dtoh_bytes"] < tree["dtoh_bytes"] / 20


def test_shared_bins_take_one_global_atomic_per_nonempty_bin(h0, thesis_types):
    out = profiling.histogram_atomics(h0, thesis_types, tau_max=40.0, phi_min=11.0, block=32)
    assert out["recorded"] > 0
    assert out["shared_atomics"] == out["recorded"]
    assert out["global_atomics"] == out["nonempty_bins"] < out["recorded"]


def test_level_populations_match_the_tree_model(h0, thesis_types):
    levels = profiling.level_populations(h0, thesis_types, **KW)
    assert levels["slots"] == [h0.n_cells * 2**g for g in range(len(levels["alive"]))]
    assert all(a <= s for a, s in zip(levels["alive"], levels["slots"]))
    assert levels["alive"][-1] == 0
    assert max(levels["result"].stats["peak_device_bytes"], 0) == 3 * levels["slots"][-2] * model.TREE_SLOT_BYTES


def test_buffers_are_allocated_once_per_generation_whatever_the_batches(h0, thesis_types):
    """A budget that forces many batches: still one set of batch buffers per generation reached."""
    from course_lib import cellsim as cs

    small = cs.simulate(h0, thesis_types, method="compact", block=32, memory_budget=6000, **KW)
    large = cs.simulate(h0, thesis_types, method="compact", block=32, **KW)
    assert small.same_as(large)
    assert small.stats["batches"] > 5 * large.stats["batches"]
    for r in (small, large):
        assert r.stats["frames_allocated"] == r.stats["deepest_generation"] + 1
        assert r.stats["synchronisations"] == r.stats["batches"]
    assert small.stats["peak_device_bytes"] <= 6000


def test_phase_breakdown_counts_launches_copies_and_allocations(h0, thesis_types):
    out = profiling.phase_breakdown(h0, thesis_types, block=32, memory_budget=6000, **KW)
    batches = out["batches"]
    assert out["dtoh_copies"] == 2
    assert out["synchronisations"] == batches
    per_kernel = out["launches_per_kernel"]
    fate = [name for name in per_kernel if name.startswith("fate")]
    assert len(fate) == 1 and per_kernel[fate[0]] == batches
    assert per_kernel["scatter_daughters_kernel"] == batches - per_kernel["init_cells_kernel"]
    assert out["launches"] == sum(per_kernel.values())
    assert out["frames_allocated"] == out["result"].stats["deepest_generation"] + 1
    assert set(out["phase_seconds"]) == {"init", "fate", "scan", "scatter", "wait"}
    assert all(v > 0 for v in out["phase_seconds"].values())
    assert out["device_seconds"] < out["wall_seconds"]
