"""The examples in course_lib's docstrings run, and print what they say (doctest, every module)."""

import doctest
import importlib
import pkgutil

import pytest

import course_lib


def _modules():
    names = [course_lib.__name__]
    for info in pkgutil.walk_packages(course_lib.__path__, prefix="course_lib."):
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failures = []
    for test in finder.find(module, name, globs=vars(module).copy()):
        result = runner.run(test, out=failures.append, clear_globs=True)
        assert result.failed == 0, f"{test.name}:\n" + "".join(failures)
