"""The ascend-precision pass (docs/design.md §5): the decisions of each mode (passes/precision/decide.py, kernels.py)."""

from __future__ import annotations

from precision_util import CNN, MLP, casts, dtypes, named, run
from xdsl.dialects import func

from ascend_mp.dialects import ascend
from ascend_mp.modes import V1_MODES


def test_mlp_in_every_mode() -> None:
    expected = {
        # mode: (MatMulV2, BiasAdd, Log (black), SoftmaxV2) result dtypes
        "force_fp16": ("f16", "f16", "f16", "f16"),
        "force_fp32": ("f32", "f32", "f32", "f32"),
        "cube_fp16in_fp32out": ("f32", "f32", "f32", "f32"),
        "allow_fp32_to_fp16": ("f32", "f32", "f32", "f32"),
        "must_keep_origin_dtype": ("f32", "f32", "f32", "f32"),
        "allow_mix_precision": ("f16", "f16", "f32", "f32"),
        "allow_mix_precision_fp16": ("f16", "f16", "f32", "f32"),
    }
    for mode, want in expected.items():
        module, _ = run(MLP, mode=mode)
        got = tuple(dtypes(named(module, n))[1][0] for n in ("fc1", "bias1", "log", "softmax"))
        assert got == want, mode


def test_cnn_fp16_only_ops() -> None:
    # force_fp32: Conv2D has no fp32 kernel (fp16); MaxPool is gray, its fp32 kernel is AI CPU only (fp16).
    _, report = run(CNN, mode="force_fp32")
    assert report.by_name("conv1").reason == "no fp32 kernel"
    assert report.by_name("pool1").chosen.outputs == ("f16",)
    assert report.by_name("relu1").chosen.outputs == ("f32",)
    # A black MaxPool takes the AI CPU kernel.
    _, report = run(CNN.replace('name = "pool1"', 'name = "pool1", list = #ascend.list<black>'), mode="force_fp32")
    pool = report.by_name("pool1")
    assert (pool.chosen.outputs, pool.engine, pool.reason) == (("f32",), "aicpu", "aicpu fallback")
    # must_keep_origin_dtype: the fp32 MaxPool runs on the AI CPU when Conv2D is fp16 already.
    text = CNN.replace(
        "%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>", "%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>"
    )
    text = text.replace("(tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>)", "(tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>)")
    _, report = run(text, mode="must_keep_origin_dtype")
    conv, pool = report.by_name("conv1"), report.by_name("pool1")
    assert (conv.original.outputs, conv.chosen.outputs) == (("f32",), ("f16",))  # the only kernel
    assert (pool.engine, pool.reason, pool.chosen.outputs) == ("aicpu", "aicpu fallback", ("f32",))


def test_fp16_graph_is_not_raised_in_mix_modes() -> None:
    text = MLP.replace("f32", "f16")
    for mode in (
        "allow_mix_precision",
        "allow_mix_precision_bf16",
        "allow_fp32_to_fp16",
        "force_fp16",
        "must_keep_origin_dtype",
    ):
        module, report = run(text, mode=mode, soc="ascend910b")
        assert not casts(module), mode
        assert report.ops_reduced == 0
    module, report = run(text, mode="force_fp32")
    assert dtypes(named(module, "log"))[1] == ("f32",)
    assert len(casts(module)) == 4  # three arguments in, one result out


