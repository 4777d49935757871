"""The MindSpore and PyTorch policies and to_float scopes (ascend_mp/policies/frameworks.py, scopes.py),
against what the frameworks do."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from policies_util import _ATTENTION, POLICY_RUNS, SEED_004, _dtypes
from xdsl.dialects import func

from ascend_mp.dialects.ascend import AscendOp, CastOp
from ascend_mp.dtypes import tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.ir import parse_module, print_module
from ascend_mp.modes import V1_MODES
from ascend_mp.passes.precision import load_config, run_precision


@pytest.mark.parametrize(
    "policy", [{"policy": "mindspore", "level": "O0"}, {"mode": "force_fp32"}, {"mode": "allow_mix_precision"}]
)
def test_to_float_scopes_innermost_wins(tmp_path: object, policy: dict[str, str]) -> None:
    """MindSpore (docs/design.md §11): net.to_float(float16); net.dense.to_float(float32); also with CANN modes (a scoped customize_dtypes)."""
    path = f"{tmp_path}/scopes.txt"
    with open(path, "w") as f:
        f.write("# net.to_float(float16); net.dense.to_float(float32)\nDefault = fp16\nDefault/dense = fp32\n")
    for spec in (path, "Default=fp16;Default/dense=fp32"):
        report = run_precision(parse_module(SEED_004), to_float=spec, **policy)  # type: ignore[arg-type]
        got = _dtypes(report)
        assert got == {
            "Default/dense-Dense/MatMul-op0": "f32",
            "Default/dense-Dense/BiasAdd-op1": "f32",
            "Default/ReLU-op2": "f16",
            "Default/head/SoftmaxV2-op3": "f16",
        }, (spec, got)
        assert report.by_name("Default/ReLU-op2").reason == "to_float Default: fp16"
        assert report.by_name("Default/dense-Dense/MatMul-op0").reason == "to_float Default/dense: fp32"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("Default=fp8", "to_float entry 1: unknown dtype 'fp8' for scope 'Default'; expected fp16, bf16 or fp32"),
        ("Default=fp16;=fp32", "to_float entry 2: expected 'scope = dtype'"),
        ("Default=fp16;Default/=fp32", "to_float entry 2: scope 'Default/' is given twice"),
        ("no-such-file.txt", "no-such-file.txt: cannot read file"),
    ],
)
def test_bad_to_float_entries_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(AscendError, match=message.replace("(", r"\(")):
        load_config(to_float=spec)


def test_bad_to_float_file_line_is_named(tmp_path: object) -> None:
    path = f"{tmp_path}/s.txt"
    with open(path, "w") as f:
        f.write("Default = fp16\n\nDefault/fc1 fp32\n")
    with pytest.raises(AscendError, match=f"{path}:3: expected 'scope = dtype'"):
        load_config(to_float=path)


def test_mindspore_and_torch_lists_are_data_with_known_mappings() -> None:
    from ascend_mp.dialects.ascend import OPS_BY_TYPE
    from ascend_mp.policies.frameworks import load

    ms = load("mindspore")
    for key in ("white_cells", "white_primitives", "black_cells", "loss_primitives"):
        for name in ms[key]:
            assert name in ms["cann"], (key, name)
    assert {"Dense", "Conv2d"} <= set(ms["white_cells"]) and {"BatchNorm1d", "LayerNorm"} <= set(ms["black_cells"])
    torch = load("torch")
    for key in ("lower_precision", "fp32", "promote", "input_dtype"):
        for name in torch[key]:
            assert name in torch["cann"], (key, name)
    assert {"softmax", "log_softmax", "layer_norm", "exp", "log", "pow", "sum"} <= set(torch["fp32"])
    for bias, of in torch["bias"].items():
        assert bias in OPS_BY_TYPE and all(t in OPS_BY_TYPE for t in of), (bias, of)
    for data in (ms, torch):
        for name, types in data["cann"].items():
            assert all(t in OPS_BY_TYPE for t in types), (name, types)


def test_unknown_mindspore_level_is_an_error() -> None:
    with pytest.raises(
        AscendError, match="unknown amp_level 'O4' for amp_policy mindspore; expected one of O0, O1, O2, O3"
    ):
        load_config(policy="mindspore", level="O4")
    with pytest.raises(AscendError, match="amp_level 'O1' applies to the mindspore policy only"):
        load_config(policy="torch", level="O1")


def test_mindspore_o2_keeps_the_loss_not_the_backward_in_fp32() -> None:

    from ascend_mp.ir import read_module

    example = Path(__file__).resolve().parents[2] / "examples" / "run_mlp_train.mlir"
    report = run_precision(read_module(str(example)), policy="mindspore", level="O2")
    got = {d.name: d.chosen.outputs[0] for d in report.ops if d.name}
    assert got["xent"] == "f32" and got["loss"] == "f32"  # the loss and its mean
    assert report.by_name("loss").reason == "mindspore O2: the loss"
    assert got["fc1"] == got["fc2/w_grad"] == got["fc2/x_grad"] == "f16"  # forward and backward in fp16


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(graph=st.deferred(lambda: __import__("strategies").graphs()), run=st.sampled_from(POLICY_RUNS[len(V1_MODES) :]))
def test_framework_policies_on_the_fuzz_graphs(graph: tuple[str, object], run: dict[str, str]) -> None:
    """The fuzz harness's random DAGs (test/strategies.py) under every framework policy: the output verifies,
    keeps the signature, the user's ops (none deleted or reordered) and every integer tensor; idempotent."""
    soc, module = graph
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))  # type: ignore[attr-defined]
    signature, ints = fn.function_type, _int_values(module)
    user_ops = [op for op in module.walk() if isinstance(op, AscendOp)]  # type: ignore[attr-defined]
    if run.get("amp_dtype") == "bf16" and soc != "ascend910b":
        soc = "ascend910b"
    report = run_precision(module, soc=soc, **run)  # type: ignore[arg-type]
    module.verify()  # type: ignore[attr-defined]
    assert fn.function_type == signature
    after = [op for op in module.walk() if isinstance(op, AscendOp)]  # type: ignore[attr-defined]
    inserted = set(after) - set(user_ops)
    # The one op the pass may remove: a user's f32 -> f16/bf16 cast whose input it retyped to exactly that
    # type (an identity after retyping, folded: docs/design.md §5), counted in casts_folded.
    folded = [op for op in user_ops if op.parent is None]
    assert all(isinstance(op, CastOp) for op in folded) and len(folded) <= report.casts_folded
    assert [op for op in after if op not in inserted] == [op for op in user_ops if op.parent is not None]
    assert all(isinstance(op, CastOp) for op in inserted)
    assert _int_values(module) == ints
    assert len(report.ops) == len(user_ops)
    once = print_module(module)  # type: ignore[arg-type]
    run_precision(module, soc=soc, **run)  # type: ignore[arg-type]
    assert print_module(module) == once, f"not idempotent under {run}"  # type: ignore[arg-type]


