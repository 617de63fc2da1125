"""course_lib._validate: every rule accepts what it should, rejects the rest, names the argument."""

import math

import numpy as np
import pytest

from course_lib import _validate as v


def _raises(call, name):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value).startswith(name + " "), str(info.value)
    return str(info.value)


# ---- integers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [0, 1, 7, np.int32(3), np.int64(-4), np.uint8(9), 2**40])
def test_check_int_accepts_python_and_numpy_ints(value):
    got = v.check_int(value, "n")
    assert got == int(value) and type(got) is int


@pytest.mark.parametrize("value", [None, 3.0, 2.5, np.float32(3), "3", True, False, np.bool_(True),
                                   float("nan"), 1 + 0j, np.array(3), [3]])
def test_check_int_rejects_non_integers(value):
    message = _raises(lambda: v.check_int(value, "count"), "count")
    assert "integer" in message and "got" in message


def test_check_int_bounds_are_inclusive_and_described():
    assert v.check_int(0, "k", minimum=0) == 0
    assert v.check_int(5, "k", minimum=0, maximum=5) == 5
    assert "non-negative" in _raises(lambda: v.check_int(-1, "k", minimum=0), "k")
    assert "between 2 and 4" in _raises(lambda: v.check_int(5, "k", minimum=2, maximum=4), "k")
    assert ">= 3" in _raises(lambda: v.check_int(2, "k", minimum=3), "k")
    assert "<= 3" in _raises(lambda: v.check_int(4, "k", maximum=3), "k")


def test_check_positive_int_message_matches_the_documented_form():
    with pytest.raises(ValueError, match=r"^n must be a positive integer, got None$"):
        v.check_positive_int(None, "n")
    assert "got 0" in _raises(lambda: v.check_positive_int(0, "n"), "n")
    assert "got -3" in _raises(lambda: v.check_positive_int(-3, "n"), "n")
    assert v.check_positive_int(np.int16(1), "n") == 1


# ---- floats --------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [0, 1, -2.5, np.float32(0.5), np.float64(1e300), np.int8(3)])
def test_check_float_accepts_real_numbers(value):
    got = v.check_float(value, "x")
    assert type(got) is float and got == float(value)


@pytest.mark.parametrize("value", [None, True, "1.0", 1j, float("nan"), float("inf"), -math.inf,
                                   np.float32("nan"), np.array([1.0]), [1.0]])
def test_check_float_rejects_non_finite_and_non_numbers(value):
    assert "finite" in _raises(lambda: v.check_float(value, "dt"), "dt")


def test_check_float_bounds_inclusive_and_exclusive():
    assert v.check_float(0, "s", minimum=0) == 0.0
    assert "positive" in _raises(lambda: v.check_float(0, "s", minimum=0, min_inclusive=False), "s")
    assert v.check_float(1, "p", minimum=0, maximum=1) == 1.0
    assert "< 1" in _raises(lambda: v.check_float(1, "p", maximum=1, max_inclusive=False), "p")
    assert "<= 1" in _raises(lambda: v.check_float(1.5, "p", maximum=1), "p")
    assert "> 0.5" in _raises(lambda: v.check_float(0.5, "p", minimum=0.5, min_inclusive=False), "p")
    assert ">= 0.5" in _raises(lambda: v.check_float(0.25, "p", minimum=0.5), "p")


# ---- arrays --------------------------------------------------------------------------------------

def test_check_array_returns_the_same_array_without_casting():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = v.check_array(a, "pos", shape=(None, 3), dtype=np.float32, finite=True, allow_empty=False)
    assert out is a
    assert v.check_array([1, 2], "idx", dtype="iu").dtype.kind in "iu"
    assert v.check_array(np.zeros(3, np.float64), "x", dtype=(np.float32, np.float64)).dtype == np.float64


def test_check_array_rejects_none_objects_ragged_and_strings():
    assert "got None" in _raises(lambda: v.check_array(None, "x"), "x")
    _raises(lambda: v.check_array(np.array([1, None], dtype=object), "x"), "x")
    _raises(lambda: v.check_array([[1, 2], [3]], "x"), "x")
    _raises(lambda: v.check_array(["a", "b"], "x"), "x")


