"""show_kernel / kernel_source: a kernel's def line and body, nothing around it."""

import pytest

import course_lib
from course_lib import kernel_source, show_kernel
from course_lib import show as show_module
from course_lib.nbody import kernels as nbody_kernels
from course_lib.registry import all_kernels


def test_registered_kernel_drops_decorator_and_docstring():
    text = kernel_source(nbody_kernels.nbody_naive_kernel)
    lines = text.splitlines()
    assert lines[0] == "def nbody_naive_kernel(bodies, softening_sq, acc):"
    assert "@" not in text and "course_kernel" not in text
    assert "One thread per destination body" not in text  # the docstring
    assert "for j in range(n):" in text
    assert lines[-1] == "    acc[i, 2] = az"


def test_factory_kernel_shows_inner_function_and_its_values_only():
    text = kernel_source(nbody_kernels.nbody_tiled_kernel(128))
    lines = text.splitlines()
    assert lines[0] == "# from its factory: tile = 128"
    assert lines[1] == "def nbody_tiled(bodies, softening_sq, acc):"
    assert "raise ValueError" not in text  # the factory's validation
    assert "register_kernel" not in text and "lru_cache" not in text
    # comments inside the body are kept
    assert "# the tile is staged" in text
    assert kernel_source(nbody_kernels.nbody_tiled_kernel(128), factory_values=False).startswith("def nbody_tiled(")


def test_every_registered_kernel_can_be_shown_by_name():
    for spec in all_kernels():
        text = kernel_source(spec.name)
        assert text.lstrip("\n").split("\n", 1)[0].startswith(("def ", "# from its factory")), spec.name
        body = [line for line in text.splitlines() if line.startswith("    ")]
        assert body, f"{spec.name}: no body shown"
        assert not any(line.startswith("@") for line in text.splitlines()), spec.name
    assert kernel_source(all_kernels()[0]) == kernel_source(all_kernels()[0].name)  # KernelSpec works too


def test_device_function_and_plain_function():
    assert kernel_source(nbody_kernels.interaction).startswith("def interaction(xi, yi, zi")

    def plain(x, out):
        """Docstring."""
        # a comment after the docstring is kept
        out[0] = x

    assert kernel_source(plain) == "def plain(x, out):\n    # a comment after the docstring is kept\n    out[0] = x\n"


def test_docstring_only_and_multiline_header():
    def only_doc(a):
        """Nothing else."""

    assert kernel_source(only_doc).splitlines()[0] == "def only_doc(a):"

    def long_header(
        first,
        second,
    ):
        return first + second

    assert kernel_source(long_header) == "def long_header(\n    first,\n    second,\n):\n    return first + second\n"


def test_kernel_defined_in_an_interactive_cell():
    """IPython keeps a cell's source where inspect finds it, as in a notebook."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        result = shell.run_cell(
            "from numba import cuda\n"
            "\n"
            "@cuda.jit\n"
            "def cell_kernel(x):\n"
            '    """Doubles x."""\n'
            "    i = cuda.grid(1)  # one thread per element\n"
            "    if i < x.size:\n"
            "        x[i] *= 2\n"
        )
        assert result.success, result.error_in_exec
        text = kernel_source(shell.user_ns["cell_kernel"])
    finally:
        InteractiveShell.clear_instance()
    assert text == ("def cell_kernel(x):\n"
                    "    i = cuda.grid(1)  # one thread per element\n"
                    "    if i < x.size:\n"
                    "        x[i] *= 2\n")


def test_clear_errors():
    with pytest.raises(TypeError, match="kernel factory.*nbody_tiled_kernel\\(128\\)"):
        kernel_source(nbody_kernels.nbody_tiled_kernel)
    with pytest.raises(TypeError, match="kernel must be"):
        kernel_source(3)
    with pytest.raises(ValueError, match="not a registered course kernel; did you mean"):
        kernel_source("nbody.nbody_naiv")
    with pytest.raises(ValueError, match="not a registered course kernel"):
        kernel_source("no_such_kernel_anywhere")


def test_plain_text_outside_jupyter(capsys):
    show_kernel(nbody_kernels.nbody_naive_kernel)
    assert capsys.readouterr().out == kernel_source(nbody_kernels.nbody_naive_kernel)


def test_highlighted_in_jupyter(monkeypatch):
    shown = []
    monkeypatch.setattr(show_module, "_in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", shown.append)
    show_kernel(nbody_kernels.nbody_naive_kernel)
    (item,) = shown
    assert str(item) == kernel_source(nbody_kernels.nbody_naive_kernel)
    html = item._repr_html_()
    assert "<span" in html and "style=" in html  # inline styles survive a static site
    assert "nbody_naive_kernel" in html


def test_exported_from_the_package():
    assert course_lib.show_kernel is show_kernel
    assert "show_kernel" in course_lib.__all__
