"""What the zoo runs of the conformance harnesses (docs/conformance.md, `conformance/run.py --zoo`) rest on, kept
without a framework installed: the documented difference (where Ascend has no kernel in the dtype a framework's amp
runs an op in, the policy runs the kernel that exists and says why; the op-info table is read here independently
of the pass to show the kernel really is missing) and the reading of an imported LayerNorm as MindSpore's cell."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from ascend_mp.ir import parse_module
from ascend_mp.passes.precision import run_precision

_STEM = """func.func @stem(%x: tensor<1x3x16x16xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, name = "conv"} : (tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x16x16xf32>
  %r = ascend.Relu %c {name = "relu"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %p = ascend.MaxPoolV3 %r {ksize = array<i64: 1, 1, 3, 3>, strides = array<i64: 1, 1, 2, 2>, pads = array<i64: 1, 1, 1, 1>, padding_mode = "CALCULATED", name = "pool"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x8x8xf32>
  func.return %p : tensor<1x8x8x8xf32>
}
"""
"""ResNet's stem as the ONNX frontend imports it (resnet18 / resnet50 of the model zoo)."""


def _table_dtypes(soc: str, op: str) -> set[str]:
    data = resources.files("ascend_mp.opinfo").joinpath("data", f"aic-{soc}-ops-info.json").read_text("utf-8")
    return set(json.loads(data)[op]["input0"]["dtype"].split(","))


@pytest.mark.parametrize("soc", ["ascend910", "ascend910b"])
def test_mindspore_o1_max_pool_v3_runs_fp16_for_want_of_an_fp32_kernel(soc: str) -> None:
    """MindSpore's O1 keeps MaxPool (on no white list) in fp32 (MindSpore 2.10 on resnet18's stem,
    `conformance/run.py mindspore --zoo resnet18 --amp-level O1`); CANN's MaxPoolV3 has fp16 (and bf16) kernels
    only, so the policy runs it in fp16 and its reason names the missing kernel (the harness counts it as
    documented). The Conv2D and ReLU before it are on the white list."""
    assert "float" not in _table_dtypes(soc, "MaxPoolV3") and "float16" in _table_dtypes(soc, "MaxPoolV3")
    report = run_precision(parse_module(_STEM), policy="mindspore", level="O1", soc=soc)
    got = {d.name: (d.chosen.outputs[0], d.reason) for d in report.ops if d.name}
    assert got["conv"][0] == got["relu"][0] == "f16"
    assert got["pool"] == ("f16", "mindspore O1: not on the white list: no fp32 kernel")


def test_mindspore_o2_max_pool_v3_agrees_with_mindspore() -> None:
    """At O2 MindSpore runs MaxPool in fp16 (not black-listed), as the fp16 kernel does: no difference there."""
    report = run_precision(parse_module(_STEM), policy="mindspore", level="O2")
    assert {d.name: d.chosen.outputs[0] for d in report.ops if d.name} == {"conv": "f16", "relu": "f16", "pool": "f16"}


_NORM = """func.func @block(%x: tensor<8x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>, %w: tensor<32x32xf32>) -> tensor<8x32xf32> {
  %n, %mean, %var = ascend.LayerNorm %x, %g, %b {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64, name = "/model/ln/LayerNormalization"} : (tensor<8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  %y = ascend.MatMulV2 %n, %w {name = "/model/fc/MatMul"} : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  func.return %y : tensor<8x32xf32>
}
"""
"""A LayerNorm as the ONNX frontend imports it: its name holds no MindSpore cell."""


@pytest.mark.parametrize(("level", "norm"), [("O1", "f32"), ("O2", "f32"), ("O3", "f16")])
def test_mindspore_reads_an_imported_layer_norm_as_the_layernorm_cell(level: str, norm: str) -> None:
    """MindSpore 2.10's amp keeps an `nn.LayerNorm` cell in fp32 at O2 (a black-list cell: its ops.LayerNorm runs in
    fp32, the output cast back to fp16) and runs it in fp16 at O3 (the zoo's BERT, GPT-2 and ViT,
    `conformance/run.py mindspore --zoo bert_eager --amp-level O2`); with no cell in its name the policy reads the
    LayerNorm by its CANN type as that cell. The MatMul after it is white at every level."""
    report = run_precision(parse_module(_NORM), policy="mindspore", level=level)
    got = {d.type: d.chosen.outputs[0] for d in report.ops}
    assert got == {"LayerNorm": norm, "MatMulV2": "f16"}


@pytest.mark.parametrize(("low", "soc"), [("f16", "ascend910"), ("bf16", "ascend910b")])
def test_tf_max_pool_v3_is_tensorflows_max_pool(low: str, soc: str) -> None:
    """CANN's MaxPoolV3 (an ONNX MaxPool with pads, resnet's stem) is TensorFlow's MaxPool, on the clear list: grappler
    paints it after the Conv2D and Relu in the low dtype, bf16 included (TensorFlow 2.21's oneDNN mode,
    `conformance/run.py tf --zoo resnet18 --dtype bf16`). Unmapped, the policy kept it off every list and, having no
    fp32 kernel, ran it in fp16 under bf16 too."""
    report = run_precision(parse_module(_STEM), policy="tf", amp_dtype=low, soc=soc)
    got = {d.name: (d.chosen.outputs[0], d.reason) for d in report.ops if d.name}
    assert got["conv"][0] == got["relu"][0] == got["pool"][0] == low
    assert "clear" in got["pool"][1] and "kernel" not in got["pool"][1]
