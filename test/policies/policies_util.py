"""Helpers of the policy tests (test/policies/): the policy runs, random graphs with marked ops, dtype lookups."""

from __future__ import annotations

from ascend_mp.modes import V1_MODES

POLICY_RUNS: list[dict[str, str]] = [
    *({"mode": m} for m in V1_MODES),
    {"policy": "tf"},
    {"policy": "tf", "amp_dtype": "bf16"},
    *({"policy": "mindspore", "level": lv} for lv in ("O0", "O1", "O2", "O3")),
    {"policy": "torch"},
    {"policy": "torch", "amp_dtype": "bf16"},
]


def _dtypes(report: object) -> dict[str, str]:
    return {d.name: d.chosen.outputs[0] for d in report.ops if d.name}  # type: ignore[attr-defined]


SEED_004 = """func.func @net(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w {name = "Default/dense-Dense/MatMul-op0"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b {name = "Default/dense-Dense/BiasAdd-op1"} : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z {name = "Default/ReLU-op2"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r {name = "Default/head/SoftmaxV2-op3"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}
"""


COMPARE = """func.func @g(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %y {name = "softmax"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}
"""


_ATTENTION = """func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %scale: tensor<f32>) -> tensor<2x4x8xf32> {
  %s = ascend.BatchMatMulV2 %q, %k {adj_x2 = true, name = "scores"} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %m = ascend.Mul %s, %scale {name = "scaled"} : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = ascend.SoftmaxV2 %m {name = "probs"} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %c = ascend.BatchMatMulV2 %p, %v {name = "context"} : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %c : tensor<2x4x8xf32>
}
"""
