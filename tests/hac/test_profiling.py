"""What do the profiler and the recorder measure on the unit's kernels?"""

import numpy as np
import pytest

from course_lib import hac
from course_lib.hac import data, profiling


def test_struct_layout_doubles_the_sectors_per_load():
    w = np.random.default_rng(0).random(96).astype(np.float32)
    soa = profiling.argmax_profile(w, "soa", block=32).total
    aos = profiling.argmax_profile(w, "aos", block=32).total
    assert soa.load_sectors_per_request == 4.0  # 32 floats = 128 bytes
    assert aos.load_sectors_per_request == 8.0  # 32 structs = 256 bytes, for half of it
    assert aos.global_load_sectors == 4 * soa.global_load_sectors  # values and indices, twice the bytes each


def test_device_resident_loop_copies_nothing_per_iteration():
    g = data.tied_graph(8, seed=1)
    resident = profiling.per_iteration(g, "gpu", fusion="atomic")
    assert resident["HtoD_count"] == resident["DtoH_count"] == 0 and resident["launches"] == 8
    trip = profiling.per_iteration(g, "gpu_roundtrip", fusion="cpu_sort")
    assert trip["DtoH_count"] >= 4 and trip["HtoD_count"] >= 2
    log = profiling.transfer_log(g, "gpu", 1)
    assert log.summary()["DtoH_count"] == 2  # parent and height, once, at the end


def test_stage_times_cover_every_stage():
    g = data.path_graph(5)
    assert set(profiling.stage_times(g, "reference")) == set(hac.STAGES)
    assert set(profiling.stage_times(g, "gpu", fusion="atomic")) == set(hac.STAGES)


def test_bad_arguments():
    with pytest.raises(ValueError, match="layout"):
        profiling.argmax_launch(np.zeros(4, np.float32), "csr")
    with pytest.raises(ValueError, match="weights"):
        profiling.argmax_launch(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="method"):
        profiling.transfer_log(data.path_graph(3), "cpu")
