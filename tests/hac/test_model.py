"""Do the models reproduce the thesis's own arithmetic?"""

import numpy as np
import pytest

from course_lib import hac


def test_amdahl_of_the_thesis():
    assert hac.amdahl_limit(hac.THESIS["kernel_fraction"]) == pytest.approx(4.46, abs=0.01)
    assert hac.amdahl_speedup(0.5, 2) == pytest.approx(4 / 3)
    assert hac.amdahl_speedup(0.776, np.array([1.0, 1e12]))[0] == pytest.approx(1.0)
    assert hac.amdahl_limit(1.0) == float("inf")
    with pytest.raises(ValueError, match="fraction"):
        hac.amdahl_speedup(1.5, 2)
    with pytest.raises(ValueError, match="speedup"):
        hac.amdahl_speedup(0.5, 0)


def test_stage_fractions_and_thesis_speedups():
    cpu, gpu = hac.THESIS["cpu_stage_seconds"], hac.THESIS["gpu_stage_seconds"]
    assert cpu["weighting"] / gpu["weighting"] == pytest.approx(46.5, abs=0.1)
    assert cpu["fusion"] / gpu["fusion"] == pytest.approx(0.25, abs=0.01)
    fractions = hac.stage_fractions(cpu)
    assert sum(fractions.values()) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        hac.stage_fractions({"a": 0.0})


def test_bytes_per_iteration():
    soa = hac.bytes_per_iteration(1000)
    aos = hac.bytes_per_iteration(1000, layout="aos")
    assert aos["matching"] == 2 * soa["matching"] == 8000
    assert hac.bytes_per_iteration(1000, fusion="atomic")["total"] == soa["total"] + 16000


def test_the_rounds_prediction_is_labelled_and_adds_up():
    from course_lib.hac.model import GRID_SYNC_SECONDS, PERSISTENT_RUN, predict_rac
    from course_lib.hac._rounds import average_link_rounds

    g, _ = hac.planted_graph(200, 3000, n_groups=2, seed=1)
    _, stats = average_link_rounds(g, stats=True)
    p = predict_rac(stats, g.n_elements, g.n_entries)
    assert "prediction" in p["label"] and "not a measurement" in p["label"]
    assert p["grid_syncs"] == 1 + 6 * stats.rounds
    assert p["sync_seconds"] == pytest.approx(p["grid_syncs"] * GRID_SYNC_SECONDS)
    assert p["device_seconds"] == pytest.approx(p["sync_seconds"] + p["pass_seconds"])
    assert p["seconds"] == pytest.approx(p["device_seconds"] + p["host_seconds"])
    assert p["entry_visits"] > 5 * stats.entries.sum()
    # The per-visit cost comes from the measured gpu_persistent run, less its syncs, at its own thread count.
    run = PERSISTENT_RUN
    same = predict_rac(stats, g.n_elements, g.n_entries, grid_threads=run["threads"])
    visits = run["merges"] * run["passes_per_merge"] * run["entries"]
    assert same["seconds_per_entry_visit"] * visits + run["merges"] * 3 * GRID_SYNC_SECONDS == pytest.approx(
        run["seconds"])
    assert p["seconds_per_entry_visit"] > same["seconds_per_entry_visit"]  # fewer threads in flight
    assert "gpu_persistent" in p["sources"]["seconds_per_entry_visit"]
