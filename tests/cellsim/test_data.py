"""Does the input format read back exactly, and does every bad input get a clear error?"""

import numpy as np
import pytest

from course_lib.cellsim import THESIS_TYPES, THESIS_TYPES_TEXT, CellTypes, InitialHistogram, lognormal_histogram
from course_lib.cellsim._inputs import as_histogram, as_types


def test_thesis_table_parses():
    assert THESIS_TYPES.n_types == 3
    np.testing.assert_array_equal(THESIS_TYPES.proportions, [0.53, 0.29, 0.18])
    assert THESIS_TYPES.quiescent.tolist() == [False, False, True]
    assert CellTypes.from_text(THESIS_TYPES_TEXT).means.tolist() == [48.33, 86.3, -1.0]


def test_text_round_trips_exactly():
    h0 = lognormal_histogram(500, seed=2)
    back = InitialHistogram.from_text(h0.to_text())
    np.testing.assert_array_equal(back.fluorescence, h0.fluorescence)
    np.testing.assert_array_equal(back.counts, h0.counts)
    again = CellTypes.from_text(THESIS_TYPES.to_text())
    np.testing.assert_array_equal(again.stds, THESIS_TYPES.stds)


def test_files_load(tmp_path):
    (tmp_path / "h0.txt").write_text("# phi psi\n100 3\n\n50.5 2  # comment\n")
    (tmp_path / "types.txt").write_text(THESIS_TYPES_TEXT)
    h0 = InitialHistogram.load(tmp_path / "h0.txt")
    assert h0.n_cells == 5 and h0.cell_fluorescence().tolist() == [100, 100, 100, 50.5, 50.5]
    assert CellTypes.load(tmp_path / "types.txt").n_types == 3


@pytest.mark.parametrize("text, message", [
    ("0.5 48 21\n0.4 86 26\n", "sum to 1"),
    ("0.5 48 21\n0.5 -86 26\n", "negative times"),
    ("0.5 48 -21\n0.5 86 26\n", "negative times"),
    ("0.5 48 21\n0.5 -1 26\n", "negative times"),
    ("1.2 48 21\n-0.2 86 26\n", r"\[0, 1\]"),
    ("1.0 0 0\n", "must be > 0"),
    ("", "types is empty"),
    ("# only a comment\n", "types is empty"),
    ("0.5 48\n0.5 86 26\n", "line 1: expected 3 numbers"),
    ("0.5 48 21\n0.5 abc 26\n", "line 2: not a number"),
    ("\n".join(["0.0588 10 1"] * 17), "at most 16"),
])
def test_bad_type_tables_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        CellTypes.from_text(text)


@pytest.mark.parametrize("text, message", [
    ("", "histogram is empty"),
    ("100 0\n200 0\n", "every count is 0"),
    ("100 2.5\n", "whole numbers"),
    ("100 -1\n", "counts must be >= 0"),
    ("-5 3\n", "must be > 0"),
    ("0 3\n", "must be > 0"),
    ("100 1\n100 2\n", "distinct"),
    ("100 1 3\n", "line 1: expected 2 numbers"),
    ("nan 3\n", "fluorescence must hold finite values"),
])
def test_bad_histograms_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        InitialHistogram.from_text(text)


def test_array_inputs_are_validated():
    with pytest.raises(ValueError, match="histogram is empty"):
        InitialHistogram.from_arrays([], [])
    with pytest.raises(ValueError, match="one entry per fluorescence"):
        InitialHistogram.from_arrays([1.0, 2.0], [3])
    with pytest.raises(ValueError, match="shape"):
        as_histogram(np.ones((3, 3)))
    with pytest.raises(ValueError, match="shape"):
        as_types(np.ones((3, 2)))
    with pytest.raises(ValueError, match="same length"):
        CellTypes.from_arrays([0.5, 0.5], [10.0], [1.0, 1.0])
    assert as_histogram(([10.0, 20.0], [1, 2])).n_cells == 3
    assert as_histogram("10 1\n20 2\n").n_cells == 3
    assert as_types([[1.0, 30.0, 5.0]]).n_types == 1


def test_params_for_the_kernels():
    params = THESIS_TYPES.params()
    assert params.shape == (3, 4)
    assert params[-1, 0] == 1.0 and params[0, 0] == 0.53
    assert params[2, 1] == -1.0 and params[2, 3] == 0.0
    assert 0 < params[0, 3] < 0.02  # P(Normal(48.33, 21.6) <= 0)


def test_with_proportions_validates():
    assert THESIS_TYPES.with_proportions([0.2, 0.3, 0.5]).proportions.tolist() == [0.2, 0.3, 0.5]
    with pytest.raises(ValueError, match="sum to 1"):
        THESIS_TYPES.with_proportions([0.2, 0.3, 0.4])
