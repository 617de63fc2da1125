#!/usr/bin/env bash
# The checks only a GPU can make, in one run on a machine with an NVIDIA GPU:
#   1. the test suite (tests/, solutions/, lessons/) on the GPU backend;
#   2. the benchmarks of the units named, `python -m course_lib.bench <unit> --gpu`, one after the
#      other so that no two share the GPU (each writes its JSON and plot into benchmarks/results/).
# Every stage has a time limit, so the run ends on time with what it measured; logs and results go
# into LOG_DIR (pytest.log, bench_<unit>.log, the results' JSON and plots, and results.tgz of all).
#
# Usage: benchmarks/gpu_check.sh LOG_DIR [TEST_SECONDS] [UNIT[:SECONDS] ...]
#   TEST_SECONDS 0 skips the suite; units default to all eight, 120 s each. At full size on a 16-core
#   H200 machine (2026-11-26): poisson 24 s, colocation 41 s, nbody 62 s, cellsim 75 s, spmv 112 s,
#   bfs 129 s; hac needs more than 150 s (stopped there twice) and ica, with its CPU peers, about 300 s:
#   give those 260-300 s. Each bench prints a progress line per paired measurement on standard error.
set -u
log=${1:?usage: benchmarks/gpu_check.sh LOG_DIR [TEST_SECONDS] [UNIT[:SECONDS] ...]}
test_seconds=${2:-600}
shift 2 2>/dev/null || shift $#
units=("$@")
[ ${#units[@]} -gt 0 ] || units=(nbody primitives spmv bfs poisson hac ica cellsim colocation)
mkdir -p "$log"
cd "$(dirname "$0")/.."
export COURSE_BACKEND=gpu PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  "$py" -c "import sys, numpy, numba, numba.cuda, course_lib
from course_lib import device
print(sys.version); print('numpy', numpy.__version__, 'numba', numba.__version__)
import importlib.metadata as md
for p in ('numba-cuda', 'cupy-cuda13x', 'scipy', 'cuda-bindings'):
    try: print(p, md.version(p))
    except md.PackageNotFoundError: print(p, 'absent')
print(device.backend(), device.info())"
} > "$log/env.txt" 2>&1
cat "$log/env.txt"

if [ "$test_seconds" -gt 0 ]; then
  # xdist spreads the suite over the CPU cores; kernels of several workers share the GPU (fine for correctness,
  # which is all the suite checks: performance lives in the benchmarks below, run alone). -v writes each
  # test's outcome as it ends, so a run stopped at its limit still names what failed; pytest-benchmark,
  # where installed, refuses xdist with a warning (an error here), so it is left out.
  timeout -k 10 "$test_seconds" "$py" -m pytest tests solutions lessons -n 12 -v -rfEs --timeout 300 \
    -p xdist -p no:benchmark --durations=25 > "$log/pytest.log" 2>&1
  echo "pytest exit $? (124: stopped at its ${test_seconds} s limit)" | tee -a "$log/pytest.log"
  grep -E '(FAILED|ERROR) ' "$log/pytest.log" | sed 's/^\[gw[0-9]*\] *\[ *[0-9]*%\] *//' | sort -u | head -n 80
  tail -n 5 "$log/pytest.log"
fi

for spec in "${units[@]}"; do
  unit=${spec%%:*}; seconds=${spec#*:}; [ "$seconds" = "$spec" ] && seconds=120
  start=$(date +%s)
  timeout -k 10 "$seconds" "$py" -m course_lib.bench "$unit" --gpu > "$log/bench_$unit.log" 2>&1
  echo "bench $unit exit $? in $(( $(date +%s) - start )) s (124: stopped at ${seconds} s)" | tee -a "$log/benches.txt"
  tail -n 25 "$log/bench_$unit.log"
done
cp benchmarks/results/*.json benchmarks/results/*.png "$log/" 2>/dev/null
tar czf "$log/results.tgz" -C "$log" --exclude results.tgz . 2>/dev/null
