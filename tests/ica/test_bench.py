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
    rows = bench._convergence_rows(eeg, seed=1, repeat=3)
    rows.append(bench._row("cpu", eeg, 0.01, __import__("course_lib").ica.infomax(eeg.data, seed=1), "per_step"))
    out = shared.stamp("ica")
    out.update(rows=rows, notes=["test"], summary=bench._goal(rows, (6, 3000)))
    return out


def test_every_peer_is_measured_paired(results):
    conv = [r for r in results["rows"] if r["kind"] == "to_convergence"]
    assert {r["variant"] for r in conv} == {"cpu", "mne_infomax", "mne_infomax_matched", "mne_infomax_extended",
                                            "picard", "fastica"}
    for r in conv:
        assert r["amari"] < 0.1 and r["seconds"] > 0
        if r["steps"] is None:  # MNE returns max_iter whether its tolerance or its cap stopped it: no count claimed
            assert r["variant"].startswith("mne") and r["converged"] is None
        else:
            assert r["steps"] >= 1
        assert r["repetitions"] == 3 and r["seconds_min"] <= r["seconds"] <= r["seconds_max"]
        assert r["round_ratio_min"] <= r["round_ratio_median"] <= r["round_ratio_max"]
        assert ("prepare_seconds" in r) == (r["variant"] != "cpu")
    by = {r["variant"]: r for r in conv}
    assert all(by[v]["steps"] >= 1 for v in ("cpu", "picard", "fastica"))
    assert by["cpu"]["ratio_to_course"] == 1.0
    assert by["mne_infomax_matched"]["ratio_to_course"] == pytest.approx(by["mne_infomax_matched"]["seconds"]
                                                                         / by["cpu"]["seconds"])


def test_matched_mne_uses_the_courses_settings(results):
    """The matched row runs MNE with the course's learning rate, minibatch, tolerance and step cap."""
    from course_lib.ica.reference import default_batch_size, default_lrate

    by = {r["variant"]: r for r in results["rows"] if r["kind"] == "to_convergence"}
    matched, cpu = by["mne_infomax_matched"], by["cpu"]
    assert matched["l_rate"] == cpu["lrate"] == default_lrate(6)
    assert matched["block"] == cpu["batch"] == default_batch_size(3000)
    assert matched["w_change"] == cpu["tol"] and matched["max_iter"] == cpu["max_steps"]
    assert by["mne_infomax"]["settings"] == "MNE defaults"


def test_summary_plot_and_json(results, tmp_path):
    text = bench.summary(results)
    assert "CPU goal against mne_infomax_matched" in text and "CPU goal against picard" in text
    assert "peer/course" in text and "median of 3" in text
    assert set(results["summary"]["peers"]) == set(bench.GOAL_PEERS)
    json_path, png_path = shared.write_results(results, tmp_path, bench.plot)
    saved = json.loads(json_path.read_text())
    assert saved["unit"] == "ica" and png_path.stat().st_size > 0
    assert all({"seconds", "spread", "repetitions", "ratio_to_course"} <= set(r) for r in saved["rows"]
               if r["kind"] == "to_convergence")
    committed = tmp_path / "committed"  # what a lesson prints of the newest committed GPU run
    shared.write_results(dict(results, backend="gpu", device=dict(results["device"], name="NVIDIA H100 80GB HBM3")),
                         committed)
    shown = shared.gpu_figures("ica", committed)
    assert shown.startswith("Measured on NVIDIA H100 80GB HBM3") and "CPU goal against picard" in shown


def test_the_unit_is_benchmarked():
    from course_lib.bench.__main__ import benchmarked_units

    assert "ica" in benchmarked_units()
