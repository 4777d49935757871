"""Every order of the training passes is correct or a one-line error.

The ATC flags' precision pass goes where CANN applies precision (after ascend-autodiff,
before ascend-loss-scale); the loss ops and everything ascend-loss-scale and the optimizer
emit carry `keep_dtype`, so a precision pass after ascend-loss-scale leaves them alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_util import run_main
from xdsl.dialects import func

from ascend_mp.builder import mlp
from ascend_mp.dialects import ascend as A
from ascend_mp.dtypes import tensor_dtype
from ascend_mp.emit import is_kept
from ascend_mp.errors import AscendError
from ascend_mp.ir import make_context, parse_module, print_module
from ascend_mp.passes.autodiff import AutodiffPass, differentiate
from ascend_mp.passes.loss_scale import LossScalePass, order_training_passes
from ascend_mp.passes.precision import AscendPrecisionPass as PrecisionPass
from ascend_mp.tools.ascend_opt import main as opt_main

MODE = "allow_mix_precision"


@pytest.fixture(scope="module")
def forward_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("order") / "forward.mlir"
    path.write_text(print_module(mlp((8, 6, 4)).forward_module(4)))
    return path


def opt(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    return run_main(opt_main, argv, capsys)


def names(passes: tuple[object, ...]) -> list[str]:
    return [p.name for p in passes]  # pyright: ignore[reportAttributeAccessIssue]


# --------------------------------------------------------------------------------------
# Where the ATC flags' precision pass goes
# --------------------------------------------------------------------------------------


def test_flags_precision_goes_after_autodiff_and_before_loss_scale() -> None:
    precision = PrecisionPass(mode=MODE)
    got = order_training_passes((AutodiffPass(), LossScalePass()), precision)
    assert names(got) == ["ascend-autodiff", "ascend-precision", "ascend-loss-scale"]
    assert got[1] is precision


def test_flags_precision_with_loss_scale_alone_gets_an_autodiff_in_front() -> None:
    got = order_training_passes((LossScalePass(func="f", manager="fixed"),), PrecisionPass(mode=MODE))
    assert names(got) == ["ascend-autodiff", "ascend-precision", "ascend-loss-scale"]
    ensure = got[0]
    assert (
        isinstance(ensure, AutodiffPass) and ensure.if_missing and ensure.func == "f" and ensure.grad_func == "f_grad"
    )


def test_flags_precision_without_training_passes_stays_first() -> None:
    got = order_training_passes((), PrecisionPass(mode=MODE))
    assert names(got) == ["ascend-precision"]
    got = order_training_passes((AutodiffPass(),), PrecisionPass(mode=MODE))
    assert names(got) == ["ascend-autodiff", "ascend-precision"]


@pytest.mark.parametrize(
    ("flags_pipeline", "explicit"),
    [
        ("ascend-autodiff,ascend-loss-scale", f"ascend-autodiff,ascend-precision{{mode={MODE}}},ascend-loss-scale"),
        ("ascend-loss-scale", f"ascend-autodiff,ascend-precision{{mode={MODE}}},ascend-loss-scale"),
        ("ascend-autodiff", f"ascend-autodiff,ascend-precision{{mode={MODE}}}"),
        # a precision pass before a loss-scale pass that differentiates by itself sees the backward too
        (None, f"ascend-precision{{mode={MODE}}},ascend-loss-scale"),
    ],
)
def test_orders_give_what_cann_does(
    capsys: pytest.CaptureFixture[str], forward_file: Path, flags_pipeline: str | None, explicit: str
) -> None:
    """The ATC flags with `-p` give the same module as the explicit CANN order."""
    if flags_pipeline is None:
        code, got, err = opt(capsys, str(forward_file), "-p", explicit)
        explicit = f"ascend-autodiff,ascend-precision{{mode={MODE}}},ascend-loss-scale"
    else:
        code, got, err = opt(capsys, str(forward_file), f"--precision_mode={MODE}", "-p", flags_pipeline)
    assert code == 0, err
    code, want, err = opt(capsys, str(forward_file), "-p", explicit)
    assert code == 0, err
    assert got == want
    if "loss-scale" in explicit:
        # the backward went through kernel selection: BiasAddGrad has its only kernel output, fp32
        assert "BiasAddGrad" in got and "-> tensor<4xf16>" not in got.split("BiasAddGrad")[1].split("\n")[0]


# --------------------------------------------------------------------------------------
# Orders that are one-line errors
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        (
            f"ascend-precision{{mode={MODE}}},ascend-autodiff",
            "ascend-precision runs before ascend-autodiff in this pipeline",
        ),
        (
            f"ascend-precision{{mode={MODE}}},ascend-autodiff,ascend-loss-scale",
            "ascend-precision runs before ascend-autodiff",
        ),
        (
            "ascend-loss-scale,ascend-autodiff",
            "@forward_grad: ascend-autodiff: function @forward_grad already exists: ascend-autodiff (or ascend-loss-scale, which runs it) ran before",
        ),
        ("ascend-autodiff,ascend-loss-scale,ascend-autodiff", "function @forward_grad already exists"),
        (
            "ascend-loss-scale,ascend-loss-scale",
            "@train_step: ascend-loss-scale: function @train_step already exists (ascend-loss-scale ran already)",
        ),
        (
            "ascend-autodiff,ascend-autodiff",
            "@forward_grad: ascend-autodiff: function @forward_grad already exists: ascend-autodiff ran before",
        ),
    ],
)
def test_wrong_orders_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], forward_file: Path, pipeline: str, message: str
) -> None:
    code, out, err = opt(capsys, str(forward_file), "-p", pipeline)
    assert code == (2 if "runs before" in message else 1)  # a pipeline refused up front is a usage error
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ascend-opt: error: ") and message in lines[0], err
    assert "Traceback" not in err


def test_precision_before_autodiff_is_refused_in_python_too() -> None:
    with pytest.raises(AscendError, match="ascend-precision runs before ascend-autodiff"):
        order_training_passes((PrecisionPass(mode=MODE), AutodiffPass()))


# --------------------------------------------------------------------------------------
# Precision after loss-scale: the marked machinery
# --------------------------------------------------------------------------------------


def _train_module(keep_loss: bool = True):
    module = mlp((8, 6, 4)).forward_module(4, keep_loss=keep_loss)
    differentiate(module, keep_loss=keep_loss)
    LossScalePass(optimizer="momentum").apply(make_context(), module)
    return module


def _step(module) -> func.FuncOp:  # noqa: ANN001
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "train_step")


def _name(op: A.AscendOp) -> str:
    return op.node_name.data if op.node_name is not None else ""


def test_loss_scale_and_optimizer_ops_are_all_marked() -> None:
    step = _step(_train_module())
    ops = [op for op in step.walk() if isinstance(op, A.AscendOp)]
    machinery = [op for op in ops if _name(op).startswith(("loss_scale/", "optimizer/"))]
    assert {type(op) for op in machinery} >= {
        A.MulOp,
        A.RealDivOp,
        A.SelectOp,
        A.ApplyMomentumDOp,
        A.GreaterOp,
        A.NPUGetFloatStatusOp,
    }
    assert all(is_kept(op) for op in machinery)
    # the casts to fp32 before the unscale are unnamed but part of the machinery
    unscale = [op for op in machinery if isinstance(op, A.RealDivOp)]
    assert len(unscale) == 4
    # the network's own forward and backward ops are not marked
    network = [op for op in ops if _name(op).startswith(("dense_", "relu_", "gradients/dense_", "gradients/relu_"))]
    assert network and not any(is_kept(op) for op in network)


def test_loss_ops_are_marked_in_forward_and_gradient() -> None:
    module = _train_module()
    for fn in module.ops:
        assert isinstance(fn, func.FuncOp)
        by_name = {_name(op): op for op in fn.walk() if isinstance(op, A.AscendOp)}
        if fn.sym_name.data == "predict":
            assert not any(is_kept(op) for op in by_name.values())
            continue
        assert is_kept(by_name["loss/SoftmaxCrossEntropyWithLogits"]) and is_kept(by_name["loss/ReduceMean"])
        if fn.sym_name.data != "forward":
            assert is_kept(by_name["gradients/seed"])
            assert is_kept(by_name["gradients/loss/ReduceMean_grad/RealDiv"])
            assert is_kept(by_name["gradients/loss/SoftmaxCrossEntropyWithLogits_grad/Mul"])


def test_loss_fp16_override_leaves_the_loss_unmarked() -> None:
    module = _train_module(keep_loss=False)
    for fn in module.ops:
        for op in fn.walk():
            if isinstance(op, A.AscendOp) and _name(op).startswith(("loss/", "gradients/loss", "gradients/seed")):
                assert not is_kept(op), _name(op)


def test_loss_ops_of_a_hand_written_forward_are_found() -> None:
    module = parse_module(
        """
