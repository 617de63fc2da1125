"""Reports about kernels typed in a notebook cell name the cell as IPython's tracebacks do."""

from IPython.core.interactiveshell import InteractiveShell


def test_report_names_the_cell_not_the_temporary_file():
    shell = InteractiveShell.instance()
    try:
        shell.run_cell("import numpy as np\nfrom numba import cuda\nfrom course_lib.sim import check", store_history=True)
        result = shell.run_cell(
            "@cuda.jit\n"
            "def racy(out):\n"
            "    out[0] = cuda.grid(1)\n"
            "report = check(racy, 1, 4, np.zeros(1, np.int64))\n",
            store_history=True,
        )
        assert result.success, result.error_in_exec
        count = result.execution_count
        report = shell.user_ns["report"]
    finally:
        InteractiveShell.clear_instance()
    lines = report.problems[0].lines
    assert lines and all(line == f"Cell In[{count}], line 3: out[0] = cuda.grid(1)" for line in lines), lines
