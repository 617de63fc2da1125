"""The benchmark's pieces on a tiny recording (the full run is `python -m course_lib.bench ica`)."""

import json

import matplotlib
import pytest

from course_lib import bench as shared
from course_lib.ica import bench, simulate_eeg

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def results():
    eeg = simulate_eeg(6, 3000, seed=0)
    rows = bench._convergence_rows(eeg, seed=1)
    rows.append(bench._row("cpu", eeg, 0.01, __import__("course_lib").ica.infomax(eeg.data, seed=1), "per_step"))
    out = shared.stamp("ica")
    by = {r["variant"]: r for r in rows}
    out.update(rows=rows, notes=["test"], summary={
        "size": {"channels": 6, "samples": 3000}, "cpu_seconds": by["cpu"]["seconds"],
        "mne_seconds": by["mne_infomax"]["seconds"], "cpu_amari": by["cpu"]["amari"],
        "mne_amari": by["mne_infomax"]["amari"], "cpu_goal_met": True})
    return out


def test_every_peer_is_measured(results):
    variants = {r["variant"] for r in results["rows"]}
    assert {"cpu", "mne_infomax", "mne_infomax_extended", "picard", "fastica"} <= variants
    assert all(r["amari"] < 0.1 and r["seconds"] > 0 for r in results["rows"])


def test_summary_plot_and_json(results, tmp_path):
    text = bench.summary(results)
    assert "CPU goal" in text and "mne_infomax" in text
    json_path, png_path = shared.write_results(results, tmp_path, bench.plot)
    assert json.loads(json_path.read_text())["unit"] == "ica" and png_path.stat().st_size > 0


def test_the_unit_is_benchmarked():
    from course_lib.bench.__main__ import benchmarked_units

    assert "ica" in benchmarked_units()
