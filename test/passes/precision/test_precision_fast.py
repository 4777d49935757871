"""The precision pass's fast path against the slower ways to the same plan (a consistency check only: what the
decisions should be is checked against the rules by test_precision and test_policies).

The pass decides each op through a memo, retypes results as it decides them and applies the casts in one loop
(`precision_rewrite`, `AscendPrecisionPass` without a report keeps no per-op records). The same module must come
out of:

* the plan of `decide_precision` applied by `populate_precision_patterns` under xDSL's walker (another pipeline's
  driver), then the weights stored low as the pass does;
* the planner with the memo off (every op decided afresh), applied by `apply_plan`;

with the same report, on graphs with user casts, `keep_dtype` marks, keep_dtype / customize_dtypes / modify_mixlist /
to_float files, integer and bool tensors, constants, nested regions and several blocks, and on random graphs.
"""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import MODES, graphs
from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from ascend_mp.errors import AscendError
from ascend_mp.ir import make_context, print_module
from ascend_mp.passes import precision
from ascend_mp.passes.precision import (
    AscendPrecisionPass,
    PrecisionPlan,
    decide_precision,
    load_config,
    populate_precision_patterns,
    precision_rewrite,
    run_precision,
    walk,
)
from ascend_mp.passes.store_weights import store_low_weights
from benchmarks.graphs import chain_module

INPUTS = Path(__file__).parents[2] / "filecheck" / "Inputs"

GRAPH = """func.func @g(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %h: tensor<8x8xf16>, %i: tensor<8xi32>) -> (tensor<8x8xf16>, tensor<8x8xf32>, tensor<8x8xf16>, tensor<8xi32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %c = ascend.Const dense<0.5> : tensor<8x8xf32> {name = "weight"}
  %m = ascend.MatMulV2 %x, %c {name = "fc1"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %m2 = ascend.MatMulV2 %x, %w {name = "fc2"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %m3 = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %mo = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf16>
  %a = ascend.Add %m, %m2 {name = "add"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %k = ascend.Add %m3, %w {keep_dtype, list = #ascend.list<gray>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %k2 = ascend.Add %m3, %w {list = #ascend.list<gray>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = ascend.Relu %a {name = "relu"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %rg = ascend.Relu %a {list = #ascend.list<gray>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %rb = ascend.Relu %a {list = #ascend.list<black>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %rc = ascend.Relu %a {caps = #ascend.caps<(f32) -> f32>, list = #ascend.list<gray>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %u = ascend.Cast %r {name = "user"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %e = ascend.Exp %u {name = "exp"} : (tensor<8x8xf16>) -> tensor<8x8xf16>
  %q = ascend.Relu %h : (tensor<8x8xf16>) -> tensor<8x8xf16>
  %s = ascend.SoftmaxV2 %k {name = "softmax"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %l = ascend.Log %m3 {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %gt = ascend.Greater %l, %s : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xi1>
  %sel = ascend.Select %gt, %l, %s : (tensor<8x8xi1>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %am = ascend.ArgMaxV2 %sel : (tensor<8x8xf32>) -> tensor<8xi32>
  %n = ascend.Add %am, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %t = ascend.Cast %q : (tensor<8x8xf16>) -> tensor<8x8xf32>
  func.return %mo, %sel, %e, %n, %t, %r, %k2, %rb, %rc, %rg : tensor<8x8xf16>, tensor<8x8xf32>, tensor<8x8xf16>, tensor<8xi32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
"""
"""Named and unnamed ops of one type (keep_dtype and customize_dtypes name fc1, fc2), twins that differ only in a
`keep_dtype` mark, a `list` or a `caps` property or a result dtype, a constant, a user cast that becomes an identity, an fp16 chain,
integer and bool tensors."""

