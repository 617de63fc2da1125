"""Each kernel against NumPy on awkward sizes (1 channel, not a multiple of 32, a warp + 1)."""

import numpy as np
import pytest
from numba import cuda

from course_lib.ica import kernels as k
from course_lib.ica._gpu import launch_shape_2d


def _data(n_channels, n_samples, batch, seed=0):
    rng = np.random.default_rng(seed)
    W = np.eye(n_channels) + 0.2 * rng.normal(size=(n_channels, n_channels))
    Xt = rng.normal(size=(n_samples, n_channels))
    perm = rng.permutation(n_samples).astype(np.int32)
    return W, Xt, perm, rng.normal(size=n_channels)


SIZES = [(1, 3, 1), (5, 13, 4), (33, 41, 3)]


@pytest.mark.parametrize("C, N, B", SIZES)
def test_gemv(C, N, B):
    W, Xt, perm, _ = _data(C, N, B)
    y = np.full(C, np.nan)
    k.gemv_kernel[-(-C // 32), 32](W, Xt[perm[0]].copy(), y)
    np.testing.assert_allclose(y, W @ Xt[perm[0]], rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("C, N, B", SIZES)
@pytest.mark.parametrize("start", [0, 1])
def test_permuted_gemv_and_activations(C, N, B, start):
    W, Xt, perm, bias = _data(C, N, B)
    idx = perm[start:start + B]
    U = np.full((B, C), np.nan)
    k.permuted_gemv_kernel[B, C](np.ascontiguousarray(W.T), Xt, perm, start, U)
    np.testing.assert_allclose(U, Xt[idx] @ W.T, rtol=1e-13, atol=1e-14)
    U2, Y = np.full((B, C), np.nan), np.full((B, C), np.nan)
    k.activations_kernel[B, C](np.ascontiguousarray(W.T), Xt, perm, start, bias, U2, Y)
    np.testing.assert_allclose(U2, Xt[idx] @ W.T + bias, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(Y, -np.tanh(U2 / 2), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("C, N, B", SIZES)
def test_weight_update(C, N, B):
    W, Xt, perm, bias = _data(C, N, B)
    U = Xt[:B] @ W.T
    Y = -np.tanh(U / 2)
    W_next, Wt = np.full_like(W, np.nan), np.full_like(W, np.nan)
    new_bias = bias.copy()
    k.weight_update_kernel[C, C](W, U, Y, 0.01, W_next, Wt, new_bias)
    expected = W + 0.01 * (Y.T @ U + B * np.eye(C)) @ W
    np.testing.assert_allclose(W_next, expected, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(Wt, W_next.T)
    np.testing.assert_allclose(new_bias, bias + 0.01 * Y.sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("C, N, B", SIZES)
@pytest.mark.parametrize("tpb", [32, 64])
def test_general_kernels(C, N, B, tpb):
    W, Xt, perm, bias = _data(C, N, B)
    U0 = Xt[:B] @ W.T
    bx, by = launch_shape_2d(tpb)
    U, Y = U0.copy(), np.full_like(U0, np.nan)
    k.logistic_kernel[(-(-C // bx), -(-B // by)), (bx, by)](U, bias, Y)
    np.testing.assert_allclose(U, U0 + bias, rtol=1e-14)
    np.testing.assert_allclose(Y, -np.tanh((U0 + bias) / 2), rtol=1e-13, atol=1e-15)
    grid = (-(-C // bx), -(-C // by))
    G = np.full((C, C), np.nan)
    k.gemm_tn_kernel[grid, (bx, by)](Y, U, G)
    np.testing.assert_allclose(G, Y.T @ U, rtol=1e-12, atol=1e-13)
    P = np.full((C, C), np.nan)
    k.gemm_kernel[grid, (bx, by)](G, W, P)
    np.testing.assert_allclose(P, G @ W, rtol=1e-12, atol=1e-12)
    W2, Wt = W.copy(), np.full_like(W, np.nan)
    k.weights_update_kernel[grid, (bx, by)](W2, P, 0.01, float(B), Wt)
    np.testing.assert_allclose(W2, W + 0.01 * (P + B * W), rtol=1e-13)
    np.testing.assert_array_equal(Wt, W2.T)
    b2 = bias.copy()
    k.bias_update_kernel[-(-C // tpb), tpb](Y, 0.01, b2)
    np.testing.assert_allclose(b2, bias + 0.01 * Y.sum(axis=0), rtol=1e-13)


def test_kernels_take_device_arrays():
    W, Xt, perm, bias = _data(6, 20, 5)
    d_U = cuda.device_array((5, 6))
    k.permuted_gemv_kernel[5, 6](cuda.to_device(np.ascontiguousarray(W.T)), cuda.to_device(Xt),
                                 cuda.to_device(perm), 10, d_U)
    np.testing.assert_allclose(d_U.copy_to_host(), Xt[perm[10:15]] @ W.T, rtol=1e-13)


def test_every_kernel_has_an_example_for_the_race_checker():
    from course_lib import registry

    specs = [s for s in registry.all_kernels() if s.name.startswith("ica.")]
    assert len(specs) == 11 and all(s.example is not None for s in specs)
    assert "ica.split_step_kernel" in {s.name for s in specs}
