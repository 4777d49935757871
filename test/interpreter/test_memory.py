"""Buffer reuse in the executor (in-place steps, donated arguments) and its memory accounting;
the training step's memory-saving structure (skipped updates, rematerialized casts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ascend_mp.dialects import ascend as A
from ascend_mp.errors import AscendError
from ascend_mp.interpreter import Program
from ascend_mp.interpreter.kernels import IN_PLACE, OpSpec, make_in_place_kernel, make_kernel
from ascend_mp.ir import parse_module
from ascend_mp.passes.loss_scale import initial_state
from ascend_mp.train import TrainConfig, compile_training
from ascend_mp.train.trainer import donating_program

F32 = np.dtype(np.float32)


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def bits(arrays: list[np.ndarray]) -> list[bytes]:
    return [a.tobytes() for a in arrays]


# --------------------------------------------------------------------------------------
# In-place kernels: the functional kernel's numbers, written into the operand
# --------------------------------------------------------------------------------------

MOMENTUM = ((3, 4), (3, 4), (), (3, 4), ())
ADAM = ((3, 4), (3, 4), (3, 4), (), (), (), (), (), (), (3, 4))
CASES: list[tuple[str, tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...], dict[str, Any]]] = [
    ("ApplyGradientDescent", ((3, 4), (), (3, 4)), ((3, 4),), {}),
    ("ApplyMomentumD", MOMENTUM, ((3, 4), (3, 4)), {"use_nesterov": False}),
    ("ApplyMomentumD", MOMENTUM, ((3, 4), (3, 4)), {"use_nesterov": True}),
    ("ApplyAdamD", ADAM, ((3, 4),) * 3, {"use_nesterov": False}),
    ("ApplyAdamD", ADAM, ((3, 4),) * 3, {"use_nesterov": True}),
    ("SelectV2", ((), (), (3, 4)), ((3, 4),), {}),
    ("SelectV2", ((3, 4), (4,), (3, 4)), ((3, 4),), {}),
    ("Add", ((3, 4), (4,)), ((3, 4),), {}),
    ("Sub", ((3, 4), ()), ((3, 4),), {}),
    ("Mul", ((3, 4), (3, 4)), ((3, 4),), {}),
    ("RealDiv", ((3, 4), ()), ((3, 4),), {}),
]


def _operands(op_type: str, shapes: tuple[tuple[int, ...], ...], seed: int) -> list[np.ndarray]:
    r = np.random.default_rng(seed)
    out = [r.standard_normal(s).astype(F32) for s in shapes]
    if op_type == "ApplyAdamD":  # v >= 0, beta powers and betas in (0, 1)
        out[2] = np.abs(out[2])
        out[3:9] = [np.array(v, F32) for v in (0.9**3, 0.999**3, 0.01, 0.9, 0.999, 1e-8)]
    if op_type == "ApplyMomentumD":
        out[2], out[4] = np.array(0.05, F32), np.array(0.9, F32)
    if op_type == "SelectV2":  # one flag (true for seed 0, false for 1), or a mask
        out[0] = np.array(seed % 2 == 0) if shapes[0] == () else r.standard_normal(shapes[0]) > 0
    return out


@pytest.mark.parametrize(("op_type", "ins", "outs", "attrs"), CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_in_place_kernel_matches_functional_and_writes_its_operand(
    op_type: str, ins: tuple[tuple[int, ...], ...], outs: tuple[tuple[int, ...], ...], attrs: dict[str, Any], seed: int
) -> None:
    in_dtypes = tuple(np.dtype(np.bool_) if op_type == "SelectV2" and i == 0 else F32 for i in range(len(ins)))
    spec = OpSpec(op_type, in_dtypes, (F32,) * len(outs), ins, outs, attrs)
    built = make_in_place_kernel(spec)
    assert built is not None
    targets, in_place = built
    assert targets == IN_PLACE[op_type][0]
    operands = _operands(op_type, ins, seed)
    with np.errstate(all="ignore"):
        want = make_kernel(spec)(*[a.copy() for a in operands])
        mine = [a.copy() for a in operands]
        got = in_place(*mine)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g, j in zip(want, got, targets, strict=True):
        assert g is mine[j]  # written into the operand, no new array
        assert g.tobytes() == np.asarray(w, F32).tobytes()


def test_momentum_in_place_against_numpy_float64() -> None:
    var, accum, grad = rand(5, 6), rand(5, 6, seed=1), rand(5, 6, seed=2)
    spec = OpSpec("ApplyMomentumD", (F32,) * 5, (F32, F32), ((5, 6), (5, 6), (), (5, 6), ()), ((5, 6), (5, 6)), {})
    built = make_in_place_kernel(spec)
    assert built is not None
    want_accum = accum.astype(np.float64) * np.float32(0.9) + grad
    want_var = var.astype(np.float64) - np.float32(0.05) * want_accum
    new_var, new_accum = built[1](var, accum, np.array(0.05, F32), grad, np.array(0.9, F32))
    np.testing.assert_allclose(new_accum, want_accum, rtol=1e-6)
    np.testing.assert_allclose(new_var, want_var, rtol=1e-6, atol=1e-7)


def test_no_in_place_variant_for_rounded_or_mismatched_operands() -> None:
    f16 = np.dtype(np.float16)
    carried = OpSpec("Add", (f16, f16), (f16,), ((4,), (4,)), ((4,),), {}, carry_f16=True)  # rounds its result
    assert make_in_place_kernel(carried) is None
    broadcast_first = OpSpec("Add", (F32, F32), (F32,), ((4,), (3, 4)), ((3, 4),), {})  # operand 0 is smaller
    assert make_in_place_kernel(broadcast_first) is None
    assert make_in_place_kernel(OpSpec("Relu", (F32,), (F32,), ((4,),), ((4,),), {})) is None


# --------------------------------------------------------------------------------------
# Planning and accounting
# --------------------------------------------------------------------------------------

SGD = """
func.func @step(%w: tensor<64x32xf32>, %x: tensor<16x64xf32>, %lr: tensor<f32>) -> tensor<64x32xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %g = ascend.MatMulV2 %x, %y {transpose_x1 = true} : (tensor<16x64xf32>, tensor<16x32xf32>) -> tensor<64x32xf32>
  %s = ascend.Mul %g, %lr : (tensor<64x32xf32>, tensor<f32>) -> tensor<64x32xf32>
  %w1 = ascend.ApplyGradientDescent %w, %lr, %s : (tensor<64x32xf32>, tensor<f32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  func.return %w1 : tensor<64x32xf32>
}
"""


def _sgd_reference(w: np.ndarray, x: np.ndarray, lr: np.ndarray) -> np.ndarray:
    w64, x64, lr64 = (a.astype(np.float64) for a in (w, x, lr))
    return w64 - lr64 * (lr64 * (x64.T @ (x64 @ w64)))


@pytest.mark.parametrize("donate", [False, True])
def test_accounting_follows_in_place_steps(donate: bool) -> None:
    prog = Program.from_module(parse_module(SGD, "t.mlir"), donate={"step": [0]} if donate else None)
    w, x, lr = rand(64, 32), rand(16, 64, seed=1), np.array(0.01, F32)
    w_in = w.copy()
    (out,) = prog.run("step", w_in, x, lr, track_memory=True)
    np.testing.assert_allclose(out, _sgd_reference(w, x, lr), rtol=1e-5, atol=1e-6)
    y, g = 16 * 32 * 4, 64 * 32 * 4
    # %s overwrites %g (Mul in place, %g dies there): the peak is %y and %g during the second MatMul;
    # the update writes into the donated %w, else into a new buffer (while %s is still live)
    assert prog.peak_activation_bytes == (y + g if donate else 2 * g)
    assert (out is w_in) == donate
    if not donate:
        assert w_in.tobytes() == w.tobytes()  # not donated: the caller's array is untouched


def test_donated_read_only_or_repeated_arguments_are_copied() -> None:
    prog = Program.from_module(parse_module(SGD, "t.mlir"), donate={"step": [0]})
    w, x, lr = rand(64, 32), rand(16, 64, seed=1), np.array(0.01, F32)
    frozen = w.copy()
    frozen.setflags(write=False)
    (out,) = prog.run("step", frozen, x, lr)
    assert out is not frozen and frozen.tobytes() == w.tobytes()
    view = np.concatenate([w, w])[:64]
    before = view.base.tobytes()
    prog.run("step", view, x, lr)
    assert view.base.tobytes() == before


def test_an_operand_aliased_by_a_live_cast_is_not_overwritten() -> None:
    # %c is %h's array inside the executor (a float16 value held in float32 needs no conversion), and
    # %h is used after %d: RealDiv must not write into %c although %c's buffer dies there
    text = """
    func.func @f(%x: tensor<8x8xf32>, %s: tensor<f32>) -> (tensor<8x8xf32>, tensor<8x8xf16>) {
      %h = ascend.Cast %x : (tensor<8x8xf32>) -> tensor<8x8xf16>
      %c = ascend.Cast %h : (tensor<8x8xf16>) -> tensor<8x8xf32>
      %d = ascend.RealDiv %c, %s : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
      %n = ascend.Neg %h : (tensor<8x8xf16>) -> tensor<8x8xf16>
      func.return %d, %n : tensor<8x8xf32>, tensor<8x8xf16>
    }"""
    x = rand(8, 8)
    d, n = Program.from_module(parse_module(text, "t.mlir")).run("f", x, np.array(4.0, F32))
    h = x.astype(np.float16)
    assert d.tobytes() == (h.astype(np.float64) / 4).astype(F32).tobytes()
    assert n.tobytes() == (-h).tobytes()


# --------------------------------------------------------------------------------------
# The training step
# --------------------------------------------------------------------------------------


def _step_inputs(compiled: Any, seed: int, huge: bool = False) -> tuple[list[np.ndarray], list[np.ndarray]]:
    state = initial_state(compiled.step_fn, compiled.model.init_params(seed))
    specs = compiled.program.signature("train_step")[0]
    n = len(state.args())
    r = np.random.default_rng(seed)
    x = r.standard_normal(specs[n].shape).astype(F32) * (np.float32(6e4) if huge else np.float32(1))
    labels = np.eye(10, dtype=F32)[r.integers(0, 10, specs[n].shape[0])]
    return state.args(), [x, labels, state.loss_scale, state.good_steps, state.step]


@pytest.mark.parametrize(
    ("model", "optimizer"), [("mlp", "momentum"), ("mlp", "adam"), ("mlp", "sgd"), ("cnn", "momentum")]
)
def test_donated_steps_match_undonated_ones(model: str, optimizer: str) -> None:
    compiled = compile_training(
        TrainConfig(model=model, batch=16, optimizer=optimizer, precision_mode="allow_mix_precision")
    )
    donating = donating_program(compiled)
    state, rest = _step_inputs(compiled, 0)
    mine = [a.copy() for a in state]
    for _ in range(3):
        want = compiled.program.run("train_step", *state, *rest)
        got = donating.run("train_step", *mine, *rest)
        assert bits(got) == bits(want)
        assert all(g is m for g, m in zip(got[: len(mine)], mine) if m.ndim)  # the state was updated in place
        n = len(state)
        state, mine = want[:n], got[:n]
        rest = [*rest[:2], *want[n + 1 : n + 4]]


def test_donated_overflow_step_keeps_the_state() -> None:
    compiled = compile_training(
        TrainConfig(model="mlp", batch=16, optimizer="momentum", precision_mode="allow_mix_precision")
    )
    state, rest = _step_inputs(compiled, 0)
    donating = donating_program(compiled)
    state = donating.run("train_step", *state, *rest)[: len(state)]  # a clean step: nonzero accumulators
    before = bits(state)
    _, huge = _step_inputs(compiled, 1, huge=True)
    results = donating.run("train_step", *state, *huge[:2], *rest[2:])
    assert bool(results[-1])  # overflow
    assert bits(results[: len(state)]) == before


def test_trace_of_a_step_with_in_place_ops_shows_each_result_as_computed() -> None:
    compiled = compile_training(
        TrainConfig(model="mlp", batch=8, optimizer="momentum", precision_mode="allow_mix_precision")
    )
    state, rest = _step_inputs(compiled, 0)
    _, want = compiled.program.trace("train_step", *[a.copy() for a in state], *rest)
    _, got = donating_program(compiled).trace("train_step", *state, *rest)
    assert any(compiled.program.function("train_step").overwritten)
    assert [bits(list(s)) for s in got] == [bits(list(s)) for s in want]


def test_argument_casts_are_rematerialized_before_each_use() -> None:
    compiled = compile_training(TrainConfig(model="mlp", batch=16, precision_mode="allow_mix_precision"))
    block = compiled.step_fn.body.blocks[0]
    args = set(block.args)
    ops = list(block.ops)
    casts = [op for op in ops if isinstance(op, A.CastOp) and op.operands[0] in args]
    by_source: dict[Any, int] = {}
    for op in casts:
        users = {u.operation for u in op.results[0].uses}
        assert len(users) == 1  # each copy serves one op...
        assert ops.index(next(iter(users))) - ops.index(op) <= 2  # ...right after it is made
        by_source[op.operands[0]] = by_source.get(op.operands[0], 0) + 1
    assert max(by_source.values()) == 2  # x and the second layer's weight: forward and backward


def test_a_function_other_functions_call_cannot_donate() -> None:
    text = """
    func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
      func.return %y : tensor<4xf32>
    }
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
      %z = ascend.Add %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      func.return %z : tensor<4xf32>
    }"""
    with pytest.raises(AscendError, match=r"call to @g, whose arguments are donated"):
        Program.from_module(parse_module(text, "t.mlir"), donate={"g": [0]})
    assert Program.from_module(parse_module(text, "t.mlir"), donate={"f": [0]}).run("f", rand(4))[0].shape == (4,)


def test_a_result_that_may_be_an_operand_is_not_overwritten() -> None:
    # inference BatchNorm returns its mean and variance operands as results 1 and 2: Mul must
    # not write into %bv, which is %v's array, and %v is returned
    text = """
    func.func @f(%x: tensor<2x3x2x2xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>)
        -> (tensor<3xf32>, tensor<3xf32>) {
      %y, %bm, %bv = ascend.BatchNorm %x, %s, %o, %m, %v {epsilon = 1.0e-05 : f32, is_training = false}
        : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>)
      %d = ascend.Mul %bv, %s : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      func.return %d, %v : tensor<3xf32>, tensor<3xf32>
    }"""
    v = np.abs(rand(3, seed=4)) + np.float32(0.5)
    args = [rand(2, 3, 2, 2), rand(3, seed=1), rand(3, seed=2), rand(3, seed=3), v]
    prog = Program.from_module(parse_module(text, "t.mlir"), donate={"f": [4]})
    d, v_out = prog.run("f", *[a.copy() for a in args])
    assert v_out.tobytes() == v.tobytes()
    assert d.tobytes() == (v * args[1]).tobytes()
