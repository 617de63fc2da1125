"""numba-cuda's own simulator tests end the same on course_lib's scheduler as on the stock simulator.

Runs only with ``--numba-suite`` (CI does, as a step of its own after the main test
command; about 2-4 minutes on 2 cores): see ``tests/numba_suite/runner.py``.
"""

import pytest

from tests.numba_suite.runner import run_both, summary


@pytest.mark.timeout(2400)
def test_numba_cuda_suite_ends_as_on_the_stock_simulator(request, tmp_path):
    if not request.config.getoption("--numba-suite"):
        pytest.skip("numba-cuda's suite runs with --numba-suite (a CI step of its own)")
    result = run_both(tmp_path)
    print(summary(result))
    course = result["course"]["counts"]
    assert course.get("passed", 0) >= 600, summary(result)  # the suite really ran
    assert not result["regressions"], summary(result)
