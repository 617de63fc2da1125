"""Build the PS5 submissions of ``tests/hac/submissions/`` from the solution notebook.

Run ``python tests/hac/make_ps5_submissions.py`` from the checkout root after changing the
solution; ``tests/hac/test_questions.py`` checks that the committed files are up to date. Each
submission is the solution with some answer cells replaced (by nbgrader ``grade_id``).
"""

from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent / "submissions"
SOLUTION = ROOT / "solutions" / "ps5_hac.ipynb"

#: Right sums, wrong technique: every later entry of a run adds itself into the first with an atomic.
ATOMIC_KERNEL = '''def make_fusion_kernel(block):
    """Atomics instead of a segmented scan."""
    @cuda.jit
    def fusion(keys, weights, src, dst):
        n = keys.shape[0]
        for p in range(cuda.threadIdx.x, n, block):
            neighbour = keys[p] >> 32
            first = p
            while first > 0 and (keys[first - 1] >> 32) == neighbour:
                first -= 1
            if first != p:
                cuda.atomic.add(weights, keys[first] & 0xFFFFFFFF, weights[keys[p] & 0xFFFFFFFF])
        cuda.syncthreads()
        for p in range(cuda.threadIdx.x, n, block):
            if p > 0 and (keys[p - 1] >> 32) == (keys[p] >> 32):
                e = keys[p] & 0xFFFFFFFF
                weights[e] = -np.inf
                src[e] = -1
                dst[e] = -1

    return fusion
'''

#: The typical bug: a segmented scan without the carry from one chunk to the next.
NO_CARRY_KERNEL = '''def make_fusion_kernel(block):
    """A segmented scan per chunk, but runs crossing a chunk boundary are not carried over."""
    @cuda.jit
    def fusion(keys, weights, src, dst):
        run_key = cuda.shared.array(block, int64)
        run_sum = cuda.shared.array(block, float32)
        run_head = cuda.shared.array(block, int64)
        t = cuda.threadIdx.x
        n = keys.shape[0]
        for base in range(0, n, block):
            p = base + t
            neighbour = int64(-2 - t)
            entry = int64(-1)
            value = float32(0.0)
            if p < n:
                neighbour = keys[p] >> 32
                entry = keys[p] & 0xFFFFFFFF
                value = weights[entry]
            head = entry
            run_key[t] = neighbour
            run_sum[t] = value
            run_head[t] = head
            cuda.syncthreads()
            offset = 1
            while offset < block:
                add = float32(0.0)
                first = head
                if t >= offset and run_key[t - offset] == neighbour:
                    add = run_sum[t - offset]
                    first = min(head, run_head[t - offset])
                cuda.syncthreads()
                run_sum[t] += add
                run_head[t] = first
                head = first
                cuda.syncthreads()
                offset *= 2
            if p < n:
                if entry != head:
                    weights[entry] = -np.inf
                    src[entry] = -1
                    dst[entry] = -1
                if p == n - 1 or (keys[p + 1] >> 32) != neighbour:
                    weights[head] = run_sum[t]
            cuda.syncthreads()

    return fusion
'''

#: The course's own kernel and measurements instead of the student's.
LIBRARY_ANSWERS = '''def make_fusion_kernel(block):
    return hac.kernels.fusion_segmented_kernel(block)


def amdahl(stage_seconds, accelerated, speedup):
    f = sum(stage_seconds[s] for s in accelerated) / sum(stage_seconds.values())
    return hac.amdahl_speedup(f, speedup)


def copies(method, n, seed):
    measured = hac.profiling.per_iteration(hac.tied_graph(n, seed=seed), method)
    return measured["HtoD_count"] + measured["DtoH_count"]
'''

SUBMISSIONS = {
    "solution": {},
    "atomic": {"ps5_q1_answer": ATOMIC_KERNEL},
    "no_carry": {"ps5_q1_answer": NO_CARRY_KERNEL},
    "library": {"ps5_q1_answer": LIBRARY_ANSWERS.split("\n\n\ndef amdahl")[0] + "\n",
                "ps5_q2_answer": "def amdahl" + LIBRARY_ANSWERS.split("\n\n\ndef amdahl")[1]},
}


def write(directory=HERE):
    """Write every submission (and the untouched problem set) into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, replaced in SUBMISSIONS.items():
        nb = nbformat.read(SOLUTION, as_version=4)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
            if grade_id in replaced:
                cell.source = replaced[grade_id].strip("\n")
        nbformat.write(nb, directory / f"{name}.ipynb")
    untouched = nbformat.read(ROOT / "problem_sets" / "ps5_hac.ipynb", as_version=4)
    nbformat.write(untouched, directory / "untouched.ipynb")


if __name__ == "__main__":
    write()
