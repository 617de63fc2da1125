"""Do the memory and depth models say what the simulators do?"""

import pytest

from course_lib.cellsim import model
from course_lib.cellsim.api import BatchArrays


def test_depth_bound_is_label_dilution():
    assert model.depth_bound(1000.0, 11.0) == 6  # 1000 / 64 = 15.6 >= 11 > 1000 / 128
    assert model.depth_bound(22.0, 11.0) == 1
    assert model.depth_bound(21.9, 11.0) == 0
    assert model.depth_bound(5.0, 11.0) == 0


def test_thesis_depth_estimate():
    assert model.depth_estimate(720.0, 48.33) == 15
    assert model.depth_estimate(0.0, 48.33) == 1


def test_tree_memory_doubles_per_level():
    assert model.tree_level_bytes(50_000, 0, 40) == 2_000_000
    assert model.tree_level_bytes(50_000, 10, 40) == 50_000 * 1024 * 40
    assert model.tree_peak_bytes(10, 3) == (40 + 80) * model.TREE_SLOT_BYTES
    assert model.tree_peak_bytes(10, 3, keep_all=True) == 150 * model.TREE_SLOT_BYTES


def test_the_thesis_memory_wall_is_about_4_gb():
    example = model.thesis_memory_example()
    assert example["bytes"] == 50_000 * (2**11 - 1) * 40
    assert 4.0e9 < example["bytes"] < 4.2e9


@pytest.mark.parametrize("n, block", [(1, 2), (7, 2), (32, 32), (33, 32), (1000, 8), (5000, 64)])
def test_frame_bytes_counts_what_a_batch_allocates(n, block):
    frame = BatchArrays(n, block)
    arrays = [frame.ids, frame.phis, frame.taus, frame.types, frame.children, frame.offsets, frame.division_times]
    arrays += [a for pair in frame.scan for a in pair]
    assert sum(a.nbytes for a in arrays) == model.frame_bytes(n, block) == frame.nbytes


@pytest.mark.parametrize("budget, depth", [(10_000, 3), (1_000_000, 9), (500, 0)])
def test_batch_cells_fits_depth_plus_one_batches(budget, depth):
    n = model.batch_cells(budget, depth, 32)
    assert n >= 1
    assert (depth + 1) * model.frame_bytes(n, 32) <= budget
    assert model.batch_cells(10, 3, 32) == 0
