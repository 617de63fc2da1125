#!/usr/bin/env bash
# Downloads into .whl/ the wheels benchmarks/gpu_check.sh installs on a GPU machine that cannot reach a package
# registry (run it here, on a machine that can; gpu_check.sh installs .whl/*.whl into /tmp/site when the folder
# is there). The GPU image (Python 3.12, CUDA, numba, scipy, matplotlib, requests, psutil, scikit-learn...) has
# numpy 2.5, which numba-cuda 0.30.4 cannot compile with, and lacks what the course imports beyond it:
#   numpy, numba-cuda, cuda-core    the versions the course is pinned to;
#   mne, pooch, decorator, python-picard                            (ica's data and peers);
#   nbformat, nbclient, jupyter-client/-core, ipykernel, ipython    (problem-set notebooks run by the tests);
#   ipywidgets and its front-end packages                           (widgets and controls);
# and what those need that the image lacks. Versions come from requirements/lock.txt (markers read for
# CPython 3.12 on Linux); wheels for manylinux x86_64, cp312. About 44 MB (a device call carries 64 MiB at most).
#
# Usage: benchmarks/gpu_wheels.sh [DEST]   (DEST defaults to .whl; it is emptied first)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-.whl}
py=${PYTHON:-python3}
names=(numpy numba-cuda cuda-core
       mne pooch decorator python-picard
       nbformat fastjsonschema jsonschema jsonschema-specifications referencing rpds-py traitlets jupyter-core
       platformdirs nbclient jupyter-client ipykernel ipython pyzmq tornado comm debugpy nest-asyncio2
       matplotlib-inline jedi parso prompt-toolkit wcwidth stack-data executing asttokens pure-eval pexpect
       ptyprocess ipython-pygments-lexers
       ipywidgets widgetsnbextension jupyterlab-widgets)
mapfile -t pins < <("$py" - requirements/lock.txt "${names[@]}" <<'EOF'
import sys
from packaging.markers import Marker
from packaging.requirements import Requirement

env = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux", "os_name": "posix",
       "platform_system": "Linux", "platform_machine": "x86_64", "implementation_name": "cpython",
       "platform_python_implementation": "CPython", "extra": ""}
pins = {}
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line or line.startswith("-"):
        continue
    req = Requirement(line)
    if req.marker is None or req.marker.evaluate(env):
        pins[req.name.lower()] = str(req.specifier)
missing = [n for n in sys.argv[2:] if n not in pins]
if missing:
    sys.exit(f"not in requirements/lock.txt: {missing}")
for name in sys.argv[2:]:
    print(name + pins[name])
EOF
)
rm -rf "$dest"
mkdir -p "$dest"
"$py" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_26_x86_64 \
  --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux1_x86_64 -d "$dest" "${pins[@]}"
ls "$dest" | wc -l | xargs echo "wheels:"
du -sh "$dest"
