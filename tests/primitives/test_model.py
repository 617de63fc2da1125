"""The counting models against brute-force counts of the same patterns."""

import numpy as np
import pytest

from course_lib.primitives import model


@pytest.mark.parametrize("tile", [2, 8, 64, 1024])
def test_adds_against_a_count_of_the_steps(tile):
    hillis = sum(tile - 2 ** d for d in range(int(np.log2(tile))))
    assert model.scan_adds("hillis_steele", tile) == hillis
    assert model.scan_adds("blelloch", tile) == 2 * (tile - 1)
    assert model.scan_steps("blelloch", tile) == 2 * model.scan_steps("hillis_steele", tile)


def test_wavefronts_of_strided_accesses():
    assert model.wavefronts(np.arange(32)) == 1
    assert model.wavefronts(np.arange(32) * 2) == 2
    assert model.wavefronts(np.arange(32) * 32) == 32
    assert model.wavefronts(np.arange(32) * 33) == 1  # padded rows: one word further each time
    assert model.wavefronts(np.zeros(32, np.int64)) == 1  # one word, broadcast


def test_padding_removes_the_sweeps_conflicts():
    for tile in (64, 256, 1024):
        plain, padded = model.sweep_wavefronts(tile, False), model.sweep_wavefronts(tile, True)
        assert plain["worst"] > 1 and padded["worst"] == 1 and padded["wavefronts"] == padded["accesses"]
    assert model.sweep_wavefronts(1024, False)["worst"] == 32


def test_tile_must_be_a_power_of_two():
    with pytest.raises(ValueError, match="tile"):
        model.scan_adds("blelloch", 12)
