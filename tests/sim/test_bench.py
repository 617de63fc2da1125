"""Does ``python -m course_lib.bench sim --quick`` time every case four ways and write JSON + a plot?"""

import json

from course_lib import device
from course_lib.bench.__main__ import main


def test_sim_bench_quick_writes_results(tmp_path, capsys):
    assert main(["sim", "--quick", "--out", str(tmp_path)]) == 0
    (json_file,) = tmp_path.glob("sim_*.json")
    results = json.loads(json_file.read_text())
    assert results["unit"] == "sim"
    if not device.is_simulator():
        assert results["rows"] == []
        return
    assert list(tmp_path.glob("sim_*.png"))
    assert {r["case"] for r in results["rows"]} >= {"nbody tiled P=32", "warp shuffle sum"}
    for row in results["rows"]:
        assert row["plain_s"] > 0 and row["check_s"] > 0 and row["profile_s"] > 0
        assert row["check_overhead"] == row["check_s"] / row["plain_s"]
        assert (row["stock_s"] is None) == (row["case"] == "warp shuffle sum")  # no warp primitives in the stock one
        assert row["untyped_s"] > 0 and row["typing_overhead"] == row["plain_s"] / row["untyped_s"]
        assert row["first_typing_s"] is not None  # numba-cuda typed the kernel (its toolkit wheels are installed)
    assert "worst overhead" in capsys.readouterr().out
