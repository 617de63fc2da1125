"""The course units (re-exported as :data:`course_lib.UNITS`), in a module of their own so that the
modules ``course_lib/__init__.py`` imports can read them without importing the package back."""

__all__ = ["UNITS"]

#: The course units, in teaching order: name of the subpackage -> lesson notebook.
UNITS = {
    "sim": "lessons/00_seeing_the_gpu.ipynb",
    "nbody": "lessons/01_nbody.ipynb",
    "primitives": "lessons/09_primitives.ipynb",
    "spmv": "lessons/02_spmv.ipynb",
    "bfs": "lessons/03_bfs.ipynb",
    "poisson": "lessons/04_poisson.ipynb",
    "hac": "lessons/05_hac.ipynb",
    "ica": "lessons/06_ica.ipynb",
    "cellsim": "lessons/07_cellsim.ipynb",
    "colocation": "lessons/08_colocation.ipynb",
}
