"""The CNN and transformer op kernels against onnxruntime (CPU, fp32) on the ONNX ops they stand for.

Skipped when onnx/onnxruntime are not installed (they come with the ONNX frontend's test extra).
Each case builds a one-node ONNX graph, runs it in onnxruntime, and runs the dialect op's kernel
on the same input with the attributes the frontend maps to; they must agree within 1e-6 relative.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

from ascend_mp.interpreter.kernels import OpSpec, apply  # noqa: E402

F32 = np.dtype(np.float32)
ONNX_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.bool_): TensorProto.BOOL,
}


def onnxruntime_run(op: str, inputs: list[np.ndarray], **attrs: Any) -> np.ndarray:
    names = [f"in{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["out"], **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, ONNX_TYPES[x.dtype], list(x.shape)) for n, x in zip(names, inputs)],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],  # every case has a float result
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, dict(zip(names, inputs)))[0]


def kernel_run(op: str, inputs: list[np.ndarray], out: np.dtype = F32, **attrs: Any) -> np.ndarray:
    spec = OpSpec(op, tuple(x.dtype for x in inputs), (np.dtype(out),), tuple(x.shape for x in inputs), (), attrs)
    return apply(spec, *inputs)


def assert_matches(ours: np.ndarray, ref: np.ndarray) -> None:
    assert ours.shape == ref.shape
    scale = max(float(np.abs(ref).max()), 1e-30) if ref.size else 1.0
    assert float(np.abs(ours.astype(np.float64) - ref).max(initial=0.0)) <= 1e-6 * scale


POOL_CASES = [
    # kernel, strides, ONNX pads [t, l, b, r], ceil_mode, H, W
    ((3, 3), (2, 2), (1, 1, 1, 1), 0, 8, 8),  # resnet's stem pool
    ((2, 2), (2, 2), (0, 0, 0, 0), 1, 7, 5),
    ((3, 2), (2, 1), (2, 0, 1, 1), 1, 6, 4),
    ((3, 3), (3, 3), (1, 2, 1, 0), 1, 5, 7),
    ((1, 1), (2, 2), (0, 0, 0, 0), 0, 5, 5),
]


@pytest.mark.parametrize(("k", "s", "pads", "ceil", "h", "w"), POOL_CASES)
def test_pooling_matches_onnxruntime(
    k: tuple[int, int], s: tuple[int, int], pads: tuple[int, ...], ceil: int, h: int, w: int
) -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, h, w)).astype(F32)
    attrs = {
        "ksize": (1, 1, *k),
        "strides": (1, 1, *s),
        "pads": (pads[0], pads[2], pads[1], pads[3]),
        "ceil_mode": bool(ceil),
    }
    onnx_attrs = {"kernel_shape": list(k), "strides": list(s), "pads": list(pads), "ceil_mode": ceil}
    assert_matches(kernel_run("MaxPoolV3", [x], **attrs), onnxruntime_run("MaxPool", [x], **onnx_attrs))
    for include in (0, 1):
        ours = kernel_run("AvgPoolV2", [x], **attrs, exclusive=not include)
        assert_matches(ours, onnxruntime_run("AveragePool", [x], **onnx_attrs, count_include_pad=include))


def test_global_average_pool_is_reduce_mean() -> None:
    x = np.random.default_rng(1).standard_normal((2, 3, 5, 4)).astype(F32)
    assert_matches(
        kernel_run("ReduceMean", [x], axes=(2, 3), keep_dims=True), onnxruntime_run("GlobalAveragePool", [x])
    )


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3)])
def test_bn_infer_matches_batch_normalization(shape: tuple[int, ...]) -> None:
    r = np.random.default_rng(2)
    x = r.standard_normal(shape).astype(F32)
    scale, bias, mean = (r.standard_normal(3).astype(F32) for _ in range(3))
    var = (r.random(3) + 0.5).astype(F32)
    ref = onnxruntime_run("BatchNormalization", [x, scale, bias, mean, var], epsilon=1e-5)
    assert_matches(kernel_run("BNInfer", [x, scale, bias, mean, var], epsilon=float(np.float32(1e-5))), ref)


def test_clip_relu6_hard_sigmoid_erf() -> None:
    x = (np.random.default_rng(3).standard_normal((3, 7)) * 5).astype(F32)
    lo, hi = np.array(-1.5, F32), np.array(2.0, F32)
    assert_matches(kernel_run("ClipByValue", [x, lo, hi]), onnxruntime_run("Clip", [x, lo, hi]))
    assert_matches(kernel_run("Relu6", [x]), onnxruntime_run("Clip", [x, np.array(0, F32), np.array(6, F32)]))
    assert_matches(
        kernel_run("HardSigmoid", [x], alpha=0.2, beta=0.5), onnxruntime_run("HardSigmoid", [x], alpha=0.2, beta=0.5)
    )
    hs = kernel_run("HardSigmoid", [x], alpha=float(np.float32(1 / 6)), beta=0.5)
    assert_matches(x * hs, onnxruntime_run("HardSwish", [x]))
    assert_matches(kernel_run("Erf", [x / 4]), onnxruntime_run("Erf", [x / 4]))


@pytest.mark.parametrize(("a", "b"), [((2, 5, 8), (8, 3)), ((2, 1, 4, 6), (3, 6, 2)), ((4, 6), (2, 6, 5))])
def test_batch_matmul_v2_matches_matmul(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    r = np.random.default_rng(4)
    x1, x2 = r.standard_normal(a).astype(F32), r.standard_normal(b).astype(F32)
    assert_matches(kernel_run("BatchMatMulV2", [x1, x2]), onnxruntime_run("MatMul", [x1, x2]))


def test_gather_select_slice_expand_tile() -> None:
    r = np.random.default_rng(5)
    table = r.standard_normal((10, 4)).astype(F32)
    ids = np.array([[0, 9, -1], [3, -10, 2]], np.int64)
    assert_matches(kernel_run("GatherV2D", [table, ids], axis=0), onnxruntime_run("Gather", [table, ids], axis=0))
    cond = r.random((1, 4)) > 0.5
    fill = np.array(-1e4, F32)
    assert_matches(kernel_run("SelectV2", [cond, table, fill]), onnxruntime_run("Where", [cond, table, fill]))
    for starts, ends, steps in itertools.product([(1, 0), (-3, 3)], [(9, 4), (100, -1)], [(1, 1), (2, 2), (-1, 1)]):
        ref = onnxruntime_run("Slice", [table, np.array(starts), np.array(ends), np.array([0, 1]), np.array(steps)])
        assert_matches(kernel_run("StridedSliceD", [table], begin=starts, end=ends, strides=steps), ref)
    col = table[:, :1]
    assert_matches(
        kernel_run("BroadcastToD", [col], shape=(2, 10, 4)), onnxruntime_run("Expand", [col, np.array([2, 10, 4])])
    )
    assert_matches(kernel_run("TileD", [table], multiples=(2, 3)), onnxruntime_run("Tile", [table, np.array([2, 3])]))