NESTED = """builtin.module {
  func.func @outer(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>, %p: i1) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
    %l = ascend.Log %x {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %y = scf.if %p -> (tensor<8x8xf32>) {
      %m = ascend.MatMulV2 %x, %w {name = "fc1"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %r = ascend.Relu %m : (tensor<8x8xf32>) -> tensor<8x8xf32>
      scf.yield %r : tensor<8x8xf32>
    } else {
      scf.yield %l : tensor<8x8xf32>
    }
    %n = ascend.MatMulV2 %x, %w {name = "outer"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    func.return %y, %n : tensor<8x8xf32>, tensor<8x8xf32>
  }
  builtin.module {
    func.func @blocks(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
      %m = ascend.MatMulV2 %x, %w {name = "fc2"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      cf.br ^bb1(%x : tensor<8x8xf32>)
    ^bb1(%a: tensor<8x8xf32>):
      %l = ascend.Log %m {name = "log2"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %n = ascend.MatMulV2 %a, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %s = ascend.Add %n, %l : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      func.return %l, %s : tensor<8x8xf32>, tensor<8x8xf32>
    }
  }
}
"""
"""Regions nested in an op and in a nested module; a function of two blocks."""

OPTIONS: list[dict[str, str]] = [
    *({"mode": m} for m in MODES),
    {"mode": "allow_mix_precision_bf16", "soc": "ascend910b"},
    {"mode": "allow_mix_precision", "keep_dtype": str(INPUTS / "keep_dtype.txt")},
    {"mode": "force_fp16", "keep_dtype": str(INPUTS / "keep_dtype.txt")},
    {"mode": "allow_mix_precision", "customize_dtypes": str(INPUTS / "customize_dtypes.cfg")},
    {"mode": "allow_mix_precision", "modify_mixlist": str(INPUTS / "mixlist-moves.json")},
    {"mode": "allow_mix_precision", "to_float": "fc1=fp32;relu=fp16"},
    {"policy": "tf"},
    {"policy": "torch"},
    {"policy": "mindspore", "level": "O2"},
]


def _parse(text: str) -> ModuleOp:
    ctx = make_context()
    ctx.load_dialect(scf.Scf)
    ctx.load_dialect(cf.Cf)
    module = Parser(ctx, text, "fast.mlir").parse_module()
    module.verify()
    return module


def _config(options: dict[str, str]) -> precision.PrecisionConfig:
    opts: dict[str, Any] = dict(options)
    if "amp_dtype" in opts:
        opts["amp_dtype_name"] = opts.pop("amp_dtype")
    return load_config(**opts)


def _report(plan: PrecisionPlan) -> dict[str, Any]:
    return plan.report().to_json()


def by_patterns(module: ModuleOp, options: dict[str, str], dce: bool = True) -> dict[str, Any]:
    """The plan applied by the rewrite patterns under xDSL's walker, then the weights stored as the pass does.
    The walker erases dead pure ops (the pass never does): `dce=False` for graphs with some."""
    plan = decide_precision(module, _config(options))
    patterns = GreedyRewritePatternApplier(populate_precision_patterns(plan), dce_enabled=dce)
    walker = PatternRewriteWalker(patterns, apply_recursively=False)
    walker.rewrite_module(module)
    plan.stored = store_low_weights(module, plan.inserted, plan.consts)
    return _report(plan)