func.func @forward(%w: tensor<4x3xf32>, %x: tensor<2x4xf32>, %labels: tensor<2x3xf32>) -> tensor<f32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc"} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %l, %bp = ascend.SoftmaxCrossEntropyWithLogits %y, %labels {name = "xent"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)
  %s = ascend.ReduceSum %l {axes = array<i64: 0>, name = "sum"} : (tensor<2xf32>) -> tensor<f32>
  %h = ascend.Const dense<0.5> : tensor<f32>
  %m = ascend.Mul %s, %h {name = "half"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %m : tensor<f32>
}
""",
        "fwd.mlir",
    )
    grad = differentiate(module)
    kept = sorted(
        _name(op)
        for op in grad.walk()
        if isinstance(op, A.AscendOp) and is_kept(op) and not _name(op).startswith("gradients/")
    )
    assert kept == ["half", "sum", "xent"]


@pytest.mark.parametrize("mode", ["force_fp16", "allow_mix_precision"])
def test_precision_after_loss_scale_keeps_the_machinery_fp32(mode: str) -> None:
    module = _train_module()
    PrecisionPass(mode=mode).apply(make_context(), module)
    step = _step(module)
    for op in step.walk():
        if isinstance(op, A.AscendOp) and is_kept(op) and not isinstance(op, A.CastOp):
            dtypes = {tensor_dtype(v.type) for v in (*op.operands, *op.results)} - {"i1", "i32", None}
            assert dtypes <= {"f32"}, f"{_name(op)}: {dtypes}"


def test_loss_stays_fp32_in_the_pass_pipeline(capsys: pytest.CaptureFixture[str], forward_file: Path) -> None:
    """`-p 'ascend-autodiff,ascend-precision{mode=allow_mix_precision},ascend-loss-scale'`
    computes the loss in fp32 (no hidden keep_dtype file: the marks do it)."""
    code, out, err = opt(
        capsys, str(forward_file), "-p", f"ascend-autodiff,ascend-precision{{mode={MODE}}},ascend-loss-scale"
    )
    assert code == 0, err
    module = parse_module(out, "out.mlir")
    for fn in module.ops:
        assert isinstance(fn, func.FuncOp)
        for op in fn.walk():
            if isinstance(op, A.AscendOp) and _name(op).startswith("loss/"):
                dtypes = {tensor_dtype(v.type) for v in (*op.operands, *op.results)}
                assert dtypes == {"f32"}, f"@{fn.sym_name.data} {_name(op)}: {dtypes}"
