"""Backend selection: simulator without a GPU, explicit override, clear errors."""

import os
import subprocess
import sys
import textwrap

import pytest

import course_lib
from course_lib import device


def run_python(code, **env):
    full_env = {k: v for k, v in os.environ.items() if k not in ("COURSE_BACKEND", "NUMBA_ENABLE_CUDASIM")}
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full_env, timeout=120)


def test_backend_is_known():
    assert course_lib.backend() in ("gpu", "sim")


def test_pick_follows_backend():
    expected = "small" if device.is_simulator() else "large"
    assert device.pick(sim="small", gpu="large") == expected


def test_info_describes_backend():
    text = str(device.info())
    if device.is_simulator():
        assert "simulator" in text
    else:
        assert "SMs" in text and device.info().fp32_peak_flops > 0


def test_sim_override_switches_numba_to_simulator():
    proc = run_python("""
        import course_lib
        from numba import cuda
        print(course_lib.backend(), "simulator" in cuda.jit.__module__)
    """, COURSE_BACKEND="sim")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["sim", "True"]


def test_unknown_backend_value_is_an_error():
    proc = run_python("import course_lib", COURSE_BACKEND="tpu")
    assert proc.returncode != 0
    assert "COURSE_BACKEND='tpu' is not understood" in proc.stderr


def test_numba_cuda_imported_first_in_the_other_mode_says_what_to_do():
    proc = run_python("""
        import os
        os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
        from numba import cuda
        os.environ["COURSE_BACKEND"] = "sim"
        import course_lib
    """)
    assert proc.returncode != 0
    assert "Restart the kernel" in proc.stderr and "import course_lib" in proc.stderr


def test_numba_cuda_imported_first_in_the_same_mode_is_fine():
    proc = run_python("""
        from numba import cuda
        import course_lib
        print(course_lib.backend())
    """, NUMBA_ENABLE_CUDASIM="1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "sim"


def test_force_rejects_unknown_backend():
    with pytest.raises(device.BackendError, match="unknown backend"):
        device.configure(force="cpu")
