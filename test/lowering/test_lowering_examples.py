"""The built-in examples (examples/mlp.mlir, examples/cnn.mlir) lowered, compiled by IREE for the CPU and
run: fp32 against numpy float64 formulas of the same models, and under the low-precision modes
within twice the interpreter's own error against float64."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from lowering_util import ENVELOPE, FLOOR, FP32_TOL, Array, iree_run, rel_err, with_mode

from ascend_mp.interpreter import Program
from ascend_mp.ir import make_context, read_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODES = ["force_fp16", "allow_mix_precision", "allow_mix_precision_bf16"]


def _softmax(z: Array) -> Array:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mlp64(x: Array, w1: Array, b1: Array, w2: Array, b2: Array) -> Array:
    f = [a.astype(np.float64) for a in (x, w1, b1, w2, b2)]
    return _softmax(np.maximum(f[0] @ f[1] + f[2], 0) @ f[3] + f[4])


def cnn64(x: Array, k: Array, kb: Array, w: Array, b: Array) -> Array:
    x, k, kb, w, b = (a.astype(np.float64) for a in (x, k, kb, w, b))
    n, _, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, k.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i : i + h, j : j + wd], k[:, :, i, j])
    y = np.maximum(y + kb.reshape(1, -1, 1, 1), 0)
    pooled = y.reshape(n, k.shape[0], h // 2, 2, wd // 2, 2).max(axis=(3, 5))
    return _softmax(pooled.reshape(n, -1) @ w + b)


CASES = {
    "mlp": (mlp64, [(64, 64), (64, 128), (128,), (128, 10), (10,)]),
    "cnn": (cnn64, [(16, 1, 8, 8), (8, 1, 3, 3), (8,), (128, 10), (10,)]),
}


def _inputs(name: str, seed: int = 0) -> list[Array]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in CASES[name][1]]


@pytest.mark.parametrize("name", list(CASES))
def test_fp32_matches_float64(name: str) -> None:
    module = read_module(str(EXAMPLES / f"{name}.mlir"), make_context())
    inputs = _inputs(name)
    (y,) = iree_run(module, name, *inputs)
    assert y.dtype == np.float32
    assert rel_err(y, CASES[name][0](*inputs)) <= FP32_TOL


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(CASES))
def test_low_precision_within_interpreter_envelope(name: str, mode: str) -> None:
    module = read_module(str(EXAMPLES / f"{name}.mlir"), make_context())
    inputs = _inputs(name, seed=1)
    ref = CASES[name][0](*inputs)
    decided = with_mode(module, mode)
    (ours,) = iree_run(decided, name, *inputs)
    (theirs,) = Program.from_module(decided).run(name, *inputs)
    e_iree, e_interp = rel_err(ours, ref), rel_err(theirs, ref)
    assert e_iree <= ENVELOPE * e_interp + FLOOR, f"IREE {e_iree:.3g} vs interpreter {e_interp:.3g}"
    if mode == "force_fp16":  # the mode really lowered fp16 arithmetic: the error is fp16-sized
        assert e_iree > 1e-4
