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
    # compaction: one 4-byte total per batch, then the histogram and the per-level counts
    batches = compact["result"].stats["batches"]
    assert compact["dtoh_copies"] == batches + 2
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