def _int_values(module: object) -> list[str]:
    """The types of every integer/bool operand and result, op by op (casts the pass inserts carry no ints)."""
    out = []
    for op in module.walk():  # type: ignore[attr-defined]
        if isinstance(op, AscendOp):
            for v in (*op.operands, *op.results):
                d = tensor_dtype(v.type)
                if d is not None and d[0] in "iu":
                    out.append(f"{op.name}:{v.type}")
    return out


def _decided(text: str, **run: str) -> dict[str, str]:
    report = run_precision(parse_module(text), **run)  # type: ignore[arg-type]
    return {d.name: d.chosen.outputs[0] for d in report.ops if d.name}


@pytest.mark.parametrize("low", ["f16", "bf16"])
def test_torch_attention_batch_matmuls_run_in_the_low_dtype(low: str) -> None:
    """BatchMatMulV2 (BERT / GPT-2 / ViT attention) is torch.matmul / bmm: on autocast's lower-precision list. The
    0-d fp32 scale does not promote the scores (a dimensioned tensor wins over a 0-d one); softmax is on the fp32
    list; the context product casts the fp32 probabilities back down."""
    soc = "ascend910b" if low == "bf16" else "ascend910"
    got = _decided(_ATTENTION, policy="torch", amp_dtype=low, soc=soc)
    assert got == {"scores": low, "scaled": low, "probs": "f32", "context": low}


_CONV_BLOCK = """func.func @conv_block(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %s: tensor<4xf32>, %o: tensor<4xf32>, %mean: tensor<4xf32>, %var: tensor<4xf32>, %wf: tensor<64x10xf32>, %bf: tensor<10xf32>) -> (tensor<2x10xf32>, tensor<2x4x8x8xf32>) {
  %c = ascend.Conv2D %x, %w, %b {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, name = "conv"} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %n = ascend.BNInfer %c, %s, %o, %mean, %var {name = "bn"} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %r = ascend.Relu %n {name = "relu"} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>, name = "pool"} : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  %f = ascend.Reshape %p {name = "flat"} : (tensor<2x4x4x4xf32>) -> tensor<2x64xf32>
  %y = ascend.MatMulV2 %f, %wf {name = "fc"} : (tensor<2x64xf32>, tensor<64x10xf32>) -> tensor<2x10xf32>
  %z = ascend.BiasAdd %y, %bf {name = "fc_bias"} : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %t, %tm, %tv = ascend.BatchNorm %c, %s, %o, %mean, %var {name = "bn_train"} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %z, %t : tensor<2x10xf32>, tensor<2x4x8x8xf32>
}
"""


