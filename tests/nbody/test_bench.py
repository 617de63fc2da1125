"""The nbody bench's GPU peer: the CUDA sample's kernel source must compile (NVRTC, no GPU needed)."""

import pytest

from course_lib.nbody.bench import CUDA_SAMPLE_SOURCE


def _nvrtc_ptx(source, options):
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc")
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"sample.cu", 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), options)
    err_size, size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, log.decode(errors="replace")
    _, size = nvrtc.nvrtcGetPTXSize(prog)
    ptx = b" " * size
    nvrtc.nvrtcGetPTX(prog, ptx)
    return ptx.decode(errors="replace")


def test_cuda_sample_port_compiles_with_fast_math():
    ptx = _nvrtc_ptx(CUDA_SAMPLE_SOURCE, [b"-arch=compute_90", b"-use_fast_math"])
    assert ".entry integrateBodies" in ptx
    # -use_fast_math: rsqrtf is the one-instruction approximation, unrolled 128 times as the sample asks.
    assert ptx.count("rsqrt.approx.ftz.f32") >= 128