def test_check_array_shape_and_ndim():
    assert "shape (any, 3)" in _raises(lambda: v.check_array(np.zeros((4, 2)), "pos", shape=(None, 3)), "pos")
    assert "(4,)" in _raises(lambda: v.check_array(np.zeros(4), "pos", shape=(None, 3)), "pos")
    assert "2 dimensions" in _raises(lambda: v.check_array(np.zeros(4), "img", ndim=2), "img")
    assert "(5,)" in _raises(lambda: v.check_array(np.zeros(4), "mass", shape=(5,)), "mass")
    assert v.check_array(np.zeros((0, 3)), "pos", shape=(None, 3)).shape == (0, 3)


@pytest.mark.parametrize("dtype, good, bad", [
    (np.float32, np.float32, np.float64),
    ("f", np.float64, np.int64),
    ("i", np.int8, np.uint8),
    ("u", np.uint32, np.int32),
    ("iu", np.uint16, np.float32),
    ("b", np.bool_, np.int8),
    ((np.int32, np.int64), np.int64, np.int16),
    ("float64", np.float64, np.float32),
])
def test_check_array_dtype_rules(dtype, good, bad):
    assert v.check_array(np.zeros(2, good), "a", dtype=dtype).dtype == np.dtype(good)
    message = _raises(lambda: v.check_array(np.zeros(2, bad), "a", dtype=dtype), "a")
    assert str(np.dtype(bad)) in message


def test_check_array_finite_and_empty():
    assert "index (1, 0)" in _raises(
        lambda: v.check_array(np.array([[0.0], [np.inf]]), "x", finite=True), "x")
    assert v.check_array(np.array([1, 2]), "x", finite=True).dtype.kind == "i"  # ints are always finite
    assert v.check_array(np.array([np.nan]), "x").size == 1  # finite=False lets NaN through
    assert "empty" in _raises(lambda: v.check_array(np.zeros((0, 3)), "x", allow_empty=False), "x")


# ---- blocks, choices, seeds, dtypes --------------------------------------------------------------

def test_check_block():
    assert v.check_block(1) == 1 and v.check_block(1024) == 1024
    assert v.check_block(np.int32(64), multiple_of=32) == 64
    for bad in (0, 1025, -32, None, 32.0, True):
        _raises(lambda: v.check_block(bad), "block")
    assert "multiple of 32" in _raises(lambda: v.check_block(33, multiple_of=32), "block")
    assert "between 1 and 256" in _raises(lambda: v.check_block(512, "tile", maximum=256), "tile")


def test_check_choice():
    assert v.check_choice("b", "method", ["a", "b"]) == "b"
    message = _raises(lambda: v.check_choice("c", "method", ("a", "b")), "method")
    assert "'a', 'b'" in message and "'c'" in message
    _raises(lambda: v.check_choice(None, "method", ("a",)), "method")
    _raises(lambda: v.check_choice(0, "method", ("a",)), "method")


def test_check_seed():
    assert v.check_seed(None) is None and v.check_seed(0) == 0 and v.check_seed(np.uint64(5)) == 5
    for bad in (-1, 1.5, "1", True):
        _raises(lambda: v.check_seed(bad), "seed")
    _raises(lambda: v.check_seed(-1, "random_state"), "random_state")


def test_check_dtype():
    assert v.check_dtype(np.float32) == np.float32 and v.check_dtype("float64") == np.float64
    for bad in (np.int32, None, "nonsense", 3.5):
        _raises(lambda: v.check_dtype(bad), "dtype")
    assert v.check_dtype(np.int64, "index_dtype", allowed=(np.int32, np.int64)) == np.int64


def test_long_values_are_shortened_in_messages():
    message = _raises(lambda: v.check_int("x" * 500, "n"), "n")
    assert len(message) < 150
    message = _raises(lambda: v.check_array(np.zeros((1000, 2)), "pos", shape=(None, 3)), "pos")
    assert len(message) < 150
