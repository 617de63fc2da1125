#!/usr/bin/env bash
# The checks only a GPU can make, as two runs of at most 5 minutes each on a machine with an NVIDIA GPU
# (one device call each; the second may follow the first on the same machine):
#
#   benchmarks/gpu_check.sh probe LOG_DIR   the probe, `python -m course_lib.bench probe` (every unit's default
#                                           GPU methods and headline kernels, host cost per launch; PROBE_UNITS
#                                           narrows it), writing benchmarks/results/probe-<unit>_<device>_<date>.json;
#   benchmarks/gpu_check.sh tests LOG_DIR   the tests that touch kernels, on the GPU backend (below).
#
# Logs go into LOG_DIR: env.txt, probe.log or pytest.log, failures.txt (each failed test's traceback, written as
# it happens, so a run stopped at its limit still says what failed), the results' JSON and results.tgz of all.
# Each stage has a time limit (PROBE_SECONDS, default 290 s; TEST_SECONDS, default 280 s) inside the call's 5 minutes.
#
# Wheels: where .whl/ exists (made here by benchmarks/gpu_wheels.sh and carried with the call), its wheels are
# installed into /tmp/site first (numpy 2.4.6, numba-cuda 0.30.4, cuda-core 1.2.2 and the packages the course
# imports that a stock CUDA + numba image lacks) and put first on PYTHONPATH; a second call on a warm machine
# reuses them.
#
# What the tests run covers (16-core H200 host, xdist over 14 workers, one GPU shared):
#   1. every unit's public API and kernels on the device: tests/<unit>/test_api*.py, tests/*/test_kernels.py
#      (the cooperative kernels' runs included);
#   2. the GPU hooks and semantics: tests/test_doctests.py, tests/sim/test_record.py (record()'s GPU hooks),
#      tests/sim/test_host_traffic.py (the host-traffic table: each form's count as numba-cuda's driver makes it),
#      tests/test_stub_kernels.py, tests/sim/test_typing.py, tests/test_device.py;
#   3. problem-set grading on the GPU: tests/grading/test_problem_sets.py, the untouched notebooks (score 0) and
#      the solutions (full marks).
# Left out, and why: the site build (tests/test_site.py) and the lessons' nbval runs (CPU work, minutes); the
# hostile-grading runs (tests/grading/test_grader.py, the graded fixtures of test_problem_sets.py: they test the
# grader and its sandbox, in the simulator, on the CPU); the compile-check and compile-cache tests (CPU only, no
# GPU involved); the question tests on reference answers (tests/*/test_questions*.py: about 10 minutes on 2 CPU
# cores, grader logic that the problem-set runs exercise end to end); widgets and plots (no kernels); the
# simulator-only files under tests/sim (they skip themselves on a GPU).
set -u
mode=${1:?usage: benchmarks/gpu_check.sh probe|tests LOG_DIR}
log=${2:?usage: benchmarks/gpu_check.sh probe|tests LOG_DIR}
case "$mode" in probe|tests) ;; *) echo "unknown mode $mode: use probe or tests" >&2; exit 2 ;; esac
mkdir -p "$log"
log=$(cd "$log" && pwd)
cd "$(dirname "$0")/.."
export COURSE_BACKEND=gpu PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
started=$(date +%s)

if [ -d .whl ] && ls .whl/*.whl > /dev/null 2>&1; then
  if [ ! -f /tmp/site/.course-wheels ] || ! cmp -s <(ls .whl) /tmp/site/.course-wheels; then
    "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
      || { echo "installing .whl/ failed" >&2; exit 3; }
    ls .whl > /tmp/site/.course-wheels
  fi
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  "$py" -c "import sys, numpy, numba, numba.cuda, course_lib
from course_lib import device
print(sys.version); print('numpy', numpy.__version__, 'numba', numba.__version__)
import importlib.metadata as md
for p in ('numba-cuda', 'cuda-core', 'cuda-bindings', 'cupy-cuda13x', 'scipy', 'mne', 'nbformat', 'ipywidgets'):
    try: print(p, md.version(p))
    except md.PackageNotFoundError: print(p, 'absent')
print(device.backend(), device.info())"
} > "$log/env.txt" 2>&1
cat "$log/env.txt"

if [ "$mode" = probe ]; then
  seconds=${PROBE_SECONDS:-290}
  # The units whose defaults and redesigns are least measured go first, so that a run stopped at its limit
  # loses the ones the committed runs already cover best (nbody's kernels are unchanged since 2026-11-27).
  units=${PROBE_UNITS:-hac ica cellsim colocation poisson bfs spmv nbody}
  # shellcheck disable=SC2086
  timeout -k 10 "$seconds" "$py" -m course_lib.bench probe $units > "$log/probe.log" 2>&1
  echo "probe exit $? in $(( $(date +%s) - started )) s (124: stopped at ${seconds} s)" | tee -a "$log/probe.log"
  tail -n 12 "$log/probe.log"
  cp benchmarks/results/*.json benchmarks/results/*.png "$log/" 2>/dev/null
else
  seconds=${TEST_SECONDS:-280}
  shopt -s nullglob
  files=(tests/*/test_api*.py tests/*/test_kernels.py tests/test_doctests.py tests/sim/test_record.py
         tests/sim/test_host_traffic.py tests/test_stub_kernels.py tests/sim/test_typing.py tests/test_device.py
         tests/grading/test_problem_sets.py)
  # -v writes each test's outcome as it ends; pytest-benchmark refuses xdist with a warning (an error here).
  COURSE_FAILURES_FILE="$log/failures.txt" timeout -k 10 "$seconds" "$py" -m pytest "${files[@]}" \
    -k "not fixture and not pasted" -n 14 -v -rfEs --timeout 240 -p xdist -p no:benchmark -p no:randomly \
    --durations=25 > "$log/pytest.log" 2>&1
  echo "pytest exit $? in $(( $(date +%s) - started )) s (124: stopped at its ${seconds} s limit)" \
    | tee -a "$log/pytest.log"
  grep -E '(FAILED|ERROR) ' "$log/pytest.log" | sed 's/^\[gw[0-9]*\] *\[ *[0-9]*%\] *//' | sort -u | head -n 60
  tail -n 5 "$log/pytest.log"
fi
tar czf "$log/results.tgz" -C "$log" --exclude results.tgz . 2>/dev/null
exit 0
