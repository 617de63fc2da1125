"""What each argument of Unit 2's public functions is (for tests/test_bad_inputs.py)."""

import numpy as np
import scipy.sparse as sp

from tests.bad_inputs import NO_ARGUMENTS, Call


def _matrix():
    return sp.random(9, 7, density=0.4, format="csr", dtype=np.float32, random_state=np.random.default_rng(1))


def _product():
    return {"A": _matrix(), "x": np.ones(7, np.float32)}


ARGUMENTS = {
    "as_csr": Call(lambda: {"A": _matrix(), "dtype": np.float64}, A="sparse+empty", dtype="precision?"),
    "banded_fem": Call(lambda: {"n": 20, "half_bandwidth": 3, "density": 0.5, "seed": 1, "dtype": np.float32},
                       n="count", half_bandwidth="count", density="fraction", seed="seed", dtype="precision"),
    "bell_garland_k": Call(lambda: {"A": _matrix(), "fraction": 0.5}, A="sparse+empty", fraction="fraction"),
    "bytes_per_spmv": Call(lambda: {"A": _matrix(), "method": "hyb", "K": 2, "dtype": np.float32, "index_bytes": 4},
                           A="sparse+empty", method="choice", K="nonneg_int?", dtype="precision?", index_bytes="count"),
    "choose_method": Call(lambda: {"A": _matrix()}, A="sparse+empty"),
    "default_block": NO_ARGUMENTS,
    "dense_block": Call(lambda: {"n": 5, "seed": 1, "dtype": np.float32}, n="count", seed="seed", dtype="precision"),
    "ell_split": Call(lambda: {"A": _matrix(), "dtype": np.float32}, A="sparse+empty", dtype="precision?"),
    "empty_rows_and_long_row": Call(lambda: {"n_rows": 10, "long_row": 6, "empty_fraction": 0.5, "seed": 1,
                                             "dtype": np.float32},
                                    n_rows="count", long_row="count?", empty_fraction="fraction", seed="seed",
                                    dtype="precision"),
    "gflops_roofline": Call(lambda: {"bytes_moved": 1200, "nnz": 100, "bandwidth": 1e12},
                            bytes_moved="positive", nnz="nonneg_int", bandwidth="positive"),
    "has_warp_shuffles": NO_ARGUMENTS,
    "hyb_split": Call(lambda: {"A": _matrix(), "K": 2, "dtype": np.float32}, A="sparse+empty", K="nonneg_int?",
                      dtype="precision?"),
    "is_device_array": Call(lambda: {"x": np.zeros(3)}),  # a predicate: every value is a valid question
    "k_sweep": Call(lambda: {"A": _matrix(), "Ks": [0, 1, 2], "speed_ratio": 3.0}, A="sparse+empty",
                    speed_ratio="positive"),
    "laplacian": Call(lambda: {"stencil": "5pt", "n": 4, "dtype": np.float32}, stencil="choice", n="count",
                      dtype="precision"),
    "make_matrix": Call(lambda: {"name": "laplacian_5pt", "size": "sim", "seed": 1, "dtype": np.float32},
                        name="choice", size="choice", seed="seed", dtype="precision"),
    "modelled_cost": Call(lambda: {"A": _matrix(), "method": "hyb", "K": 1, "speed_ratio": 3.0, "warp": 32},
                          A="sparse+empty", method="choice", K="nonneg_int?", speed_ratio="positive", warp="count"),
    "power_law_rows": Call(lambda: {"n_rows": 30, "mean_nnz": 4.0, "exponent": 2.5, "n_cols": 30, "seed": 1,
                                    "dtype": np.float32},
                           n_rows="count", mean_nnz="positive", exponent="positive", n_cols="count?", seed="seed",
                           dtype="precision"),
    "prepare": Call(lambda: {"A": _matrix(), "method": "csr_scalar", "block": 32, "dtype": np.float32},
                    A="sparse+empty", method="choice", block="block?", dtype="precision?"),
    "random_balanced": Call(lambda: {"n_rows": 10, "nnz_per_row": 3, "n_cols": 12, "seed": 1, "dtype": np.float32},
                            n_rows="count", nnz_per_row="count", n_cols="count?", seed="seed", dtype="precision"),
    "row_length_family": Call(lambda: {"n_rows": 20, "skew": 1.0, "mean_nnz": 4.0, "seed": 1, "dtype": np.float32},
                              n_rows="count", skew="nonneg", mean_nnz="positive", seed="seed", dtype="precision"),
    "row_lengths": Call(lambda: {"A": _matrix()}, A="sparse+empty"),
    "simt_efficiency": Call(lambda: {"A": _matrix(), "method": "hyb", "K": 1, "warp": 32},
                            A="sparse+empty", method="choice", K="nonneg_int?", warp="count"),
    "spmv": Call(lambda: {**_product(), "method": "cpu"}, A="sparse+empty", x="real_array", method="choice"),
    "spmv_cpu": Call(lambda: {"indptr": _matrix().indptr, "indices": _matrix().indices, "data": _matrix().data,
                              "x": np.ones(7, np.float32)},
                     indptr="index_array", indices="index_array", data="float_array", x="float_array"),
    "spmv_reference": Call(_product, A="sparse+empty", x="real_array"),
}
