"""What each argument of the primitives' public functions is (for tests/test_bad_inputs.py)."""

import numpy as np

from tests.bad_inputs import NO_ARGUMENTS, Call


def _x():
    return {"x": np.linspace(-1, 1, 9).astype(np.float32)}


def _keys():
    return {"keys": (np.arange(9) % 4).astype(np.int32), "bins": 4}


def _flags():
    return {**_x(), "flags": (np.arange(9) % 3 == 0).astype(np.int32)}


ARGUMENTS = {
    "compact": Call(lambda: {**_x(), "threshold": 0.1, "method": "blelloch", "block": 32},
                    x="float_array+empty", threshold="real", method="choice", block="block?"),
    "compact_cpu": Call(lambda: {**_x(), "keep": np.ones(9, np.int32)}, x="float_array+empty", keep="int_array+empty"),
    "compact_reference": Call(lambda: {**_x(), "keep": np.ones(9, np.int32)}, x="real_array+empty",
                              keep="int_array+empty"),
    "default_block": NO_ARGUMENTS,
    "histogram": Call(lambda: {**_keys(), "method": "private", "block": 32, "blocks": 2},
                      keys="int_array+empty", bins="count", method="choice", block="block?", blocks="count?"),
    "histogram_cpu": Call(_keys, keys="int_array+empty", bins="count"),
    "histogram_reference": Call(_keys, keys="int_array+empty", bins="count"),
    "random_values": Call(lambda: {"n": 5, "seed": 1}, n="count", seed="seed"),
    "reduce": Call(lambda: {**_x(), "method": "tree", "block": 32}, x="float_array+empty", method="choice",
                   block="block?"),
    "reduce_cpu": Call(_x, x="float_array+empty"),
    "reduce_reference": Call(_x, x="real_array+empty"),
    "scan": Call(lambda: {**_x(), "method": "hillis_steele", "inclusive": True, "block": 32}, x="float_array+empty",
                 method="choice", inclusive="flag", block="block?"),
    "scan_adds": Call(lambda: {"method": "blelloch", "tile": 8}, method="choice", tile="count"),
    "scan_barriers": Call(lambda: {"method": "blelloch", "tile": 8}, method="choice", tile="count"),
    "scan_cpu": Call(lambda: {**_x(), "inclusive": False}, x="float_array+empty", inclusive="flag"),
    "scan_reference": Call(lambda: {**_x(), "inclusive": False}, x="real_array+empty", inclusive="flag"),
    "scan_steps": Call(lambda: {"method": "hillis_steele", "tile": 8}, method="choice", tile="count"),
    "segment_heads": Call(lambda: {"n": 9, "mean_length": 3.0, "seed": 1}, n="count", mean_length="positive",
                          seed="seed"),
    "segmented_scan": Call(lambda: {**_x(), "heads": (np.arange(9) % 3 == 0).astype(np.int32), "method": "gpu",
                                    "block": 32},
                           x="float_array+empty", heads="int_array+empty", method="choice", block="block?"),
    "segmented_scan_cpu": Call(_flags, x="float_array+empty", flags="int_array+empty"),
    "segmented_scan_reference": Call(_flags, x="real_array+empty", flags="int_array+empty"),
    "skewed_keys": Call(lambda: {"n": 9, "bins": 4, "hot_share": 0.5, "seed": 1}, n="count", bins="count",
                        hot_share="fraction", seed="seed"),
    "sweep_wavefronts": Call(lambda: {"tile": 64, "padded": True}, tile="count", padded="flag"),
    "uniform_keys": Call(lambda: {"n": 9, "bins": 4, "seed": 1}, n="count", bins="count", seed="seed"),
    "wavefronts": Call(lambda: {"word_indices": np.arange(32)}, word_indices="index_array+empty"),
}