def test_torch_conv_block_stays_fp16_after_the_conv() -> None:
    """conv2d is lower precision; batch_norm is on no list and its kernel takes an fp16 input with fp32 weight,
    bias and running statistics, returning fp16 (the parameters do not promote it); relu, max_pool2d and reshape
    are unlisted and run in their fp16 input's dtype; the classifier's linear is lower precision again."""
    got = _decided(_CONV_BLOCK, policy="torch")
    assert got == dict.fromkeys(("conv", "bn", "relu", "pool", "flat", "fc", "fc_bias", "bn_train"), "f16")


def test_torch_bias_add_is_the_bias_of_linear_only_right_after_its_matmul() -> None:
    """A BiasAdd that is the only use of a MatMulV2 is linear's bias (Gemm from torch.onnx.export): fp16. A BiasAdd
    elsewhere is `x + bias`, an unlisted add that type promotion takes to fp32 with the fp32 bias, whether after
    an fp32 op or after a matmul whose result is also used elsewhere."""
    text = """func.func @g(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %m = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %l = ascend.BiasAdd %m, %b {name = "linear_bias"} : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %e = ascend.Exp %x {name = "e"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = ascend.BiasAdd %e, %b {name = "add_after_exp"} : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %m2 = ascend.MatMulV2 %x, %w {name = "mm_shared"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a2 = ascend.BiasAdd %m2, %b {name = "add_after_shared"} : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %r = ascend.Relu %m2 {name = "relu"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %l, %a, %a2, %r : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
"""
    got = _decided(text, policy="torch")
    assert got == {
        "mm": "f16",
        "linear_bias": "f16",
        "e": "f32",
        "add_after_exp": "f32",
        "mm_shared": "f16",
        "add_after_shared": "f32",
        "relu": "f16",
    }


def test_torch_square_is_pow() -> None:
    """torch.square is the composite pow(x, 2): autocast meets aten::pow, on the fp32 list, so an fp16 input
    (here a matmul's) is computed in fp32; Neg, on no list, stays in its fp16 input's dtype."""
    text = """func.func @g(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %m = ascend.MatMulV2 %x, %x {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = ascend.Square %m {name = "sq"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = ascend.Neg %m {name = "neg"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %s, %n : tensor<4x4xf32>, tensor<4x4xf32>
}
"""
    assert _decided(text, policy="torch") == {"mm": "f16", "sq": "f32", "neg": "f16"}


def test_torch_linear_over_a_3d_input_is_matmul_plus_add_of_its_bias() -> None:
    """torch.onnx.export writes nn.Linear over a 3-d input as MatMul + Add; the ONNX frontend imports that as
    Reshape -> MatMulV2 -> Reshape -> Add of the 1-d bias. That Add is linear's bias (fp16), the residual Add of
    the fp16 linear and the fp32 input promotes to fp32, and an Add of the 1-d bias to a matmul whose result is also
    used elsewhere is a plain add (fp16 + fp32 -> fp32)."""
    text = """func.func @g(%x: tensor<2x4x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>) -> (tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) {
  %f = ascend.Reshape %x {name = "flat"} : (tensor<2x4x16xf32>) -> tensor<8x16xf32>
  %m = ascend.MatMulV2 %f, %w {name = "mm"} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %u = ascend.Reshape %m {name = "unflat"} : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %c = ascend.Const dense<0.5> : tensor<16xf32> {name = "bias"}
  %l = ascend.Add %u, %c {name = "linear_bias"} : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  %r = ascend.Add %l, %x {name = "residual"} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %m2 = ascend.BatchMatMulV2 %r, %w {name = "bmm"} : (tensor<2x4x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16xf32>
  %p = ascend.Add %m2, %b {name = "plain"} : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  %q = ascend.Relu %m2 {name = "relu"} : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  func.return %r, %p, %q : tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>
}
"""
    got = _decided(text, policy="torch")
    assert got == {
        "flat": "f32",
        "mm": "f16",
        "unflat": "f16",
        "bias": "f32",
        "linear_bias": "f16",
        "residual": "f32",
        "bmm": "f16",
        "plain": "f32",
        "relu": "f16",
    }


def test_mindspore_o1_batch_matmul_is_on_the_white_list() -> None:
    """MindSpore's AMP_WHITE_LIST holds P.BatchMatMul, which is CANN's BatchMatMulV2 too: at O1 amp casts its
    inputs to fp16 (MindSpore 2.10, `conformance/run.py mindspore --amp-level O1`); Softmax, on no list, stays fp32."""
    got = _decided(_ATTENTION, policy="mindspore", level="O1")
    assert got == {"scores": "f16", "scaled": "f32", "probs": "f32", "context": "f16"}