def test_gray_votes_and_reasons() -> None:
    text = """func.func @g(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %h: tensor<8x8xf16>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.ReduceSum %x {axes = array<i64: 1>, keep_dims = true, name = "sum"} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %a = ascend.Add %m, %s {name = "both"} : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %b = ascend.Mul %m, %x {name = "one"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = ascend.Sub %x, %w {name = "none"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %u = ascend.Cast %h {name = "user"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %d = ascend.Relu %u {name = "cast_vote"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %a, %b, %c, %d : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    assert report.by_name("both").reason == "gray: follows ReduceSum/sum"
    assert report.by_name("both").chosen.outputs == ("f32",)
    assert report.by_name("one").reason == "gray: follows MatMulV2/mm"
    assert report.by_name("one").chosen.outputs == ("f16",)
    assert report.by_name("none").reason == "gray: no voting producer"
    assert report.by_name("cast_vote").reason == "gray: follows Cast/user"
    assert report.by_name("cast_vote").chosen.outputs == ("f32",)
    assert report.by_name("user").reason == "user cast"
    assert report.by_name("mm").reason == "white" and report.by_name("sum").reason == "black"


def test_constants_do_not_vote() -> None:
    text = """func.func @c(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c = ascend.Const dense<2.0> : tensor<4x4xf32>
  %m = ascend.MatMulV2 %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = ascend.Add %c, %c {name = "consts"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = ascend.Add %c, %m {name = "mixed"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = ascend.Add %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    assert report.by_name("consts").chosen.outputs == ("f32",)
    assert report.by_name("mixed").chosen.outputs == ("f16",)
    const = next(op for op in module.walk() if isinstance(op, ascend.ConstOp))
    assert dtypes(const)[1] == ("f32",)


def test_allow_fp32_to_bf16_keeps_fp32_where_supported() -> None:
    module, report = run(CNN, mode="allow_fp32_to_bf16", soc="ascend910b")
    assert report.by_name("conv1").chosen.outputs == ("bf16",)
    assert report.by_name("relu1").chosen.outputs == ("f32",)
    assert report.by_name("pool1").chosen.outputs == ("bf16",)
    assert report.by_name("conv1").reason == "no fp32 kernel"


def test_mixed_dtype_kernels() -> None:
    text = """func.func @k(%x: tensor<2x4x8x8xf32>, %st: tensor<4xf32>, %a: tensor<4x10xf32>, %i: tensor<4xi32>, %on: tensor<f32>, %off: tensor<f32>, %dy: tensor<2x4x6x6xf32>) -> (tensor<2x4x8x8xf32>, tensor<4xi32>, tensor<4x10xf32>, tensor<4x4x3x3xf32>) {
  %y, %m, %v = ascend.BatchNorm %x, %st, %st, %st, %st {name = "bn"} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>)
  %am = ascend.ArgMaxV2 %a {name = "argmax"} : (tensor<4x10xf32>) -> tensor<4xi32>
  %oh = ascend.OneHot %i, %on, %off {depth = 10 : i64, name = "onehot"} : (tensor<4xi32>, tensor<f32>, tensor<f32>) -> tensor<4x10xf32>
  %dw = ascend.Conv2DBackpropFilter %x, %dy {filter_size = array<i64: 4, 4, 3, 3>, strides = array<i64: 1, 1, 1, 1>, name = "dw"} : (tensor<2x4x8x8xf32>, tensor<2x4x6x6xf32>) -> tensor<4x4x3x3xf32>
  func.return %y, %am, %oh, %dw : tensor<2x4x8x8xf32>, tensor<4xi32>, tensor<4x10xf32>, tensor<4x4x3x3xf32>
}
"""
    module, _ = run(text, mode="force_fp16")
    assert dtypes(named(module, "bn")) == (("f16", "f32", "f32", "f32", "f32"), ("f16", "f32", "f32"))
    assert dtypes(named(module, "argmax")) == (("f16",), ("i32",))
    assert dtypes(named(module, "onehot")) == (("i32", "f16", "f16"), ("f16",))
    assert dtypes(named(module, "dw")) == (("f16", "f16"), ("f32",))
    module, _ = run(text, mode="force_fp32")
    assert dtypes(named(module, "dw")) == (("f16", "f16"), ("f32",))
    assert dtypes(named(module, "onehot")) == (("i32", "f32", "f32"), ("f32",))


def test_optional_and_variadic_operands() -> None:
    text = """func.func @v(%x: tensor<4x4xf32>, %b: tensor<4xf32>, %h: tensor<4x4xf16>) -> (tensor<4x4xf32>, tensor<4x12xf32>) {
  %m = ascend.MatMulV2 %x, %x, %b {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %hf = ascend.Cast %h : (tensor<4x4xf16>) -> tensor<4x4xf32>
  %c = ascend.ConcatV2D %m, %x, %hf {concat_dim = 1 : i64, name = "cat"} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
  func.return %m, %c : tensor<4x4xf32>, tensor<4x12xf32>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    assert dtypes(named(module, "mm")) == (("f16", "f16", "f16"), ("f16",))
    # The variadic Concat: fp16 (MatMulV2) and fp32 (user Cast) votes -> fp32, one dtype for all its values.
    assert dtypes(named(module, "cat")) == (("f32", "f32", "f32"), ("f32",))
    assert report.by_name("cat").chosen.inputs == ("f32",)
    module, _ = run(text, mode="force_fp16")
    assert dtypes(named(module, "cat")) == (("f16", "f16", "f16"), ("f16",))
    # The fp16 -> fp32 user cast is folded away for the fp16 Concat: it reads %h directly.
    assert named(module, "cat").operands[2] is module.body.block.first_op.body.block.args[2]  # pyright: ignore[reportAttributeAccessIssue]


def test_integer_ops_never_change() -> None:
    text = """func.func @i(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %s = ascend.Add %a, %b {name = "add"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %s : tensor<4xi32>
}
"""
    for mode in V1_MODES:
        module, report = run(text, mode=mode)
        assert dtypes(named(module, "add")) == (("i32", "i32"), ("i32",))
        assert report.by_name("add").reason == "no float tensors"


def test_function_calls_keep_their_operand_dtypes() -> None:
    text = """func.func @callee(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  func.return %x : tensor<4x4xf32>
}
func.func @caller(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = ascend.MatMulV2 %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = func.call @callee(%m) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = ascend.Relu %c {name = "after_call"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    call = next(op for op in module.walk() if isinstance(op, func.CallOp))
    assert dtypes(call) == (("f32",), ("f32",))
    assert report.by_name("after_call").reason == "gray: follows func.call"
