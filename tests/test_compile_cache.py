"""Does every unit's compiled CPU path load from Numba's disk cache in a second process, compiling nothing?

Each unit runs twice in fresh processes sharing an empty cache folder: the first may compile
(and writes what it compiled to the cache), the second must only load: any course_lib
dispatcher holding machine code there either missed its cache or has none (cache=True missing).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.compile_probe import CPU_PATHS

ROOT = Path(__file__).resolve().parents[1]


def _probe(unit, cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-m", "tests.compile_probe", unit], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("unit", sorted(CPU_PATHS))
def test_a_second_process_compiles_nothing(unit, tmp_path):
    first = _probe(unit, tmp_path)  # compiles; functions it calls are compiled into its cached code
    second = _probe(unit, tmp_path)
    compiled = [d["name"] for d in second if d["misses"] or not d["cached"]]
    assert not compiled, f"{unit}: the second process compiled {compiled}"
    if first:  # a unit with compiled code: the second process loaded it
        assert sum(d["hits"] for d in second) > 0, f"{unit}: nothing was loaded from the cache: {second}"
