"""Would check() and profile() give the same reports from a GPU notebook, through a simulator child process?

The child is started here exactly as on a GPU machine (``run_remote`` is what
``check``/``profile`` call when the backend is ``gpu``).
"""

import numpy as np
import pytest
from numba import cuda

from course_lib.nbody import kernels as nbody_kernels
from course_lib.nbody.reference import accelerations_reference
from course_lib.sim import check, profile
from course_lib.sim.remote import RemoteError, run_remote

pytest.importorskip("cloudpickle")


@cuda.jit
def histogram_plain(data, bins):
    i = cuda.grid(1)
    if i < data.size:
        bins[data[i]] += 1


def test_a_kernel_written_outside_course_lib_is_checked_in_the_child():
    data = np.arange(40) % 4
    bins = np.zeros(4, np.int64)
    report = run_remote("check", histogram_plain, 2, 32, (data, bins), {"seed": None})
    assert report.kinds() == {"race"}
    assert any("bins[data[i]] += 1" in line for line in report.problems[0].lines)  # source lines travel too
    np.testing.assert_array_equal(bins, np.bincount(data))  # no race shows in one sequential run


def test_a_factory_made_course_kernel_profiles_as_in_this_process():
    bodies = np.random.default_rng(0).random((13, 4), dtype=np.float32)
    kernel = nbody_kernels.nbody_tiled_kernel(8)
    acc = np.zeros((13, 3), np.float32)
    remote = run_remote("profile", kernel, 2, 8, (bodies, np.float32(0.01), acc), {})
    local = profile(kernel, 2, 8, bodies, np.float32(0.01), np.zeros((13, 3), np.float32))
    assert remote.total == local.total
    assert [r.line for r in remote.lines] == [r.line for r in local.lines]
    # The child's results come back into the arguments, as after a launch.
    want = accelerations_reference(bodies[:, :3].astype(np.float64), bodies[:, 3].astype(np.float64), 0.1)
    np.testing.assert_allclose(acc, want, rtol=1e-4, atol=1e-4)


def test_errors_in_the_child_come_back():
    with pytest.raises((ValueError, RemoteError), match="takes 2 arguments"):
        run_remote("check", histogram_plain, 1, 4, (np.zeros(3),), {})
    with pytest.raises(ValueError, match="mode"):
        run_remote("race", histogram_plain, 1, 4, (), {})
    assert check  # the same entry points dispatch here on a GPU machine


def test_check_and_profile_dispatch_to_the_child_on_the_gpu_backend(tmp_path):
    """The GPU-notebook path end to end: a kernel and a device function written in the script itself."""
    import os
    import subprocess
    import sys

    script = tmp_path / "gpu_notebook.py"
    script.write_text(
        "import course_lib\n"
        "import numpy as np\n"
        "from numba import cuda\n"
        "from course_lib.sim import check, profile\n"
        "\n"
        "@cuda.jit(device=True)\n"
        "def one():\n"
        "    return 1\n"
        "\n"
        "@cuda.jit\n"
        "def hist(data, bins):\n"
        "    i = cuda.grid(1)\n"
        "    if i < data.size:\n"
        "        bins[data[i]] += one()\n"
        "\n"
        "data = np.arange(40) % 4\n"
        "bins = np.zeros(4, np.int64)\n"
        "report = check(hist, 2, 32, data, bins)\n"
        "assert type(hist).__name__ == 'CUDADispatcher', type(hist)\n"
        "assert report.kinds() == {'race'} and 'bins[data[i]] += one()' in report.problems[0].lines[0]\n"
        "assert list(bins) == [10, 10, 10, 10]\n"
        "assert profile(hist, 2, 32, data, bins).line('bins[data[i]]').global_load_requests == 4\n"
        "print('ok', course_lib.backend())\n"
    )
    env = dict(os.environ, COURSE_BACKEND="gpu", NUMBA_ENABLE_CUDASIM="0")
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300,
                          cwd=os.getcwd())
    assert proc.stdout.strip() == "ok gpu", proc.stderr[-3000:]


def test_a_pickled_kernel_keeps_its_file_and_lines_whatever_the_pickler_does():
    """cloudpickle 3.1.3 and later write ``<dynamic-code>`` as the file of a function sent by value:
    the course sends code objects itself, so reports still quote the student's file and line."""
    import pickle

    import cloudpickle

    from course_lib.sim.remote import _dumps

    def nested_kernel(x):
        def inner(v):
            return v + 1
        return inner(x)

    original = histogram_plain.py_func
    rebuilt_kernel, rebuilt_nested = pickle.loads(_dumps((histogram_plain, nested_kernel), [original, nested_kernel]))
    for before, after in ((original, rebuilt_kernel.py_func), (nested_kernel, rebuilt_nested)):
        assert after.__code__.co_filename == before.__code__.co_filename == __file__, cloudpickle.__version__
        assert after.__code__.co_firstlineno == before.__code__.co_firstlineno
        assert list(after.__code__.co_lines()) == list(before.__code__.co_lines())
    inner = [c for c in rebuilt_nested.__code__.co_consts if hasattr(c, "co_filename")]
    assert inner and inner[0].co_filename == __file__  # nested code objects too
    assert rebuilt_nested(41) == 42
