"""``python benchmarks/performance_table.py``: the manual's performance table (``docs/benchmarks.md``), from the committed runs.

Reads every results file in ``benchmarks/results/`` (CPU-only runs ``<unit>_cpu-only*_<date>.json``
and GPU runs alike) and prints one Markdown row per peer row that was timed paired with the
course (it has ``ratio_to_course``): the unit, the size, the course's median seconds (the
peer's median over the ratio), the peer's, the ratio of the medians with the range of the
per-round ratios, the load average recorded with the run, and the machine, date and file.
Nothing is typed in by hand: that page's table is this script's output.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def size_label(row: dict) -> str:
    """The size of a row, from the keys its unit's benchmark writes."""
    if "channels" in row:
        return f"{row['channels']} ch x {row['samples']:,}"
    if "n_elements" in row:
        return f"N = {row['n_elements']:,} (M = {row['n_entries']:,})"
    if "matrix" in row:
        return f"{row['matrix']} {row['dtype']}, nnz = {row['nnz']:,}"
    if "n_initial" in row:
        return f"L = {row['n_initial']:,} initial cells"
    if "width" in row:
        return f"{row['height']} x {row['width']}, {row['scope'].replace('_', ' ')}"
    for key in ("n", "n_points", "n_vertices", "rows", "n_rows", "n_cells", "size", "matrix", "graph", "instances"):
        if key in row:
            value = row[key]
            return f"{key} = {value:,}" if isinstance(value, int) else f"{key} = {value}"
    return ""


def machine(data: dict) -> str:
    """The device (or the CPU and its cores for a CPU-only run), the date and the load."""
    where = f"{data.get('cpu_cores', '?')}-core CPU" + (
        f" of the {data['device']['name']} machine" if data.get("backend") == "gpu" else "")
    # The load before the run: the one at its end counts the benchmark's own threads (course_lib.bench.load_note).
    load = data.get("load_average_start") or data.get("load_average_end")
    loaded = f", load {load[0]:.1f}" if load else ""
    busy = load is not None and load[0] > 0.5 * data.get("cpu_cores", 1)
    return f"{where}{loaded}{' (LOADED)' if busy else ''}, {data['date'][:10]}"


def rows(folder=RESULTS):
    """``(unit, size, course seconds, peer, peer seconds, ratio text, machine, file)`` per peer row."""
    out = []
    for path in sorted(Path(folder).glob("*.json")):
        data = json.loads(path.read_text())
        for r in data["rows"]:
            ratio = r.get("ratio_to_course")
            if ratio is None or r["variant"].startswith("cpu"):  # the course's own variants
                continue
            spread = (f" (rounds {r['round_ratio_min']:.2f}-{r['round_ratio_max']:.2f})"
                      if "round_ratio_min" in r else "")
            out.append((data["unit"], size_label(r), r["seconds"] / ratio, r["variant"], r["seconds"],
                        f"{ratio:.2f}x{spread}", machine(data), path.name))
    return out


def markdown(table) -> str:
    lines = ["| unit | size | course (s) | peer | peer (s) | peer / course | machine, date | results file |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {u} | {s} | {c:.4g} | {p} | {ps:.4g} | {r} | {m} | {f} |" for u, s, c, p, ps, r, m, f in table]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(rows(sys.argv[1] if len(sys.argv) > 1 else RESULTS)))
