"""Pad, Resize and the extra reductions: one-node ONNX graphs imported and interpreted, compared with
onnxruntime (CPU, fp32, 1e-5 relative) and with numpy float64; unsupported forms are one-line errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_util import check, graph_model, rel_err, run_ours

from ascend_mp.errors import AscendError
from ascend_mp.frontend import import_onnx

pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(7)
Array = np.ndarray[Any, Any]


def f32(*shape: int) -> Array:
    return RNG.standard_normal(shape).astype(np.float32)


def one_node(
    op: str,
    inputs: dict[str, Array],
    inits: dict[str, Array] | None = None,
    opset: int = 17,
    input_names: list[str] | None = None,
    **attrs: Any,
):
    names = input_names if input_names is not None else list(inputs) + list(inits or {})
    node = helper.make_node(op, names, ["y"], name=f"{op.lower()}_node", **attrs)
    return graph_model([node], inputs, ["y"], inits, opset)


def ops_of(model: Any) -> list[str]:
    module = import_onnx(model)
    return [op.name for op in module.walk() if op.name.startswith("ascend.") and op.name != "ascend.Const"]


# --------------------------------------------------------------------------------------
# Pad
# --------------------------------------------------------------------------------------

PADS = [0, 0, 1, 2, 0, 0, 2, 1]  # N, C, H, W befores then afters (H: 1/2, W: 2/1)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_modes(mode: str) -> None:
    x = f32(1, 2, 4, 5)
    inits = {"pads": np.array(PADS, np.int64)}
    if mode == "constant":
        inits["value"] = np.array(0.75, np.float32)
    model = one_node("Pad", {"x": x}, inits, mode=mode)
    assert ops_of(model) == ["ascend.PadV3D"]
    check(model, {"x": x})
    pairs = ((0, 0), (0, 0), (1, 2), (2, 1))
    want = np.pad(x.astype(np.float64), pairs, mode=mode, **({"constant_values": 0.75} if mode == "constant" else {}))
    np.testing.assert_array_equal(run_ours(model, {"x": x})[0], want.astype(np.float32))


def test_pad_with_axes_opset18() -> None:
    x = f32(2, 3, 4)
    model = one_node(
        "Pad",
        {"x": x},
        {
            "pads": np.array([1, 2, 0, 3], np.int64),
            "value": np.array(0.0, np.float32),
            "axes": np.array([-1, 1], np.int64),
        },
        opset=18,
    )
    check(model, {"x": x})


def test_pad_opset2_attributes() -> None:
    x = f32(3, 4)
    check(one_node("Pad", {"x": x}, opset=10, pads=[1, 0, 0, 2], value=-2.0), {"x": x})


@pytest.mark.parametrize(
    ("attrs", "pads", "message"),
    [
        ({"mode": "wrap"}, [0, 1, 0, 1], "mode 'wrap' is not supported"),
        ({}, [0, -1, 0, 0], "negative pads (cropping) are not supported"),
    ],
)
def test_pad_unsupported_is_one_line(attrs: dict[str, Any], pads: list[int], message: str) -> None:
    model = one_node("Pad", {"x": f32(3, 4)}, {"pads": np.array(pads, np.int64)}, opset=19, **attrs)
    with pytest.raises(AscendError) as err:
        import_onnx(model)
    assert message in str(err.value) and "pad_node" in str(err.value) and "\n" not in str(err.value)


# --------------------------------------------------------------------------------------
# Resize
# --------------------------------------------------------------------------------------

RESIZE = [
    # (mode, coordinate_transformation_mode, nearest_mode, in HxW, out HxW)
    ("nearest", "asymmetric", "floor", (3, 4), (6, 8)),  # torch nearest
    ("nearest", "half_pixel", "round_prefer_floor", (4, 6), (6, 9)),  # ONNX defaults
    ("nearest", "half_pixel", "round_prefer_ceil", (4, 4), (2, 6)),
    ("nearest", "align_corners", "round_prefer_ceil", (3, 3), (5, 4)),
    ("nearest", "asymmetric", "round_prefer_floor", (6, 4), (3, 2)),
    ("linear", "half_pixel", "", (3, 4), (6, 8)),
    ("linear", "pytorch_half_pixel", "", (4, 3), (1, 7)),  # a size-1 output: coordinate 0
    ("linear", "align_corners", "", (3, 5), (7, 9)),  # torch bilinear, align_corners=True
    ("linear", "asymmetric", "", (5, 5), (3, 7)),
]


@pytest.mark.parametrize(("mode", "coords", "nearest", "hw", "out"), RESIZE)
def test_resize_sizes(mode: str, coords: str, nearest: str, hw: tuple[int, int], out: tuple[int, int]) -> None:
    x = f32(1, 2, *hw)
    attrs: dict[str, Any] = {"mode": mode, "coordinate_transformation_mode": coords}
    if nearest:
        attrs["nearest_mode"] = nearest
    sizes = np.array([1, 2, *out], np.int64)
    model = one_node("Resize", {"x": x}, {"sizes": sizes}, opset=13, input_names=["x", "", "", "sizes"], **attrs)
    assert ops_of(model) == ["ascend.ResizeD"]
    check(model, {"x": x})


def test_resize_scales_and_bilinear_float64() -> None:
    """Upsampling by scales 2 (torch's `interpolate(scale_factor=2, mode="bilinear")`), also against a
    float64 four-neighbour formula of half-pixel bilinear interpolation."""
    x = f32(2, 3, 4, 5)
    scales = np.array([1, 1, 2, 2], np.float32)
    model = one_node(
        "Resize",
        {"x": x},
        {"roi": np.array([], np.float32), "scales": scales},
        opset=13,
        mode="linear",
        coordinate_transformation_mode="pytorch_half_pixel",
    )
    check(model, {"x": x})
    got = run_ours(model, {"x": x})[0]
    want = np.zeros((2, 3, 8, 10))
    for i in range(8):
        for j in range(10):
            u, v = min(max((i + 0.5) / 2 - 0.5, 0), 3), min(max((j + 0.5) / 2 - 0.5, 0), 4)
            i0, j0 = int(u), int(v)
            i1, j1 = min(i0 + 1, 3), min(j0 + 1, 4)
            a, b = u - i0, v - j0
            x64 = x.astype(np.float64)
            want[:, :, i, j] = (
                x64[:, :, i0, j0] * (1 - a) * (1 - b)
                + x64[:, :, i1, j0] * a * (1 - b)
                + x64[:, :, i0, j1] * (1 - a) * b
                + x64[:, :, i1, j1] * a * b
            )
    assert rel_err(got, want) < 1e-6


@pytest.mark.parametrize(
    ("attrs", "scales", "message"),
    [
        ({"mode": "cubic"}, [1, 1, 2, 2], "mode 'cubic' is not supported"),
        (
            {"coordinate_transformation_mode": "tf_crop_and_resize"},
            [1, 1, 2, 2],
            "coordinate_transformation_mode 'tf_crop_and_resize' is not supported",
        ),
        ({}, [1, 2, 2, 2], "only the spatial dimensions (2 and on) may be resized"),
        ({}, [1, 1, 1.7, 2], "scale 1.7"),
    ],
)
def test_resize_unsupported_is_one_line(attrs: dict[str, Any], scales: list[float], message: str) -> None:
    model = one_node(
        "Resize",
        {"x": f32(1, 2, 3, 4)},
        {"roi": np.array([], np.float32), "scales": np.array(scales, np.float32)},
        opset=13,
        **attrs,
    )
    with pytest.raises(AscendError) as err:
        import_onnx(model)
    assert message in str(err.value) and "resize_node" in str(err.value) and "\n" not in str(err.value)


# --------------------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------------------

REDUCE64 = {
    "ReduceMin": lambda x, a, k: x.min(axis=a, keepdims=k),
    "ReduceProd": lambda x, a, k: x.prod(axis=a, keepdims=k),
    "ReduceL1": lambda x, a, k: np.abs(x).sum(axis=a, keepdims=k),
    "ReduceL2": lambda x, a, k: np.sqrt((x * x).sum(axis=a, keepdims=k)),
    "ReduceSumSquare": lambda x, a, k: (x * x).sum(axis=a, keepdims=k),
    "ReduceLogSumExp": lambda x, a, k: np.log(np.exp(x).sum(axis=a, keepdims=k)),
}


@pytest.mark.parametrize("op", list(REDUCE64))
@pytest.mark.parametrize("keep", [0, 1])
def test_reductions(op: str, keep: int) -> None:
    x = f32(2, 3, 4)
    model = one_node(op, {"x": x}, opset=17, axes=[1, -1], keepdims=keep)
    check(model, {"x": x})
    got = run_ours(model, {"x": x})[0]
    assert rel_err(got, REDUCE64[op](x.astype(np.float64), (1, 2), bool(keep))) < 1e-5


@pytest.mark.parametrize("op", list(REDUCE64))
def test_reductions_axes_input_opset18(op: str) -> None:
    x = f32(3, 4)
    check(one_node(op, {"x": x}, {"axes": np.array([0], np.int64)}, opset=18, keepdims=0), {"x": x})


@pytest.mark.parametrize("op", ["ReduceL2", "ReduceL1", "ReduceLogSumExp"])
def test_reductions_over_all_axes_and_noop(op: str) -> None:
    x = f32(3, 4)
    check(one_node(op, {"x": x}, opset=18), {"x": x})
    check(one_node(op, {"x": x}, opset=18, noop_with_empty_axes=1), {"x": x})


# --------------------------------------------------------------------------------------
# InstanceNormalization
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 4, 3, 5), (1, 2, 2, 3, 4)])
def test_instance_normalization(shape: tuple[int, ...]) -> None:
    x = f32(*shape) * 3 + 1
    c = shape[1]
    model = one_node("InstanceNormalization", {"x": x}, {"s": f32(c), "b": f32(c)}, epsilon=1e-4)
    assert ops_of(model) == ["ascend.InstanceNorm"]
    check(model, {"x": x})


# --------------------------------------------------------------------------------------
# 1-d convolution and pooling (through the 2-d kernels)
# --------------------------------------------------------------------------------------

CONV1D = [
    {"kernel_shape": [3]},
    {"kernel_shape": [3], "strides": [2], "pads": [1, 2], "dilations": [2]},
    {"kernel_shape": [5], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [3], "group": 4, "pads": [1, 1]},  # depthwise
    {"kernel_shape": [1], "group": 2},
]


@pytest.mark.parametrize("attrs", CONV1D)
def test_conv_1d(attrs: dict[str, Any]) -> None:
    x = f32(2, 4, 11)
    group = attrs.get("group", 1)
    w = f32(8 if group == 4 else 6, 4 // group, attrs["kernel_shape"][0])
    model = one_node("Conv", {"x": x}, {"w": w, "b": f32(w.shape[0])}, **attrs)
    ops = ops_of(model)
    assert (
        ops[0] == "ascend.Reshape"
        and ops[-1] == "ascend.Reshape"
        and ops[1] in ("ascend.Conv2D", "ascend.DepthwiseConv2D")
    )
    check(model, {"x": x})


def test_conv_1d_filter_computed_at_run_time() -> None:
    x, w = f32(1, 3, 9), f32(5, 3, 2)
    check(one_node("Conv", {"x": x, "w": w}), {"x": x, "w": w})


@pytest.mark.parametrize(
    ("op", "attrs"),
    [
        ("MaxPool", {"kernel_shape": [3], "strides": [2]}),
        ("MaxPool", {"kernel_shape": [2], "pads": [1, 1]}),
        ("AveragePool", {"kernel_shape": [3], "strides": [1], "pads": [1, 1], "count_include_pad": 1}),
        ("AveragePool", {"kernel_shape": [4], "strides": [2], "ceil_mode": 1}),
    ],
)
def test_pool_1d(op: str, attrs: dict[str, Any]) -> None:
    x = f32(2, 3, 10)
    check(one_node(op, {"x": x}, **attrs), {"x": x})


CONV3D = [
    {},
    {"strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
    {"dilations": [2, 1, 1], "pads": [2, 1, 1, 2, 1, 1]},
    {"auto_pad": "SAME_UPPER", "strides": [2, 2, 1]},
    {"group": 2},
]


@pytest.mark.parametrize("attrs", CONV3D)
def test_conv_3d(attrs: dict[str, Any]) -> None:
    x = f32(2, 4, 5, 6, 5)
    w = f32(6, 4 // attrs.get("group", 1), 3, 3, 2)
    model = one_node("Conv", {"x": x}, {"w": w, "b": f32(6)}, **attrs)
    ops = ops_of(model)
    assert ops.count("ascend.Conv2D") == 3 and "ascend.Conv3D" not in ops
    check(model, {"x": x})


@pytest.mark.parametrize(
    ("op", "attrs"),
    [
        ("MaxPool", {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}),
        ("MaxPool", {"kernel_shape": [3, 3, 3], "strides": [1, 2, 2], "pads": [1, 1, 1, 1, 1, 1]}),
        ("AveragePool", {"kernel_shape": [2, 3, 3], "strides": [2, 1, 1], "pads": [0, 1, 1, 0, 1, 1]}),
        ("AveragePool", {"kernel_shape": [3, 2, 2], "pads": [1, 0, 0, 1, 0, 0], "count_include_pad": 1}),
    ],
)
def test_pool_3d(op: str, attrs: dict[str, Any]) -> None:
    x = f32(1, 3, 6, 5, 6)
    check(one_node(op, {"x": x}, **attrs), {"x": x})


@pytest.mark.parametrize(
    ("op", "inputs", "attrs", "message"),
    [
        ("Conv", ["x", "w"], {}, "a 3-d convolution needs a constant filter"),
        ("MaxPool", ["x"], {"kernel_shape": [2, 2, 2], "ceil_mode": 1}, "ceil_mode=1 is not supported for 3-d pooling"),
        ("AveragePool", ["x"], {"kernel_shape": [2, 2, 2], "pads": [1, 0, 0, 1, 0, 0]}, "count_include_pad=1"),
    ],
)
def test_3d_unsupported_is_one_line(op: str, inputs: list[str], attrs: dict[str, Any], message: str) -> None:
    xs = {"x": f32(1, 2, 4, 4, 4)} | ({"w": f32(2, 2, 1, 1, 1)} if "w" in inputs else {})
    with pytest.raises(AscendError) as err:
        import_onnx(one_node(op, xs, **attrs))
    assert message in str(err.value) and "\n" not in str(err.value)


# --------------------------------------------------------------------------------------
# Einsum
# --------------------------------------------------------------------------------------

EINSUM = {
    "bhid,bhjd->bhij": [(2, 3, 4, 5), (2, 3, 6, 5)],  # attention scores
    "bhij,bhjd->bhid": [(2, 3, 4, 6), (2, 3, 6, 5)],  # attention output
    "bij,bjk->bik": [(2, 3, 4), (2, 4, 5)],
    "i,j->ij": [(3,), (4,)],
    "ij,jk": [(3, 4), (4, 5)],  # implicit output: ik
    "ij,jk->ki": [(3, 4), (4, 5)],
    "abc,cd->abd": [(2, 3, 4), (4, 5)],
    "ij,ij->i": [(3, 4), (3, 4)],
    "bn,anm->bam": [(2, 3), (4, 3, 5)],
    "ijk,jl->li": [(2, 3, 4), (3, 5)],  # k summed out of one operand first
    "ij->ji": [(3, 4)],
    "bij->bj": [(2, 3, 4)],
    "ij->": [(3, 4)],
}


@pytest.mark.parametrize("equation", list(EINSUM))
def test_einsum(equation: str) -> None:
    xs = {f"x{i}": f32(*shape) for i, shape in enumerate(EINSUM[equation])}
    model = one_node("Einsum", xs, equation=equation)
    assert "ascend.Einsum" not in ops_of(model)
    check(model, xs)
    got = run_ours(model, xs)[0]
    assert rel_err(got, np.einsum(equation, *(x.astype(np.float64) for x in xs.values()))) < 1e-5


@pytest.mark.parametrize(
    ("equation", "shapes", "message"),
    [
        ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)], "an ellipsis"),
        ("ii->i", [(3, 3)], "a repeated index in 'ii'"),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "3 operand terms"),
    ],
)
def test_einsum_unsupported_is_one_line(equation: str, shapes: list[tuple[int, ...]], message: str) -> None:
    xs = {f"x{i}": f32(*shape) for i, shape in enumerate(shapes)}
    with pytest.raises(AscendError) as err:
        import_onnx(one_node("Einsum", xs, equation=equation))
    text = str(err.value)
    assert message in text and f"equation '{equation}'" in text and "einsum_node" in text and "\n" not in text


# --------------------------------------------------------------------------------------
# CumSum
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [1, -3])
def test_cumsum(exclusive: int, reverse: int, axis: int) -> None:
    x = f32(3, 4, 5)
    model = one_node("CumSum", {"x": x}, {"axis": np.array(axis, np.int64)}, exclusive=exclusive, reverse=reverse)
    assert ops_of(model) == ["ascend.CumsumD"]
    check(model, {"x": x})


def test_cumsum_of_int64() -> None:
    x = RNG.integers(-5, 5, (2, 6)).astype(np.int64)
    check(one_node("CumSum", {"x": x}, {"axis": np.array([1], np.int32)}), {"x": x}, tol=0)


# --------------------------------------------------------------------------------------
# ScatterND
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "indices"),
    [((5, 3), [[4], [0], [-2]]), ((2, 3, 4), [[[0, 1], [1, 2]]]), ((4,), [[1], [3]]), ((2, 3), [[1, 2], [0, 0]])],
)
def test_scatter_nd(data: tuple[int, ...], indices: list[Any]) -> None:
    idx = np.array(indices, np.int64)
    x = f32(*data)
    u = f32(*(idx.shape[:-1] + data[idx.shape[-1] :]))
    model = one_node("ScatterND", {"x": x, "u": u}, {"i": idx}, input_names=["x", "i", "u"])
    assert ops_of(model) == ["ascend.ScatterNdUpdate"]
    check(model, {"x": x, "u": u}, tol=0)


def test_scatter_nd_indices_become_int32_as_cann_takes_them() -> None:
    model = one_node(
        "ScatterND",
        {"x": f32(4, 2), "u": f32(2, 2)},
        {"i": np.array([[2], [0]], np.int64)},
        input_names=["x", "i", "u"],
    )
    (op,) = [o for o in import_onnx(model).walk() if o.name == "ascend.ScatterNdUpdate"]
    assert str(op.operands[1].type) == "tensor<2x1xi32>"
    runtime = one_node("ScatterND", {"x": f32(4, 2), "i": np.array([[2], [0]], np.int64), "u": f32(2, 2)})
    assert ops_of(runtime) == ["ascend.Cast", "ascend.ScatterNdUpdate"]


def test_scatter_nd_with_indices_computed_at_run_time() -> None:
    x, u, i = f32(4, 2), f32(2, 2), np.array([[2], [0]], np.int64)
    check(one_node("ScatterND", {"x": x, "i": i, "u": u}), {"x": x, "i": i, "u": u}, tol=0)


def test_scatter_nd_reduction_is_a_one_line_error() -> None:
    model = one_node(
        "ScatterND",
        {"x": f32(4, 2), "u": f32(1, 2)},
        {"i": np.array([[1]], np.int64)},
        opset=18,
        input_names=["x", "i", "u"],
        reduction="add",
    )
    with pytest.raises(AscendError) as err:
        import_onnx(model)
    assert "reduction 'add' is not supported" in str(err.value) and "scatternd_node" in str(err.value)
