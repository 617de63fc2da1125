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


class _NumpyWithout:
    """A stand-in NumPy module: a version, and ``row_stack`` only when asked."""

    def __init__(self, version, row_stack):
        self.__version__ = version
        if row_stack:
            self.row_stack = object()


def _numba_cuda_tree(tmp_path, source):
    arrayobj = tmp_path / "numba" / "cuda" / "np" / "arrayobj.py"
    arrayobj.parent.mkdir(parents=True)
    arrayobj.write_text(source)
    return tmp_path


def test_numpy_without_row_stack_is_named_for_a_numba_cuda_that_needs_it(tmp_path):
    root = _numba_cuda_tree(tmp_path, "overload(np.row_stack)(impl_np_vstack)\n")
    problem = device.numpy_incompatibility(_NumpyWithout("2.5.2", row_stack=False), root)
    assert "NumPy 2.5.2" in problem and "np.row_stack" in problem and "numpy<2.5" in problem
    assert "COURSE_BACKEND=sim" in problem


def test_numpy_with_row_stack_or_a_numba_cuda_without_it_is_fine(tmp_path):
    needs = _numba_cuda_tree(tmp_path / "a", "overload(np.row_stack)(impl_np_vstack)\n")
    fixed = _numba_cuda_tree(tmp_path / "b", "overload(np.vstack)(impl_np_vstack)\n")
    assert device.numpy_incompatibility(_NumpyWithout("2.4.6", row_stack=True), needs) is None
    assert device.numpy_incompatibility(_NumpyWithout("2.5.2", row_stack=False), fixed) is None
    assert device.numpy_incompatibility(_NumpyWithout("2.5.2", row_stack=False), tmp_path / "missing") is None


def test_the_installed_numpy_and_numba_cuda_agree():
    # The lock pins numpy<2.5 for this reason; a GPU run with the pair installed here would compile kernels.
    assert device.numpy_incompatibility() is None


def test_gpu_backend_refuses_a_numpy_the_real_target_cannot_use():
    # A NumPy without row_stack, as 2.5 is, under the GPU backend: a BackendError that names it, at import.
    proc = run_python("""
        import numpy
        if hasattr(numpy, "row_stack"):
            del numpy.row_stack
        try:
            import course_lib
        except Exception as error:
            print(type(error).__name__, error)
        """, COURSE_BACKEND="gpu")
    assert "BackendError" in proc.stdout and "numpy<2.5" in proc.stdout, proc.stdout + proc.stderr


def test_numba_cudas_own_performance_warning_is_not_an_error_in_the_suite():
    # On a GPU numba-cuda warns of grids under 128 blocks with its own class (not numba's); the suite's
    # small inputs make such grids, and warnings are errors otherwise (the GPU run of 2026-11-27 failed so).
    import warnings

    from numba.cuda.core.errors import NumbaPerformanceWarning

    warnings.warn(NumbaPerformanceWarning("Grid size 1 will likely result in GPU under-utilization due to "
                                          "low occupancy."))
    with pytest.raises(UserWarning):  # other warnings stay errors
        warnings.warn("still an error", UserWarning)
