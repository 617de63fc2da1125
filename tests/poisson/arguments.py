"""What each argument of Unit 4's public functions is (for tests/test_bad_inputs.py)."""

import numpy as np

from tests.bad_inputs import NO_ARGUMENTS, Call


def _images():
    from course_lib.poisson import cat_in_coffee

    source, target, mask = cat_in_coffee((12, 16))
    return {"source": source, "target": target, "mask": mask}


def _prepared():
    from course_lib.poisson import prepare

    return prepare(**_images())


def _iterate():
    prep = _prepared()
    return {"planes": prep.guess, "rhs": prep.rhs, "labels": prep.labels, "iterations": 3}


def _pair():
    image = _images()["target"]
    return {"actual": image, "expected": image.copy()}


ARGUMENTS = {
    "assert_images_match": Call(_pair, actual="uint8_image", expected="uint8_image"),
    "bandwidth_bound_seconds": Call(lambda: {"interior_pixels": 1000, "iterations": 10, "bandwidth": 1e12},
                                    interior_pixels="nonneg_int", iterations="nonneg_int", bandwidth="positive"),
    "blob_mask": Call(lambda: {"shape": (12, 16), "seed": 1, "fill": 0.3, "smoothness": 2.0},
                      shape="shape", seed="seed", fill="fraction", smoothness="positive?"),
    "bytes_per_iteration": Call(lambda: {"interior_pixels": 100}, interior_pixels="nonneg_int"),
    "cat_in_coffee": Call(lambda: {"size": (12, 16)}, size="shape"),
    "classify_mask": Call(lambda: {"mask": _images()["mask"]}, mask="bool_array"),
    "clone_history": Call(lambda: {**_images(), "checkpoints": (0, 2), "method": "cpu"},
                          source="uint8_image", target="uint8_image", mask="bool_mask?", method="choice"),
    "compare_images": Call(lambda: {**_pair(), "max_pixel_diff": 2, "max_fraction": 0.01},
                           actual="uint8_image", expected="uint8_image", max_pixel_diff="nonneg_int",
                           max_fraction="fraction"),
    "compose": Call(lambda: {"target": _images()["target"], "labels": _prepared().labels,
                             "planes": _prepared().guess},
                    target="uint8_image", labels="index_array", planes="real_array"),  # any float precision
    "default_block": NO_ARGUMENTS,
    "default_fused": NO_ARGUMENTS,
    "ellipse_mask": Call(lambda: {"shape": (12, 16)}, shape="shape"),
    "direct_clone": Call(_images, source="uint8_image", target="uint8_image", mask="bool_mask?"),
    "exact_solve": Call(_images, source="uint8_image", target="uint8_image", mask="bool_mask"),
    "jacobi_cpu": Call(_iterate, planes="float_array", rhs="float_array", labels="index_array",
                       iterations="nonneg_int"),
    "jacobi_reference": Call(lambda: {**_images(), "iterations": 3}, source="uint8_image", target="uint8_image",
                             mask="bool_mask", iterations="nonneg_int"),
    "jacobi_step_reference": Call(lambda: {"prev": _prepared().guess, "prepared": _prepared()}, prev="float_array"),
    "load_photo": Call(lambda: {"name": "astronaut", "size": (16, 16)}, name="choice", size="shape?"),
    "naive_paste": Call(_images, source="uint8_image", target="uint8_image", mask="bool_mask?"),
    "neighbour_counts": Call(lambda: {"shape": (4, 5)}, shape="shape"),
    "nonwhite_mask": Call(lambda: {"source": _images()["source"]}, source="uint8_image"),
    "object_on_white": Call(lambda: {"patch": np.zeros((3, 3, 3), np.uint8), "patch_mask": np.ones((3, 3), bool),
                                     "shape": (8, 8), "top": 2, "left": 2},
                            patch="uint8_image", patch_mask="bool_mask", shape="shape", top="nonneg_int",
                            left="nonneg_int"),
    "opencv_clone": Call(_images, source="uint8_image", target="uint8_image", mask="bool_mask"),
    "polygon_mask": Call(lambda: {"shape": (12, 16), "rows": np.array([2.0, 9.0, 9.0]),
                                  "cols": np.array([2.0, 2.0, 12.0])},
                         shape="shape", rows="real_array", cols="real_array"),
    "prepare": Call(_images, source="uint8_image", target="uint8_image", mask="bool_mask"),
    "rectangle_mask": Call(lambda: {"shape": (12, 16), "top": 2, "left": 3, "height": 5, "width": 6},
                           shape="shape", top="int", left="int", height="count", width="count"),
    "residual": Call(lambda: {"planes": _prepared().guess, "prepared": _prepared()}, planes="real_array"),
    "seamless_clone": Call(lambda: {**_images(), "iterations": 3, "method": "cpu"},
                           source="uint8_image", target="uint8_image", mask="bool_mask?", iterations="nonneg_int",
                           method="choice"),
    "seamless_clone_cpu": Call(lambda: {**_images(), "iterations": 3}, source="uint8_image", target="uint8_image",
                               mask="bool_mask", iterations="nonneg_int"),
    "synthetic_pair": Call(lambda: {"height": 12, "width": 16, "seed": 1, "fill": 0.35},
                           height="count", width="count", seed="seed", fill="fraction"),
    "validate_inputs": Call(_images, source="uint8_image", target="uint8_image", mask="bool_mask?"),
}
