"""Is every reference kernel of the course free of races, barrier and bounds problems?

Each kernel registered with an example launch (``example=`` in
:func:`course_lib.registry.course_kernel` / ``register_kernel``) is run once by the
checker; a unit adds its kernels here just by giving them examples.
"""

import pytest

from course_lib import device, registry
from course_lib.sim import check

pytestmark = pytest.mark.skipif(not device.is_simulator(), reason="runs the checker in this process")

SPECS = [spec for spec in registry.all_kernels() if spec.example is not None]


def test_unit_1_kernels_all_have_examples():
    names = {spec.name for spec in SPECS}
    assert {"nbody.nbody_naive_kernel", "nbody.nbody_tiled_kernel[tile=128]", "nbody.nbody_pxp_kernel[tile=16]"} <= names


@pytest.mark.parametrize("spec", SPECS, ids=[spec.name for spec in SPECS])
def test_reference_kernel_is_clean(spec):
    griddim, blockdim, args = spec.example_launch()
    report = check(spec.get_pyfunc(), griddim, blockdim, *args)
    assert report.ok, str(report)


def test_an_example_must_return_a_launch():
    spec = registry.KernelSpec("x.bad", "void()", lambda: None, example=lambda: (1, 2))
    with pytest.raises(ValueError, match="must return"):
        spec.example_launch()
    with pytest.raises(ValueError, match="no example"):
        registry.KernelSpec("x.none", "void()", lambda: None).example_launch()