@pytest.fixture
def no_memo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The planner with every ascend op decided afresh (no memo)."""
    classify = walk.Planner.classify  # pyright: ignore[reportPrivateUsage]

    def afresh(self: Any, op: Any) -> tuple[int, Any]:
        what, cls = classify(self, op)
        return (walk._ASCEND if what in (walk._FAST, walk._CONST) else what), cls  # pyright: ignore[reportPrivateUsage]

    monkeypatch.setattr(walk.Planner, "classify", afresh)  # pyright: ignore[reportPrivateUsage]
    yield


def _fast(text: str, options: dict[str, str]) -> tuple[str, dict[str, Any]] | str:
    module = _parse(text)
    try:
        plan = precision_rewrite(module, _config(options))
    except AscendError as e:
        return str(e)
    module.verify()
    return print_module(module), _report(plan)


def _slow(text: str, options: dict[str, str], how: str) -> tuple[str, dict[str, Any]] | str:
    module = _parse(text)
    try:
        if how != "afresh":
            report = by_patterns(module, options, dce=how == "patterns")
        else:
            report = _report(precision_rewrite(module, _config(options)))
    except AscendError as e:
        return str(e)
    module.verify()
    return print_module(module), report


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={Path(v).name}" for k, v in o.items()))
@pytest.mark.parametrize("text", [GRAPH, NESTED], ids=["graph", "nested"])
def test_the_patterns_give_the_pass_s_module(text: str, options: dict[str, str]) -> None:
    assert _fast(text, options) == _slow(text, options, "patterns")


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={Path(v).name}" for k, v in o.items()))
@pytest.mark.parametrize("text", [GRAPH, NESTED], ids=["graph", "nested"])
def test_deciding_every_op_afresh_gives_the_same_module(
    text: str, options: dict[str, str], request: pytest.FixtureRequest
) -> None:
    fast = _fast(text, options)
    request.getfixturevalue("no_memo")
    assert fast == _slow(text, options, "afresh")


def test_the_graphs_exercise_the_paths_compared() -> None:
    """GRAPH folds a user cast, keeps a marked op, stores a weight low; its memo is hit (ops share keys); it has no
    dead ops (the walker's dead-code elimination is on for it)."""
    module = _parse(GRAPH)
    planner = walk.Planner(_config({"mode": "allow_mix_precision"}))  # pyright: ignore[reportPrivateUsage]
    plan = planner.run(module)
    report = plan.report()
    assert report.by_name("user").reason == "user cast: identity after retyping, folded"
    assert any(d.reason == "keep_dtype (marked)" for d in report.ops)
    assert len(planner.memo) < sum(1 for d in report.ops if d.type not in ("Cast", "Const"))
    precision.apply_plan(module, plan)
    assert store_low_weights(module, plan.inserted, plan.consts).narrowed == ["weight"]
    assert all(op.results[0].uses for op in module.walk() if op.results and op.name != "func.func")


def test_the_planner_is_freed_when_its_walk_returns() -> None:
    """No reference cycle keeps a planner (and its per-value tables) alive after its walk: it is freed when the last
    reference goes, not left to the garbage collector (which would find it during whatever runs next)."""
    planner = walk.Planner(_config({"mode": "allow_mix_precision"}))  # pyright: ignore[reportPrivateUsage]
    freed = weakref.ref(planner)
    collecting = gc.isenabled()
    gc.disable()
    try:
        plan = planner.run(_parse(GRAPH))
        del planner
        assert freed() is None
    finally:
        if collecting:
            gc.enable()
    assert plan.distinct > 0


def test_the_pass_without_a_report_gives_the_same_module(tmp_path: Path) -> None:
    """Without `report` the pass keeps no per-op records; the module is the same, and so is the report it writes."""
    ctx = make_context()
    ctx.load_dialect(scf.Scf)
    ctx.load_dialect(cf.Cf)
    for text in (GRAPH, NESTED, print_module(chain_module(200))):
        plain, reported = _parse(text), _parse(text)
        AscendPrecisionPass(mode="allow_mix_precision").apply(ctx, plain)
        path = tmp_path / "r.json"
        AscendPrecisionPass(mode="allow_mix_precision", report=str(path)).apply(ctx, reported)
        assert print_module(plain) == print_module(reported)
        assert json.loads(path.read_text()) == run_precision(_parse(text), mode="allow_mix_precision").to_json()


def test_a_long_chain_through_the_patterns() -> None:
    """The benchmark's chain (every op's effect comes from the memo) through the patterns."""
    fast, slow = chain_module(400), chain_module(400)
    plan = precision_rewrite(fast, _config({"mode": "allow_mix_precision"}))
    report = by_patterns(slow, {"mode": "allow_mix_precision"})
    assert print_module(fast) == print_module(slow)
    assert _report(plan) == report


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
@given(graphs(), st.sampled_from(MODES))
def test_random_graphs_the_patterns_give_the_pass_s_module(graph: tuple[str, ModuleOp], mode: str) -> None:
    """Random graphs may hold dead ops: the walker's dead-code elimination is off."""
    soc, module = graph
    text = print_module(module)
    options = {"mode": mode, "soc": soc}
    assert _fast(text, options) == _slow(text, options, "patterns without dce")
