"""``python -m tests.compile_probe UNIT``: run a unit's compiled CPU path on a small input, then print
what Numba did, as JSON: per course_lib dispatcher that holds machine code, whether it has a disk
cache, and its cache hits and misses (a miss is a compilation). Used by tests/test_compile_cache.py
in fresh processes."""

from __future__ import annotations

import gc
import json
import sys

import numpy as np


def _nbody():
    from course_lib.nbody import plummer_sphere
    from course_lib.nbody.api import pack_bodies
    from course_lib.nbody.cpu import accelerations_cpu

    pos, _, mass = plummer_sphere(64, seed=1)
    accelerations_cpu(pack_bodies(pos, mass), 1e-4)


def _spmv():
    from course_lib.spmv.cpu import spmv_cpu
    from course_lib.spmv.data import laplacian

    A = laplacian("5pt", 8)
    x = np.ones(A.shape[1], dtype=A.dtype)
    for parallel in (True, False):
        spmv_cpu(A.indptr, A.indices, A.data, x, parallel=parallel)


def _bfs():
    from course_lib.bfs.cpu import bfs_cpu, bfs_cpu_parallel
    from course_lib.bfs.data import as_graph, kronecker

    g = as_graph(kronecker(6, 8, seed=1), directed=False)
    bfs_cpu(g, 0)
    bfs_cpu_parallel(g, 0)


def _poisson():
    from course_lib.poisson import cat_in_coffee, seamless_clone

    source, target, mask = cat_in_coffee((40, 60))
    seamless_clone(source, target, mask, iterations=3, method="cpu")


def _hac():
    from course_lib.hac import cluster, planted_graph

    g, _ = planted_graph(60, 400, n_groups=2, seed=1)
    for dtype in (np.float32, np.float64):
        cluster(g, "cpu", dtype=dtype)
    cluster(g, "cpu_scan", dtype=np.float32)


def _ica():
    from course_lib.ica import infomax, simulate_eeg

    infomax(simulate_eeg(4, 2000, seed=0).data, "cpu", seed=1)


def _cellsim():
    from course_lib.cellsim import THESIS_TYPES, lognormal_histogram, prepare_problem
    from course_lib.cellsim.cpu import simulate_cpu

    problem = prepare_problem(lognormal_histogram(20, seed=1), THESIS_TYPES, tau_max=100.0, phi_min=11.0, seed=1)
    for parallel in (True, False):
        simulate_cpu(problem, parallel=parallel)


def _colocation():
    from course_lib.colocation import mine, planted_colocations

    d = planted_colocations(300, 5, groups=((0, 1),), r=1.0, seed=1)
    mine(d.points, d.features, 1.0, 0.3, method="cpu")


CPU_PATHS = {"nbody": _nbody, "spmv": _spmv, "bfs": _bfs, "poisson": _poisson, "hac": _hac, "ica": _ica,
             "cellsim": _cellsim, "colocation": _colocation}


def report() -> list:
    """Every course_lib CPU dispatcher holding machine code: name, cached or not, hits, misses."""
    from numba.core.caching import NullCache
    from numba.core.registry import CPUDispatcher

    out = []
    for obj in gc.get_objects():
        if isinstance(obj, CPUDispatcher) and obj.py_func.__module__.startswith("course_lib") and obj.overloads:
            out.append({"name": f"{obj.py_func.__module__}.{obj.py_func.__qualname__}",
                        "cached": not isinstance(obj._cache, NullCache),
                        "hits": sum(obj.stats.cache_hits.values()), "misses": sum(obj.stats.cache_misses.values())})
    return sorted(out, key=lambda d: d["name"])


if __name__ == "__main__":
    CPU_PATHS[sys.argv[1]]()
    print(json.dumps(report()))
