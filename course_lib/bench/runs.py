"""The one reader of the GPU runs committed under ``benchmarks/results/``.

Two kinds of GPU run are committed, both JSON with the device and the date:

- a unit's full benchmark, ``<unit>_<device>_<date>.json`` (``python -m course_lib.bench <unit> --gpu``);
- the probe, ``probe-<unit>_<device>_<date>.json`` (``python -m course_lib.bench probe``): a few
  minutes for all units, the default GPU method of each as a user calls it.

:func:`committed_runs` lists a unit's runs of both kinds, newest first, each a :class:`Run` labelled
with its device, date and kind; :func:`runs_text` is what a lesson prints of them, including, when
none is committed, the sentence that says so (a lesson prints it; its markdown does not repeat it).
Runs without a GPU (``backend`` other than ``"gpu"``) carry no GPU figure and are left out, unless
asked for by their kind, ``"cpu"``: the full-size CPU-only runs ``<unit>_cpu-only_<date>.json``
(labelled with the CPU and its cores; ``--quick`` runs are never read).

The results are not shipped inside an installed package: :data:`RESULTS_DIR` is the
``benchmarks/results/`` of the checkout holding the package, and where it is absent every unit reads
as having no committed run (the sentence says where runs are looked for).

>>> import json, pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> for name, day in (("demo_nvidia-h200_2026-11-26", "2026-11-26"), ("probe-demo_nvidia-h200_2026-11-27", "2026-11-27")):
...     unit = name.split("_")[0]
...     row = {"variant": "gpu_fast", "default": True, "seconds": 0.24}
...     _ = (folder / f"{name}.json").write_text(json.dumps({"unit": unit, "backend": "gpu",
...          "device": {"name": "NVIDIA H200"}, "date": day + "T12:00:00+00:00", "rows": [row]}))
>>> [run.label for run in committed_runs("demo", folder=folder)]
['NVIDIA H200, 2026-11-27, probe', 'NVIDIA H200, 2026-11-26, benchmark']
>>> committed_runs("demo", kinds=("probe",), folder=folder)[0].default_row()["variant"]
'gpu_fast'
>>> print(runs_text("other", folder=folder))  # doctest: +ELLIPSIS
No GPU run of other is committed (neither its benchmark nor the probe, in .../): ...
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ALL_KINDS", "KINDS", "PROBE_PREFIX", "RESULTS_DIR", "Run", "committed_runs", "no_run_sentence", "read_run", "runs_text"]

#: Where the course's committed GPU runs live: ``benchmarks/results/`` of the checkout holding this package
#: (absent from an installed wheel: every unit then reads as having no committed run, and says where it looked).
RESULTS_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
#: The kinds of committed GPU run: a unit's full benchmark and the probe (what :func:`committed_runs` reads
#: by default).
KINDS = ("benchmark", "probe")
#: Every kind a reader may ask for: the GPU runs' and the full-size CPU-only runs' (``"cpu"``).
ALL_KINDS = KINDS + ("cpu",)
#: The probe's files are named ``probe-<unit>_...``, and their ``unit`` field is ``probe-<unit>``.
PROBE_PREFIX = "probe-"


@dataclass(frozen=True)
class Run:
    """One committed GPU run of a unit.

    Attributes
    ----------
    unit : str
        The unit (the name of its subpackage), for both kinds.
    kind : str
        ``"benchmark"`` (the unit's full benchmark on a GPU), ``"probe"`` or ``"cpu"`` (a full-size
        benchmark run without a GPU).
    device : str
        The GPU's name, as the run recorded it; for a ``"cpu"`` run, the CPU and its cores.
    date : str
        The run's day, ``YYYY-MM-DD`` (UTC); ``data["date"]`` has the time.
    path : Path
        The file.
    data : dict
        The whole results file: ``rows``, ``notes``, ``device``, ``versions``, ...
    """

    unit: str
    kind: str
    device: str
    date: str
    path: Path
    data: dict

    @property
    def rows(self) -> list:
        """The run's rows (GPU and CPU)."""
        return self.data.get("rows", [])

    @property
    def label(self) -> str:
        """``"<device>, <date>, <kind>"``, how a lesson names the run it prints."""
        return f"{self.device}, {self.date}, {self.kind}"

    def default_row(self) -> dict | None:
        """The row of the unit's default GPU method (probe runs state it; older runs may not)."""
        return next((r for r in self.rows if r.get("default")), None)

    def rows_of(self, variant: str) -> list:
        """The rows of one variant."""
        return [r for r in self.rows if r.get("variant") == variant]


