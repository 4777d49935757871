"""The ascend-precision pass (docs/design.md §5): the casts the plan inserts, where, and their folding; populate_precision_patterns (passes/precision/rewrite.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from precision_util import (
    IDENTITY_CASTS,
    IDENTITY_RUNS,
    MLP,
    _unfolded,
    assert_dominance,
    assert_right_before_first_consumer,
    casts,
    dtypes,
    named,
    parse,
    parse_with_control_flow,
    run,
)
from xdsl.dialects import scf
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from ascend_mp.dialects.ascend import CastOp
from ascend_mp.interpreter import Program
from ascend_mp.ir import print_module
from ascend_mp.passes.precision import (
    apply_plan,
    decide_precision,
    load_config,
    populate_precision_patterns,
    run_precision,
)


def test_one_cast_per_value_and_dtype_and_exact_folding() -> None:
    text = """func.func @c(%h: tensor<8x8xf16>, %x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf16>) {
  %up = ascend.Cast %h {name = "up"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %a = ascend.MatMulV2 %up, %x {name = "a"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = ascend.MatMulV2 %x, %up {name = "b"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %down = ascend.Cast %x {name = "down"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %back = ascend.Cast %down {name = "back"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %c = ascend.Log %back {name = "c"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %a, %b, %c, %down : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf16>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    a, b = named(module, "a"), named(module, "b")
    h = module.body.block.first_op.body.block.args[0]  # pyright: ignore[reportAttributeAccessIssue]
    assert a.operands[0] is h and b.operands[1] is h  # f16 -> f32 -> f16 folded
    assert a.operands[1] is b.operands[0]  # one cast of %x to f16, shared
    # f32 -> f16 -> f32 is never folded: Log (black) reads the user's round trip.
    assert named(module, "c").operands[0] is named(module, "back").results[0]
    # User casts are all kept.
    assert {op.properties["name"].data for op in casts(module) if "name" in op.properties} == {"up", "down", "back"}  # pyright: ignore[reportAttributeAccessIssue]
    assert report.casts_folded == 1  # one (value, dtype) pair folded, for both consumers
    assert report.casts_inserted == len(casts(module)) - 3


def test_user_cast_before_a_consumer_is_reused() -> None:
    text = """func.func @r(%x: tensor<8x8xf32>) -> (tensor<8x8xf16>, tensor<8x8xf32>) {
  %d = ascend.Cast %x {name = "mine"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %m = ascend.MatMulV2 %x, %x {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %d, %m : tensor<8x8xf16>, tensor<8x8xf32>
}
"""
    module, report = run(text, mode="allow_mix_precision")
    mine = named(module, "mine")
    assert named(module, "mm").operands[0] is mine.results[0]
    assert report.casts_inserted == 1  # only the cast of the result back to fp32


@pytest.mark.parametrize(("low", "options"), IDENTITY_RUNS, ids=["f16", "bf16"])
def test_a_user_cast_made_an_identity_by_retyping_is_folded(low: str, options: dict[str, str]) -> None:
    """f16 -> f32 -> f16 (bf16 -> f32 -> bf16) vanishes (docs/design.md §5): no cast of MatMulV2's result back to f32
    is inserted for the user's cast, which is erased; its consumers read MatMulV2 directly."""
    module, report = run(IDENTITY_CASTS.replace("LOW", low), **options)
    mm, relu, log = named(module, "mm"), named(module, "relu"), named(module, "log")
    assert dtypes(mm)[1] == (low,)
    assert relu.operands[0] is mm.results[0]
    ret = module.body.block.first_op.body.block.last_op  # pyright: ignore[reportAttributeAccessIssue]
    assert ret.operands[0] is relu.results[0]  # pyright: ignore[reportOptionalMemberAccess]
    assert "user" not in {op.properties["name"].data for op in casts(module) if "name" in op.properties}  # pyright: ignore[reportAttributeAccessIssue]
    # The only cast of MatMulV2's result is the one Log (black, fp32) needs.
    of_mm = [c for c in casts(module) if c.x is mm.results[0]]
    assert of_mm == [log.operands[0].owner] and dtypes(of_mm[0])[1] == ("f32",)
    # f32 -> f16 -> f32 with the input still f32: both user casts kept, the round trip read as written.
    kept, trip = named(module, "kept"), named(module, "trip")
    assert kept.x is log.results[0] and trip.x is kept.results[0] and ret.operands[3] is trip.results[0]  # pyright: ignore[reportOptionalMemberAccess]
    # One report entry per input op; the folded cast says why.
    assert [d.name for d in report.ops] == ["mm", "user", "relu", "log", "kept", "trip"]
    assert report.by_name("user").reason == "user cast: identity after retyping, folded"
    assert report.by_name("relu").chosen.outputs == (low,)
    assert report.casts_folded == 1
    assert report.casts_inserted == len(casts(module)) - 2 == 3  # x, w down; MatMulV2's result up for Log


def test_a_bf16_value_into_a_users_f32_to_f16_cast_still_goes_through_f32() -> None:
    """bf16 -> f32 -> f16 is not exact: the user's cast is kept, fed by an inserted bf16 -> f32 cast."""
    module, report = run(IDENTITY_CASTS.replace("LOW", "f16"), mode="allow_mix_precision_bf16", soc="ascend910b")
    mm, user = named(module, "mm"), named(module, "user")
    assert dtypes(mm)[1] == ("bf16",)
    up = user.x.owner
    assert isinstance(up, CastOp) and up.x is mm.results[0] and dtypes(up) == (("bf16",), ("f32",))
    assert dtypes(user) == (("f32",), ("f16",)) and named(module, "relu").operands[0] is user.results[0]
    assert report.by_name("user").reason == "user cast" and report.casts_folded == 0


def test_a_user_cast_whose_input_stays_fp32_is_kept() -> None:
    module, report = run(IDENTITY_CASTS.replace("LOW", "f16"), mode="force_fp32")
    mm, user = named(module, "mm"), named(module, "user")
    assert dtypes(mm)[1] == ("f32",) and user.x is mm.results[0]
    up = named(module, "relu").operands[0].owner  # force_fp32 runs Relu in fp32: the user's f16 result is cast up
    assert isinstance(up, CastOp) and up.x is user.results[0]
    assert report.by_name("user").reason == "user cast" and report.casts_folded == 0


@pytest.mark.parametrize(("low", "options"), IDENTITY_RUNS, ids=["f16", "bf16"])
def test_the_rewrite_patterns_fold_an_identity_cast_too(low: str, options: dict[str, str]) -> None:
    """Under xDSL's walker (another pipeline's driver) the patterns erase the identity cast as apply_plan does."""
    text = IDENTITY_CASTS.replace("LOW", low)
    walked = parse(text)
    plan = decide_precision(walked, load_config(**options))  # pyright: ignore[reportArgumentType]
    PatternRewriteWalker(
        GreedyRewritePatternApplier(populate_precision_patterns(plan)), apply_recursively=False
    ).rewrite_module(walked)
    walked.verify()
    looped, _ = run(text, **options)
    assert "user" not in print_module(walked)
    assert print_module(walked) == print_module(looped)


@pytest.mark.parametrize(("low", "options"), IDENTITY_RUNS, ids=["f16", "bf16"])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from((1.0, 300.0, 1e5)))
def test_folding_an_identity_cast_changes_no_bit(low: str, options: dict[str, str], seed: int, scale: float) -> None:
    """The interpreter's outputs with the fold are bit-identical to the unfolded IR's (which has the round trip
    MatMulV2 -> f32 -> user's cast), on random inputs, overflowing ones included."""
    text = IDENTITY_CASTS.replace("LOW", low)
    folded, _ = run(text, **options)
    unfolded = _unfolded(text, **options)
    assert named(unfolded, "user").x.owner is not named(unfolded, "mm")  # the round trip is there
    rng = np.random.default_rng(seed)
    inputs = [(rng.standard_normal((8, 8)) * scale).astype(np.float32) for _ in range(2)]
    want = Program.from_module(unfolded).run("g", *inputs)
    got = Program.from_module(folded).run("g", *inputs)
    assert len(want) == len(got) == 4
    for a, b in zip(want, got):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_inserted_casts_have_no_name_or_marker() -> None:
    module, _ = run(MLP, mode="allow_mix_precision")
    for cast in casts(module):
        assert set(cast.properties) | set(cast.attributes) == set()


def test_casts_sit_right_before_their_first_consumer() -> None:
    """Arguments are not cast at the top: each cast is made where it is first needed, so the fp16 copy
    does not live before that and the fp32 value it was made from can die sooner."""
    module, report = run(MLP, mode="allow_mix_precision")
    body = list(module.body.block.first_op.body.block.ops)  # pyright: ignore[reportAttributeAccessIssue]
    inserted = [op for op in body if isinstance(op, CastOp)]
    assert report.casts_inserted == len(inserted) == 4  # x, w, b to fp16; Relu's fp16 result to fp32 for the black Log
    assert_right_before_first_consumer(inserted, set(inserted))
    fc1, bias, log = named(module, "fc1"), named(module, "bias1"), named(module, "log")
    assert body.index(bias) - body.index(fc1) == 2  # the cast of %b waits for BiasAdd
    assert body.index(log) - body.index(bias) == 3  # Relu, its fp32 copy, Log


def test_fp16_to_bf16_goes_through_fp32_right_before_its_consumer() -> None:
    text = """func.func @chain(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %h = ascend.MatMul %x, %w {caps = #ascend.caps<(f16, f16, f16) -> f16>, name = "h"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = ascend.Log %x {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %n = ascend.MatMulV2 %h, %w {name = "n"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %e, %n : tensor<8x8xf32>, tensor<8x8xf32>
}
"""
    module, _ = run(text, mode="allow_mix_precision_bf16", soc="ascend910b")
    n = named(module, "n")
    to_f32, to_bf16, w_bf16 = n.prev_op.prev_op.prev_op, n.prev_op.prev_op, n.prev_op  # pyright: ignore[reportOptionalMemberAccess]
    assert isinstance(to_f32, CastOp) and to_f32.x is named(module, "h").results[0] and dtypes(to_f32)[1] == ("f32",)
    assert isinstance(to_bf16, CastOp) and to_bf16.x is to_f32.y and n.operands[0] is to_bf16.y
    assert isinstance(w_bf16, CastOp) and n.operands[1] is w_bf16.y
    assert to_f32.prev_op is named(module, "log")


def test_fp16_to_bf16_through_a_user_cast_shares_the_second_step() -> None:
    """bf16 -> f16 goes through fp32, here the user's own bf16 -> f32 cast; the f32 -> f16 step is then
    the one cast of that value to fp16, shared with a consumer of the user cast (found by fuzzing)."""
    text = """func.func @via(%x: tensor<1x4x4x4xf32>, %k: tensor<4x4x1x1xbf16>, %k2: tensor<4x4x1x1xf32>) -> (tensor<1x4x4x4xbf16>, tensor<1x4x4x4xf32>) {
  %b = ascend.Cast %x {name = "down"} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xbf16>
  %f = ascend.Cast %b {name = "up"} : (tensor<1x4x4x4xbf16>) -> tensor<1x4x4x4xf32>
  %c = ascend.Conv2D %b, %k {strides = array<i64: 1, 1, 1, 1>, name = "c"} : (tensor<1x4x4x4xbf16>, tensor<4x4x1x1xbf16>) -> tensor<1x4x4x4xbf16>
  %d = ascend.Conv2D %f, %k2 {strides = array<i64: 1, 1, 1, 1>, name = "d"} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  func.return %c, %d : tensor<1x4x4x4xbf16>, tensor<1x4x4x4xf32>
}
"""
    module, _ = run(text, mode="force_fp32", soc="ascend910b")
    c, d, up = named(module, "c"), named(module, "d"), named(module, "up")
    assert dtypes(c)[0][0] == dtypes(d)[0][0] == "f16"
    assert c.operands[0] is d.operands[0]
    assert [op for op in casts(module) if op.x is up.results[0]] == [c.operands[0].owner]


def test_a_consumer_in_a_nested_region_gets_the_cast_before_the_op_holding_it() -> None:
    text = """func.func @nested(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %p: i1) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %l = ascend.Log %x {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = scf.if %p -> (tensor<8x8xf32>) {
    %m = ascend.MatMulV2 %x, %w {name = "inner"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    scf.yield %m : tensor<8x8xf32>
  } else {
    scf.yield %l : tensor<8x8xf32>
  }
  %n = ascend.MatMulV2 %x, %w {name = "outer"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %y, %n : tensor<8x8xf32>, tensor<8x8xf32>
}
"""
    module = parse_with_control_flow(text)
    report = run_precision(module, mode="allow_mix_precision")
    module.verify()
    assert_dominance(module)
    inner, outer = named(module, "inner"), named(module, "outer")
    if_op = next(op for op in module.walk() if isinstance(op, scf.IfOp))
    # One cast per argument, made in the function body right before scf.if, shared with the later MatMulV2.
    assert inner.operands[0] is outer.operands[0] and inner.operands[1] is outer.operands[1]
    assert [op.y for op in (if_op.prev_op.prev_op, if_op.prev_op)] == list(inner.operands)  # pyright: ignore[reportOptionalMemberAccess, reportAttributeAccessIssue]
    # The fp16 result goes back to fp32 inside the region, right before scf.yield.
    yield_ = inner.next_op.next_op  # pyright: ignore[reportOptionalMemberAccess]
    assert (
        isinstance(inner.next_op, CastOp) and isinstance(yield_, scf.YieldOp) and yield_.operands[0] is inner.next_op.y
    )
    assert report.casts_inserted == 4
    once = print_module(module)
    run_precision(module, mode="allow_mix_precision")
    assert print_module(module) == once


def test_a_consumer_in_another_block_gets_the_cast_right_after_the_definition() -> None:
    text = """func.func @blocks(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %v: tensor<8x8xf32>, %u: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = ascend.Exp %x {name = "exp"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  cf.br ^bb1(%x : tensor<8x8xf32>)
^bb1(%a: tensor<8x8xf32>):
  %l = ascend.Log %m {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %n = ascend.MatMulV2 %a, %w {name = "mm2"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %q = ascend.MatMulV2 %v, %u {name = "mm3"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.Add %n, %q {name = "add"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %l, %s, %e : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
"""
    module = parse_with_control_flow(text)
    run_precision(module, mode="allow_mix_precision")
    module.verify()
    assert_dominance(module)
    entry, bb1 = module.body.block.first_op.body.blocks  # pyright: ignore[reportAttributeAccessIssue]
    mm, log, mm2, mm3 = (named(module, n) for n in ("mm", "log", "mm2", "mm3"))
    # Arguments first used in ^bb1: cast at the start of the entry block, in consumer order.
    first, second = entry.first_op, entry.first_op.next_op
    assert [first.operands[0], second.operands[0]] == [entry.args[2], entry.args[3]]
    assert list(mm3.operands) == [first.results[0], second.results[0]]
    # A result first used in ^bb1: cast right after its definition.
    assert isinstance(mm.next_op, CastOp) and log.operands[0] is mm.next_op.y
    # A block argument used in its own block: cast right before the consumer; %w's cast is shared.
    assert isinstance(mm2.prev_op, CastOp) and mm2.prev_op.x is bb1.args[0] and mm2.operands[1] is mm.operands[1]
    once = print_module(module)
    run_precision(module, mode="allow_mix_precision")
    assert print_module(module) == once


def test_populate_patterns_apply_a_plan() -> None:
    a, b = parse(MLP), parse(MLP)
    config = load_config(mode="allow_mix_precision")
    plan = decide_precision(a, config)
    assert len(populate_precision_patterns(plan)) == 2
    apply_plan(a, plan)
    run_precision(b, mode="allow_mix_precision")
    assert print_module(a) == print_module(b)
