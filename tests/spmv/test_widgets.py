"""The figures and the explorer widget build without errors and show what they claim."""


import matplotlib

matplotlib.use("Agg")

from course_lib import device, spmv
from course_lib.spmv import widgets

def test_explorer_reacts_to_its_controls():
    box = widgets.explorer(n_rows=256)
    skew, _mean = box.children[0].children
    auto_k, k_slider = box.children[1].children
    assert k_slider.disabled
    skew.value = 2.5
    auto_k.value = False
    assert not k_slider.disabled
    k_slider.value = 3
    measured = widgets.measure_methods(spmv.laplacian("3pt", 8))
    if device.is_simulator():
        assert measured == {}  # no timings in the simulator
    else:
        assert {"csr_scalar", "coo", "hyb"} <= set(measured) and all(t > 0 for t in measured.values())
