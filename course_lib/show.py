"""Show a kernel the way a student should read it: its code, nothing around it.

:func:`show_kernel` prints the ``def`` line and the body of a CUDA kernel (or device
function) without its decorators, its registration, its docstring, or the factory
around it (a factory's argument checks stay in the factory). In Jupyter the code is
syntax-highlighted; elsewhere it is plain text. Values a factory-made kernel takes from
its factory (``tile = 128``) are listed in a comment above it, so the text says which
variant is shown.

It works for the course's registered kernels, kernels made by a factory, and kernels
defined in a notebook cell::

    from course_lib import show_kernel
    from course_lib import nbody
    show_kernel(nbody.kernels.nbody_tiled_kernel(128))
    show_kernel("nbody.nbody_naive_kernel")        # a registered name works too

:func:`kernel_source` returns the same text as a string (lessons assert on it).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, Callable

__all__ = ["KernelSource", "kernel_source", "show_kernel"]

# Values from a factory worth stating above the kernel; anything else (device
# functions, arrays) is code the student can look up by name.
_SIMPLE = (bool, int, float, str)


def _python_function(kernel: Any) -> Callable:
    """The plain Python function behind a kernel, a registered name or a KernelSpec."""
    from .registry import KernelSpec, all_kernels

    if isinstance(kernel, str):
        specs = {spec.name: spec for spec in all_kernels()}
        if kernel not in specs:
            close = [name for name in specs if kernel.split(".")[-1] in name]
            hint = f"; did you mean one of {close}?" if close else "; course_lib.registry.all_kernels() lists them"
            raise ValueError(f"kernel {kernel!r} is not a registered course kernel{hint}")
        kernel = specs[kernel]
    if isinstance(kernel, KernelSpec):
        return kernel.get_pyfunc()
    if hasattr(kernel, "cache_info") and callable(kernel):
        name = getattr(kernel, "__name__", "this function")
        raise TypeError(
            f"kernel: {name} is a kernel factory (it makes kernels); call it with its parameters "
            f"first, e.g. show_kernel({name}(128))"
        )
    # numba's Dispatcher and the simulator's FakeCUDAKernel both keep the function as py_func.
    for attribute in ("py_func", "fn"):
        function = getattr(kernel, attribute, None)
        if inspect.isfunction(function):
            return function
    if inspect.isfunction(kernel):
        return kernel
    raise TypeError(
        "kernel must be a @cuda.jit kernel or device function, a plain Python function, or the name "
        f"of a registered course kernel, got {type(kernel).__name__}"
    )


def _factory_values(function: Callable) -> list[str]:
    """``name = value`` for each simple value the function takes from an enclosing factory."""
    closure = function.__closure__ or ()
    lines = []
    for name, cell in zip(function.__code__.co_freevars, closure):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell: the name was never bound
            continue
        if isinstance(value, _SIMPLE):
            lines.append(f"{name} = {value!r}")
    return lines


def kernel_source(kernel: Any, *, factory_values: bool = True) -> str:
    """The readable source of a kernel: the ``def`` line and the body.

    Parameters
    ----------
    kernel : cuda kernel, device function, Python function, str or KernelSpec
        What to show. A string is the name of a registered course kernel (as listed by
        :func:`course_lib.registry.all_kernels`, e.g. ``"nbody.nbody_naive_kernel"``).
    factory_values : bool
        Start with a comment giving the simple values (ints, floats, strings) the kernel
        takes from the factory that made it, e.g. ``# from its factory: tile = 128``.

    Returns
    -------
    str
        Dedented source without decorators and without the docstring; comments are kept.

    Raises
    ------
    TypeError
        If ``kernel`` is neither a kernel nor a function (or is a factory: call it first).
    ValueError
        If a name is not a registered kernel, or the source cannot be found (a kernel
        typed at an interactive prompt outside Jupyter, for instance).
    """
    function = _python_function(kernel)
    try:
        lines, _ = inspect.getsourcelines(function)
    except (OSError, TypeError) as error:
        raise ValueError(f"kernel: the source of {function.__qualname__} is not available ({error})") from None
    source = textwrap.dedent("".join(lines))
    tree = ast.parse(source)
    definition = tree.body[0]
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ValueError(f"kernel: could not find the definition of {function.__qualname__} in its source")
    source_lines = source.splitlines()
    # The def line(s): from the `def` keyword (decorators dropped) to the colon.
    header_start = definition.lineno - 1
    body = definition.body
    first = body[0]
    has_docstring = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                     and isinstance(first.value.value, str))
    if has_docstring:
        # Keep comments written between the docstring and the first statement.
        body_start = first.end_lineno
        if len(body) == 1:
            body_lines = ["    pass  # (docstring only)"]
        else:
            body_lines = source_lines[body_start:definition.end_lineno]
    else:
        body_start = first.lineno - 1
        body_lines = source_lines[body_start:definition.end_lineno]
    header_lines = source_lines[header_start:first.lineno - 1]
    # A one-line header "def f(x): return x" has the body on the header line.
    if first.lineno - 1 == header_start:
        header_lines = []
        body_lines = source_lines[header_start:definition.end_lineno]
    # Blank lines left at the start of the body by a removed docstring.
    while body_lines and not body_lines[0].strip():
        body_lines.pop(0)
    text = "\n".join(header_lines + body_lines).rstrip() + "\n"
    if factory_values:
        values = _factory_values(function)
        if values:
            text = f"# from its factory: {', '.join(values)}\n" + text
    return text


class KernelSource:
    """Source text that Jupyter shows highlighted and a terminal shows as plain text.

    Parameters
    ----------
    text : str
        Python source.
    """

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        # Inline styles (noclasses) so the highlighting survives in a static site and in
        # a notebook exported to HTML without a stylesheet.
        formatter = HtmlFormatter(noclasses=True, nobackground=True, style="default")
        return highlight(self.text, PythonLexer(), formatter)


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (where rich output is shown)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the course's Jupyter
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def show_kernel(kernel: Any, *, factory_values: bool = True) -> None:
    """Show a kernel's code: the ``def`` line and the body, highlighted in Jupyter.

    Parameters
    ----------
    kernel, factory_values
        See :func:`kernel_source`.

    Examples
    --------
    >>> import course_lib
    >>> from course_lib.nbody import kernels
    >>> course_lib.show_kernel(kernels.nbody_tiled_kernel(128))
    # from its factory: tile = 128
    def nbody_tiled(bodies, softening_sq, acc):
        tile_bodies = cuda.shared.array((tile, 4), float32)
    ...
    """
    text = kernel_source(kernel, factory_values=factory_values)
    if _in_notebook():
        from IPython.display import display

        display(KernelSource(text))
    else:
        print(text, end="")
