#!/usr/bin/env bash
# The checks only a GPU can make, in one run of about 12 minutes on a machine with an NVIDIA GPU:
#   1. the probe, `python -m course_lib.bench probe` (every unit's headline kernels, library peers,
#      host cost per launch, wall-time splits of the host-driven units; <= 8 minutes on an H100/H200),
#      writing benchmarks/results/probe-<unit>_<device>_<date>.json;
#   2. the test suite (tests/, solutions/, lessons/) on the GPU backend (COURSE_BACKEND=gpu), in the
#      time left of TOTAL_SECONDS;
#   3. optionally, full unit benchmarks, `python -m course_lib.bench <unit> --gpu`, one after the other.
# Every stage has a time limit, so the run ends on time with what it measured; logs and results go
# into LOG_DIR (env.txt, probe.log, pytest.log, failures.txt (each failure's traceback as it happens), bench_<unit>.log, the results' JSON, and results.tgz of all).
#
# Usage: benchmarks/gpu_check.sh LOG_DIR [TOTAL_SECONDS] [UNIT[:SECONDS] ...]
#   TOTAL_SECONDS (default 690) bounds the probe and the suite together; the probe gets at most 510 s
#   (PROBE_SECONDS), the suite the rest (at least 60 s). PROBE_UNITS narrows the probe (e.g. "bfs hac").
#   Full unit benchmarks run only when named, after the suite: at full size on a 16-core H200 machine
#   (2026-11-26) poisson 24 s, colocation 41 s, nbody 62 s, cellsim 75 s, spmv 112 s, bfs 129 s; hac more
#   than 150 s and ica about 300 s.
set -u
log=${1:?usage: benchmarks/gpu_check.sh LOG_DIR [TOTAL_SECONDS] [UNIT[:SECONDS] ...]}
total_seconds=${2:-690}
shift 2 2>/dev/null || shift $#
units=("$@")
probe_seconds=${PROBE_SECONDS:-510}
mkdir -p "$log"
cd "$(dirname "$0")/.."
export COURSE_BACKEND=gpu PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
started=$(date +%s)

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

# 1. The probe (its plan first: sizes, variants, expected seconds).
# shellcheck disable=SC2086
timeout -k 10 "$probe_seconds" "$py" -m course_lib.bench probe ${PROBE_UNITS:-} > "$log/probe.log" 2>&1
echo "probe exit $? in $(( $(date +%s) - started )) s (124: stopped at ${probe_seconds} s)" | tee -a "$log/probe.log"
tail -n 12 "$log/probe.log"

# 2. The suite on the GPU backend, in the time left. xdist spreads it over the CPU cores; kernels of several
# workers share the GPU (fine for correctness, which is all the suite checks). -v writes each test's outcome
# as it ends, so a run stopped at its limit still names what failed; pytest-benchmark, where installed,
# refuses xdist with a warning (an error here), so it is left out.
test_seconds=$(( total_seconds - ($(date +%s) - started) ))
[ "$test_seconds" -ge 60 ] || test_seconds=60
COURSE_FAILURES_FILE="$log/failures.txt" timeout -k 10 "$test_seconds" "$py" -m pytest tests solutions lessons -n 12 -v -rfEs --timeout 300 \
  -p xdist -p no:benchmark --durations=25 > "$log/pytest.log" 2>&1
echo "pytest exit $? (124: stopped at its ${test_seconds} s limit)" | tee -a "$log/pytest.log"
grep -E '(FAILED|ERROR) ' "$log/pytest.log" | sed 's/^\[gw[0-9]*\] *\[ *[0-9]*%\] *//' | sort -u | head -n 80
tail -n 5 "$log/pytest.log"

# 3. Full unit benchmarks, only those named.
for spec in ${units[@]+"${units[@]}"}; do
  unit=${spec%%:*}; seconds=${spec#*:}; [ "$seconds" = "$spec" ] && seconds=120
  start=$(date +%s)
  timeout -k 10 "$seconds" "$py" -m course_lib.bench "$unit" --gpu > "$log/bench_$unit.log" 2>&1
  echo "bench $unit exit $? in $(( $(date +%s) - start )) s (124: stopped at ${seconds} s)" | tee -a "$log/benches.txt"
  tail -n 25 "$log/bench_$unit.log"
done
cp benchmarks/results/*.json benchmarks/results/*.png "$log/" 2>/dev/null
tar czf "$log/results.tgz" -C "$log" --exclude results.tgz . 2>/dev/null