def read_run(path) -> dict:
    """The results file at ``path``, checked to be one (JSON with ``unit``, ``device.name`` and ``date``).

    Raises
    ------
    ValueError
        Not JSON, or without unit, device and date.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text())
        complete = bool(data["unit"]) and "name" in data["device"] and bool(data["date"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a benchmark results file ({type(exc).__name__}: {exc})") from None
    if not complete:
        raise ValueError(f"{path}: not a benchmark results file (no unit, device or date)")
    return data


def _folder(folder) -> Path:
    return RESULTS_DIR if folder is None else Path(folder)


def committed_runs(unit: str, *, kinds=KINDS, folder=None) -> list:
    """The committed GPU runs of ``unit``, newest first.

    Parameters
    ----------
    unit : str
        A unit's name (the name of its subpackage).
    kinds : iterable of str
        Which kinds (:data:`ALL_KINDS`): the GPU runs, ``("benchmark", "probe")``, by default.
    folder : path-like, optional
        Default :data:`course_lib.bench.RESULTS_DIR`; a folder that does not exist holds no run.

    Returns
    -------
    list of Run
        Newest first by the run's date and time; at the same time, in the order of :data:`ALL_KINDS`.

    Raises
    ------
    ValueError
        A file named as a run of ``unit`` that is not a results file of that unit, or an unknown kind.
    """
    kinds = tuple(kinds)
    unknown = sorted(set(kinds) - set(ALL_KINDS))
    if unknown:
        raise ValueError(f"unknown kind(s) of run {unknown}; the kinds are {ALL_KINDS}")
    folder = _folder(folder)
    runs = []
    for kind in kinds:
        name = PROBE_PREFIX + unit if kind == "probe" else unit
        pattern = f"{name}_cpu-only_*.json" if kind == "cpu" else f"{name}_*.json"
        for path in sorted(folder.glob(pattern)) if folder.is_dir() else ():
            data = read_run(path)
            if data["unit"] != name:
                raise ValueError(f"{path}: not a results file of the {name} benchmark (unit {data['unit']!r})")
            if kind == "cpu" and data.get("backend") != "gpu" and not data.get("quick"):
                where = f"{data.get('cpu', 'CPU')} ({data.get('cpu_cores', '?')} cores)"
                runs.append(Run(unit, kind, where, data["date"][:10], path, data))
            elif kind != "cpu" and data.get("backend") == "gpu":
                runs.append(Run(unit, kind, data["device"]["name"], data["date"][:10], path, data))
    return sorted(runs, key=lambda r: (r.data["date"], -ALL_KINDS.index(r.kind)), reverse=True)


def no_run_sentence(unit: str, *, kinds=KINDS, folder=None) -> str:
    """What a lesson prints when ``unit`` has no committed GPU run (of ``kinds``), and how to make one."""
    folder = _folder(folder)
    where = f"{folder.parent.name}/{folder.name}/" if folder.is_dir() else f"{folder} (not in this installation)"
    which = ("neither its benchmark nor the probe" if set(kinds) == set(KINDS)
             else "no " + " or ".join(kinds) + " run")
    return (f"No GPU run of {unit} is committed ({which}, in {where}): on a machine with an NVIDIA GPU, "
            f"`python -m course_lib.bench probe {unit}` (minutes) or `python -m course_lib.bench {unit} --gpu` "
            f"(the full benchmark) measures it and writes JSON with the device and the date.")


def _row_text(row: dict) -> str:
    """One line of a row: variant, default mark, seconds (best and median when repeated), device time, counts."""
    text = f"  {row.get('variant', '?')}" + (" (default)" if row.get("default") else "")
    if "seconds_best" in row:
        text += f": best {row['seconds_best']:.4g} s, median {row['seconds']:.4g} s of {row.get('repetitions', 1)}"
    elif "seconds" in row:
        text += f": {row['seconds']:.4g} s"
    if row.get("scope"):
        text += f" [{row['scope']}]"
    if row.get("device_seconds") is not None and row.get("scope") == "end_to_end":
        text += f", device {row['device_seconds']:.4g} s"
    for key in sorted(k for k in row if k.startswith("seconds_per_")):
        text += f", {key.removeprefix('seconds_')} {row[key]:.4g} s"
    return text


def runs_text(unit: str, *, kinds=KINDS, folder=None, rows: bool = True) -> str:
    """What a lesson prints of ``unit``'s committed GPU runs.

    Each run on a line of its own, newest first, labelled ``device, date, kind`` with its file name,
    and (with ``rows``) the newest probe's rows under it; or :func:`no_run_sentence` when none is
    committed.
    """
    runs = committed_runs(unit, kinds=kinds, folder=folder)
    if not runs:
        return no_run_sentence(unit, kinds=kinds, folder=folder)
    lines = [f"GPU runs of {unit} committed under benchmarks/results/, newest first:"]
    lines += [f"- {run.label} ({run.path.name})" for run in runs]
    probe = next((run for run in runs if run.kind == "probe"), None)
    if rows and probe is not None:
        lines.append(f"rows of the newest probe ({probe.label}):")
        lines += [_row_text(row) for row in probe.rows]
    return "\n".join(lines)
