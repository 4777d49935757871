"""Precision rules as data (ascend_mp.policies): every CANN mode and framework policy on random graphs.

Properties, per mode and policy: the output verifies, integer and bool tensors are untouched, the
function signature is kept, ops marked `keep_dtype` keep their dtype, and a second run changes
nothing (issue 14 item 6: an op whose original dtype had no kernel moved again on the second run).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func

from ascend_mp.dialects.ascend import AscendOp, CastOp
from ascend_mp.dtypes import tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.ir import parse_module, print_module
from ascend_mp.modes import V1_MODES
from ascend_mp.passes.precision import load_config, run_precision
from ascend_mp.policies import CANN_MODES, POLICIES, Rule

POLICY_RUNS: list[dict[str, str]] = [
    *({"mode": m} for m in V1_MODES),
    {"policy": "tf"},
    {"policy": "tf", "amp_dtype": "bf16"},
    *({"policy": "mindspore", "level": lv} for lv in ("O0", "O1", "O2", "O3")),
    {"policy": "torch"},
    {"policy": "torch", "amp_dtype": "bf16"},
]

COLUMNS = ("f16", "f32", "bf16", "aicpu f32")


def _caps(draw: st.DrawFn, arity: int) -> str:
    cols = draw(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=4, unique=True))
    sigs = []
    for c in cols:
        engine, _, d = c.rpartition(" ")
        sigs.append(f"{engine + ' ' if engine else ''}({', '.join([d] * arity)}) -> {d}")
    return "#ascend.caps<" + ", ".join(sigs) + ">"


@st.composite
def marked_graphs(draw: st.DrawFn) -> str:
    """A chain of float ops with random kernels (caps), list kinds, `keep_dtype` marks and dtypes, plus
    integer and bool tensors (ArgMaxV2, Greater/Select, OneHot with int indices and float values)."""
    dts = draw(st.lists(st.sampled_from(("f16", "f32", "bf16")), min_size=1, max_size=3))
    args = [f"%a{i}: tensor<4x4x{d}>" for i, d in enumerate(dts)]
    args.append("%idx: tensor<4xi32>")
    lines: list[str] = []
    pool = [(f"%a{i}", d) for i, d in enumerate(dts)]
    outs: list[tuple[str, str]] = []
    for n in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(("unary", "binary", "argmax", "select", "onehot", "cast")))
        x, d = draw(st.sampled_from(pool))
        t = f"tensor<4x4x{d}>"
        attrs = []
        if draw(st.booleans()):
            attrs.append(f"caps = {_caps(draw, 2 if kind == 'binary' else 1)}")
        if draw(st.booleans()):
            attrs.append(f"list = #ascend.list<{draw(st.sampled_from(('white', 'black', 'gray')))}>")
        if draw(st.integers(0, 4)) == 0:
            attrs.append("keep_dtype")
        attrs.append(f'name = "op{n}"')
        attr = "{" + ", ".join(attrs) + "}"
        name = f"%v{n}"
        if kind == "unary":
            op = draw(st.sampled_from(("Relu", "Exp", "Log", "Tanh", "Sqrt", "Sigmoid")))
            lines.append(f"{name} = ascend.{op} {x} {attr} : ({t}) -> {t}")
            pool.append((name, d))
        elif kind == "binary":
            y = draw(st.sampled_from([v for v, e in pool if e == d]))
            op = draw(st.sampled_from(("Add", "Mul", "Sub", "Maximum")))
            lines.append(f"{name} = ascend.{op} {x}, {y} {attr} : ({t}, {t}) -> {t}")
            pool.append((name, d))
        elif kind == "argmax":
            lines.append(f'{name} = ascend.ArgMaxV2 {x} {{name = "op{n}"}} : ({t}) -> tensor<4xi32>')
            outs.append((name, "tensor<4xi32>"))
        elif kind == "select":
            lines.append(f'{name}c = ascend.Greater {x}, {x} {{name = "op{n}c"}} : ({t}, {t}) -> tensor<4x4xi1>')
            lines.append(
                f'{name} = ascend.Select {name}c, {x}, {x} {{name = "op{n}"}} : (tensor<4x4xi1>, {t}, {t}) -> {t}'
            )
            pool.append((name, d))
        elif kind == "onehot":
            s = f"tensor<{d}>"
            lines.append(f'{name}s = ascend.ReduceMax {x} {{axes = array<i64: 0, 1>, name = "op{n}s"}} : ({t}) -> {s}')
            lines.append(
                f'{name} = ascend.OneHot %idx, {name}s, {name}s {{depth = 4 : i64, name = "op{n}"}} : '
                f"(tensor<4xi32>, {s}, {s}) -> tensor<4x4x{d}>"
            )
            pool.append((name, d))
        else:
            e = draw(st.sampled_from(("f16", "f32", "bf16")))
            lines.append(f"{name} = ascend.Cast {x} : ({t}) -> tensor<4x4x{e}>")
            pool.append((name, e))
    outs.append(pool[-1] if pool[-1][0].startswith("%v") else pool[0])
    outs = [(v, t if t.startswith("tensor") else f"tensor<4x4x{t}>") for v, t in outs]
    body = "\n  ".join(lines)
    results = ", ".join(t for _, t in outs)
    return (
        f"func.func @g({', '.join(args)}) -> ({results}) {{\n  {body}\n"
        f"  func.return {', '.join(v for v, _ in outs)} : {results}\n}}\n"
    )


def _ints(module: object) -> list[tuple[str, str]]:
    """(op name, type) of every integer or bool operand and result of the named ascend ops."""
    found = []
    for op in module.walk():  # type: ignore[attr-defined]
        if isinstance(op, AscendOp) and op.node_name is not None:
            for v in (*op.operands, *op.results):
                d = tensor_dtype(v.type)
                if d is not None and d[0] in "iu":
                    found.append((op.node_name.data, str(v.type)))
    return found


def _marked(module: object) -> dict[str, str]:
    return {
        op.node_name.data: str([*(v.type for v in op.operands), *(r.type for r in op.results)])
        for op in module.walk()  # type: ignore[attr-defined]
        if isinstance(op, AscendOp) and op.keep_dtype is not None and op.node_name is not None
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=marked_graphs(), run=st.sampled_from(POLICY_RUNS), soc=st.sampled_from(("ascend910", "ascend910b")))
def test_every_rule_verifies_keeps_ints_marks_signature_and_is_idempotent(
    text: str, run: dict[str, str], soc: str
) -> None:
    module = parse_module(text)
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    signature, ints, marked = fn.function_type, _ints(module), _marked(module)
    try:
        report = run_precision(module, soc=soc, **run)  # type: ignore[arg-type]
    except AscendError as e:
        assert run.get("mode") == "must_keep_origin_dtype", str(e)
        return
    module.verify()
    assert fn.function_type == signature
    assert _ints(module) == ints, "an integer or bool tensor changed"
    after = _marked(module)
    for name in marked:  # kept, or the report says why it could not be (no kernel for the dtype)
        d = report.by_name(name)
        if run.get("mode") == "must_keep_origin_dtype":  # the mode keeps every op it has a kernel for
            no_kernel = d.reason.startswith("no ") or (d.engine == "aicpu" and d.reason == "aicpu fallback")
            assert after[name] == marked[name] or no_kernel, (name, d.reason)
        elif after[name] != marked[name]:
            assert d.reason.startswith("keep_dtype (marked): "), (name, d.reason)
        else:
            assert d.reason.startswith("keep_dtype (marked)"), (name, d.reason)
    once = print_module(module)
    run_precision(module, soc=soc, **run)  # type: ignore[arg-type]
    assert print_module(module) == once, f"not idempotent under {run}"


NO_ORIGINAL_KERNEL = """func.func @g(%x: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  %y = ascend.Relu %x {caps = #ascend.caps<(f16) -> f16, aicpu (f32) -> f32>, list = #ascend.list<white>} : (tensor<4x4xbf16>) -> tensor<4x4xbf16>
  func.return %y : tensor<4x4xbf16>
}
"""


@pytest.mark.parametrize(
    "mode", ["allow_mix_precision", "allow_mix_precision_bf16", "force_fp16", "allow_fp32_to_fp16"]
)
def test_an_op_without_a_kernel_for_its_dtype_does_not_move_on_a_second_run(mode: str) -> None:
    """Issue 14 item 6: bf16 Relu with only fp16 (AI Core) and fp32 (AI CPU) kernels: the first run must
    choose what a second run on its output chooses (before: fp32 AI CPU, then fp16 AI Core)."""
    module = parse_module(NO_ORIGINAL_KERNEL)
    first = run_precision(module, mode=mode)
    once = print_module(module)
    second = run_precision(module, mode=mode)
    assert print_module(module) == once
    relu1, relu2 = (next(d for d in r.ops if d.type == "Relu") for r in (first, second))
    assert (relu1.chosen.outputs, relu1.engine) == (relu2.chosen.outputs, relu2.engine)
    if mode == "allow_mix_precision":  # white: the fp16 AI Core kernel, as for an fp32 op
        assert (relu1.chosen.outputs, relu1.engine) == (("f16",), "aicore")


MARKED = """func.func @g(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc1", keep_dtype} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %l = ascend.ReduceMean %y {axes = array<i64: 1>, keep_dims = true, keep_dtype, name = "loss"} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  %r = ascend.Relu %y {name = "relu"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %r : tensor<8x4xf32>
}
"""


@pytest.mark.parametrize("run", POLICY_RUNS, ids=lambda r: "-".join(r.values()))
def test_marked_ops_keep_their_dtype_under_every_rule(run: dict[str, str]) -> None:
    module = parse_module(MARKED)
    try:
        report = run_precision(module, **run)  # type: ignore[arg-type]
    except AscendError:
        assert run.get("mode") == "must_keep_origin_dtype"  # no fp32 AI Core MatMulV2? then say so
        return
    fc1 = report.by_name("fc1")
    assert fc1.chosen == fc1.original
    if run.get("mode") != "must_keep_origin_dtype":
        assert fc1.reason == "keep_dtype (marked)"
        assert report.by_name("loss").reason.startswith("keep_dtype (marked)")


def test_marked_keep_dtype_that_needs_the_ai_cpu_says_so() -> None:
    text = """func.func @g(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = ascend.Exp %x {caps = #ascend.caps<(f16) -> f16, aicpu (f32) -> f32>, keep_dtype, name = "e"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}
"""
    report = run_precision(parse_module(text), mode="force_fp16")
    e = report.by_name("e")
    assert (e.engine, e.chosen.outputs) == ("aicpu", ("f32",))
    assert e.reason == "keep_dtype (marked): aicpu fallback"


def test_rules_are_a_table_and_unknown_names_are_errors() -> None:
    assert set(CANN_MODES) == set(V1_MODES)
    assert all(isinstance(r, Rule) and r.__doc__ for r in CANN_MODES.values())
    assert set(POLICIES) == {"cann", "tf", "mindspore", "torch"}
    with pytest.raises(AscendError, match="unknown amp_policy 'jax'; expected one of cann, tf, mindspore, torch"):
        load_config(policy="jax")
    with pytest.raises(AscendError, match="unknown amp_dtype 'fp8'"):
        load_config(policy="torch", amp_dtype_name="fp8")
    with pytest.raises(AscendError, match="amp_level 'O2' applies to the mindspore policy only"):
        load_config(level="O2")
    with pytest.raises(AscendError, match="precision_mode applies to the cann policy only"):
        load_config(mode="force_fp16", policy="tf")


def test_user_casts_are_kept() -> None:
    text = """func.func @g(%x: tensor<4x4xf32>) -> tensor<4x4xf16> {
  %h = ascend.Cast %x : (tensor<4x4xf32>) -> tensor<4x4xf16>
  func.return %h : tensor<4x4xf16>
}
"""
    for run in POLICY_RUNS:
        module = parse_module(text)
        try:
            run_precision(module, **run)  # type: ignore[arg-type]
        except AscendError:
            continue
        assert sum(isinstance(op, CastOp) for op in module.walk()) == 1, run


# ---------------------------------------------------------------------------------------------------- tf


TF_SIMPLE = """func.func @simple(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %deny1 = ascend.Exp %input {name = "deny1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %deny1 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow1 = ascend.MatMulV2 %clr2, %clr2 {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.Relu %allow1 {name = "clr3"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %clr3 : tensor<32x32xf32>
}
"""


def _dtypes(report: object) -> dict[str, str]:
    return {d.name: d.chosen.outputs[0] for d in report.ops if d.name}  # type: ignore[attr-defined]


def test_tf_lists_from_the_environment_and_the_pass_option(monkeypatch: pytest.MonkeyPatch) -> None:
    base = _dtypes(run_precision(parse_module(TF_SIMPLE), policy="tf"))
    assert base == {"deny1": "f32", "clr2": "f16", "allow1": "f16", "clr3": "f16"}
    assert (
        run_precision(parse_module(TF_SIMPLE), policy="tf").by_name("clr3").reason
        == "tf: clear, connected to allow ops"
    )
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_CLEARLIST_REMOVE", "Relu")
    assert _dtypes(run_precision(parse_module(TF_SIMPLE), policy="tf")) == {
        "deny1": "f32",
        "clr2": "f32",
        "allow1": "f16",
        "clr3": "f32",
    }
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_INFERLIST_ADD", "Relu,Exp")  # Exp is still deny
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_REMOVE", "Exp")
    assert _dtypes(run_precision(parse_module(TF_SIMPLE), policy="tf"))["clr2"] == "f32"  # infer, not between allow ops
    monkeypatch.delenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_CLEARLIST_REMOVE")
    monkeypatch.delenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_INFERLIST_ADD")
    monkeypatch.delenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_REMOVE")
    got = run_precision(parse_module(TF_SIMPLE), policy="tf", tf_lists="ALLOWLIST_REMOVE=MatMul")
    assert set(_dtypes(got).values()) == {"f32"}  # no allow op: nothing to do
    got = run_precision(
        parse_module(TF_SIMPLE), policy="tf", tf_lists="ALLOWLIST_ADD=Exp;DENYLIST_REMOVE=Exp;CLEARLIST_REMOVE=Relu"
    )
    assert _dtypes(got) == {"deny1": "f16", "clr2": "f32", "allow1": "f16", "clr3": "f32"}


TF_DENY_CHAIN = """func.func @g(%x: tensor<2x8x8xf32>, %w: tensor<8x8xf32>) -> tensor<16x8xf32> {
  %bmm = ascend.BatchMatMul %x, %x {name = "bmm"} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %r = ascend.Relu %bmm {name = "r"} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = ascend.Reshape %r {name = "s"} : (tensor<2x8x8xf32>) -> tensor<16x8xf32>
  %t = ascend.Tanh %s {name = "t"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %mm = ascend.MatMulV2 %t, %w {name = "mm"} : (tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
  func.return %mm : tensor<16x8xf32>
}
"""


def test_tf_list_edits_change_one_list_and_an_op_on_two_lists_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """TF's UpdateList edits one list only; ValidateLists rejects an op left on two ("Op lists have conflicting
    entries"). So DENYLIST_ADD=BatchMatMul alone is an error (BatchMatMul is on the allow list). Moved properly
    (TF's BatchMatMul is CANN's BatchMatMul; TF's BatchMatMulV2 is CANN's BatchMatMulV2), deny propagates from it
    (Relu, Reshape, Tanh lie upstream of an infer op)."""
    base = _dtypes(run_precision(parse_module(TF_DENY_CHAIN), policy="tf"))
    assert base == {"bmm": "f16", "r": "f16", "s": "f16", "t": "f16", "mm": "f16"}  # between the allow ops
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD", "BatchMatMul")
    with pytest.raises(
        AscendError, match=r"'BatchMatMul' is on both the allow and the deny list.*ALLOWLIST_REMOVE=BatchMatMul"
    ) as e:
        run_precision(parse_module(TF_DENY_CHAIN), policy="tf")
    assert "\n" not in str(e.value)
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_REMOVE", "BatchMatMul")
    got = run_precision(parse_module(TF_DENY_CHAIN), policy="tf")
    assert _dtypes(got) == {"bmm": "f32", "r": "f32", "s": "f32", "t": "f32", "mm": "f16"}
    assert got.by_name("bmm").reason == "tf: deny"
    assert got.by_name("t").reason == "tf: infer, downstream of a deny op"
    # The same as a pass option, and a CANN op type reached from two lists (TF's MatMul on allow, MatMulV2 on deny).
    monkeypatch.delenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD")
    monkeypatch.delenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_REMOVE")
    option = run_precision(
        parse_module(TF_DENY_CHAIN),
        policy="tf",
        tf_lists="DENYLIST_ADD=BatchMatMul;ALLOWLIST_REMOVE=BatchMatMul,BatchMatMulV2",
    )
    assert _dtypes(option) == _dtypes(got)
    with pytest.raises(
        AscendError, match=r"CANN op type MatMulV2 \('MatMul' and 'MatMulV2'\) is on both the allow and the deny"
    ):
        run_precision(parse_module(TF_DENY_CHAIN), policy="tf", tf_lists="DENYLIST_ADD=MatMulV2")


def test_tf_list_edits_apply_in_tf_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """DenyList() runs UpdateList("DENYLIST") and then UpdateList("BLACKLIST"), each adding then removing: a
    BLACKLIST_ADD survives a DENYLIST_REMOVE of the same op (alphabetical order would drop it). TF's other
    TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_* variables are not list edits."""
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_BLACKLIST_ADD", "Relu")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_REMOVE", "Relu")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_CLEARLIST_REMOVE", "Relu")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_IGNORE_PERFORMANCE", "1")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LOG_PATH", "/tmp")
    got = run_precision(parse_module(TF_SIMPLE), policy="tf")
    assert got.by_name("clr3").reason == "tf: deny"
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD", "Relu")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_BLACKLIST_REMOVE", "Relu")  # after DENYLIST_ADD: gone
    assert run_precision(parse_module(TF_SIMPLE), policy="tf").by_name("clr3").reason == "tf: not on any list"


TF_FORCE = """func.func @f(%x: tensor<4x4xf32>, %lr: tensor<f32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<8xf32>) {
  %s = ascend.NPUAllocFloatStatus {name = "alloc"} : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s {name = "clear"} : (tensor<8xf32>) -> tensor<8xf32>
  %e = ascend.Exp %x {name = "exp"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %k = ascend.Const dense<2.0> : tensor<4x4xf32> {name = "k"}
  %m = ascend.Mul %e, %k {name = "mul"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = ascend.ApplyGradientDescent %w, %lr, %m {name = "sgd"} : (tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = ascend.NPUGetFloatStatus %c {name = "get"} : (tensor<8xf32>) -> tensor<8xf32>
  func.return %m, %u, %g : tensor<4x4xf32>, tensor<4x4xf32>, tensor<8xf32>
}
"""


def test_tf_unsafe_force_all_spares_what_tf_cannot_force(monkeypatch: pytest.MonkeyPatch) -> None:
    """UNSAFE_FORCE_ALL (TF's `CanForceFP16`): every fp32 op with an fp16 kernel goes fp16 (a deny op too) except
    constants, stateful ops (the float status register) and variable updates (an optimizer, whose variable TF
    takes by reference). Without an allow op TF does nothing, which forcing does not change here: Mul and Exp
    are forced even though no allow-list op is present."""
    default = run_precision(parse_module(TF_FORCE), policy="tf")
    assert {d.name: d.chosen.outputs[0] for d in default.ops if d.name} == {
        "alloc": "f32",
        "clear": "f32",
        "exp": "f32",
        "k": "f32",
        "mul": "f32",
        "sgd": "f32",
        "get": "f32",
    }
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL", "unsafe_force_all")
    forced = run_precision(parse_module(TF_FORCE), policy="tf")
    assert {d.name: d.chosen.outputs[0] for d in forced.ops if d.name} == {
        "alloc": "f32",
        "clear": "f32",
        "exp": "f16",
        "k": "f32",
        "mul": "f16",
        "sgd": "f32",
        "get": "f32",
    }
    assert forced.by_name("exp").reason == "tf: forced (UNSAFE_FORCE_ALL)"
    assert forced.by_name("sgd").reason == "tf: not on any list"


@pytest.mark.parametrize(
    ("level", "amp_dtype", "message"),
    [
        (
            "FAST",
            "fp16",
            "environment variable TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL: unknown level 'FAST'; "
            "expected TENSOR_CORES_ONLY, TREAT_INFER_AS_DENY, UNSAFE_FORCE_ALL or unset",
        ),
        (
            "UNSAFE_FORCE_ALL",
            "bf16",
            "environment variable TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL: UNSAFE_FORCE_ALL "
            "cannot be used with amp_dtype bf16 (TensorFlow refuses it when oneDNN is used)",
        ),
    ],
)
def test_tf_bad_level_is_a_one_line_error(
    monkeypatch: pytest.MonkeyPatch, level: str, amp_dtype: str, message: str
) -> None:
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL", level)
    with pytest.raises(AscendError) as e:
        run_precision(parse_module(TF_SIMPLE), policy="tf", amp_dtype=amp_dtype)
    assert str(e.value) == message


def test_tf_tensor_cores_only_leaves_the_bf16_lists_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """TENSOR_CORES_ONLY is read by TF's CUDA (fp16) lists only: the oneDNN (bf16) lists keep their infer, deny and
    clear ops; and the fp16 lists ignore edits of the lists it empties, as TF's getters return before editing
    (adding Exp, a deny op, to the clear list is then no conflict)."""
    bf16 = run_precision(parse_module(TF_SIMPLE), policy="tf", amp_dtype="bf16")
    fp16 = run_precision(parse_module(TF_SIMPLE), policy="tf")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL", "TENSOR_CORES_ONLY")
    assert _dtypes(run_precision(parse_module(TF_SIMPLE), policy="tf", amp_dtype="bf16")) == _dtypes(bf16)
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_CLEARLIST_ADD", "Exp")
    only = _dtypes(run_precision(parse_module(TF_SIMPLE), policy="tf"))
    assert only != _dtypes(fp16)
    assert only == {"deny1": "f32", "clr2": "f32", "allow1": "f16", "clr3": "f32"}


TF_PRESERVE_FETCHES = """func.func @preserve_fetches(%input: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) {
  %allow1 = ascend.MatMulV2 %input, %input {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr1 = ascend.Relu %allow1 {name = "clr1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %infer1 = ascend.Sqrt %clr1 {name = "infer1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny1 = ascend.Exp %infer1 {name = "deny1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %deny1 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow2 = ascend.MatMulV2 %clr2, %clr2 {name = "allow2"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.Relu %allow2 {name = "clr3"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny2 = ascend.Exp %clr3 {name = "deny2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr4 = ascend.Relu %deny2 {name = "clr4"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %allow1, %clr2, %clr3, %clr4 : tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>
}
"""


def test_tf_keep_dtype_file_entries_are_preserved_nodes(tmp_path: Path) -> None:
    """TF's PreserveFetches (fetch = allow1, clr2, clr3) with the fetches in a keep_dtype file: TF expects only
    allow2 in fp16; the preserved allow1 paints nothing (clr1 stays fp32), as with the `keep_dtype` mark."""
    keep = tmp_path / "keep.txt"
    keep.write_text("allow1\nclr2\nclr3\n")
    plain = _dtypes(run_precision(parse_module(TF_PRESERVE_FETCHES), policy="tf"))
    assert plain["clr1"] == "f16" and plain["allow1"] == "f16"
    got = run_precision(parse_module(TF_PRESERVE_FETCHES), policy="tf", keep_dtype=str(keep))
    assert [n for n, d in _dtypes(got).items() if d != "f32"] == ["allow2"]
    assert got.by_name("allow1").reason == "keep_dtype"
    assert got.by_name("clr1").reason == "tf: clear, not connected to allow ops"
    marked = TF_PRESERVE_FETCHES
    for n in ("allow1", "clr2", "clr3"):
        marked = marked.replace(f'{{name = "{n}"}}', f'{{name = "{n}", keep_dtype}}')
    assert _dtypes(run_precision(parse_module(marked), policy="tf")) == _dtypes(got)
    # By op type: every Relu is preserved; deny still propagates through a preserved op (TF's pass 2).
    keep.write_text("OpType::Relu\n")
    got = run_precision(parse_module(TF_SIMPLE), policy="tf", keep_dtype=str(keep))
    assert _dtypes(got) == {"deny1": "f32", "clr2": "f32", "allow1": "f16", "clr3": "f32"}


@pytest.mark.parametrize(
    ("env", "option", "message"),
    [
        (
            {"TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_ADDD": "MatMul"},
            None,
            "environment variable TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_ADDD: unknown list edit",
        ),
        (
            {"TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD": "Relu,NoSuchOp"},
            None,
            "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD: unknown op 'NoSuchOp'",
        ),
        ({}, "ALLOWLIST=MatMul", "tf_lists entry 1 'ALLOWLIST=MatMul': expected"),
        ({}, "CLEARLIST_ADD=Relu;GREENLIST_ADD=Relu", "tf_lists entry 2 'GREENLIST_ADD=Relu'"),
    ],
)
def test_bad_tf_list_edits_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], option: str | None, message: str
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(AscendError, match=message.replace("(", r"\(")) as e:
        load_config(policy="tf", tf_lists=option)
    assert "\n" not in str(e.value)


def test_tf_lists_are_data_and_every_entry_names_a_known_mapping() -> None:
    from ascend_mp.dialects.ascend import OPS_BY_TYPE
    from ascend_mp.policies.tf import load_data

    data = load_data()
    for low, lists in data["lists"].items():
        assert set(lists) == {"allow", "infer", "deny", "clear"}, low
        for kind, names in lists.items():
            for name in names:
                assert name in data["cann"], (low, kind, name)
    for name, types in data["cann"].items():
        assert all(t in OPS_BY_TYPE for t in types), (name, types)
    # the lists as TF 2.x has them for fp16 (spot checks against auto_mixed_precision_lists.h)
    fp16 = data["lists"]["fp16"]
    assert {"MatMul", "Conv2D", "BatchMatMulV2"} <= set(fp16["allow"])
    assert {"Exp", "Mean", "Sum", "Pow", "SoftmaxCrossEntropyWithLogits"} <= set(fp16["deny"])
    assert "Mean" in data["lists"]["bf16"]["infer"] and "Mean" not in data["lists"]["bf16"]["deny"]


# ---------------------------------------------------------------------------------------------------- mindspore, torch, to_float

SEED_004 = """func.func @net(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w {name = "Default/dense-Dense/MatMul-op0"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b {name = "Default/dense-Dense/BiasAdd-op1"} : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z {name = "Default/ReLU-op2"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r {name = "Default/head/SoftmaxV2-op3"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}
"""


@pytest.mark.parametrize(
    "policy", [{"policy": "mindspore", "level": "O0"}, {"mode": "force_fp32"}, {"mode": "allow_mix_precision"}]
)
def test_to_float_scopes_innermost_wins(tmp_path: object, policy: dict[str, str]) -> None:
    """seed 004: net.to_float(float16); net.dense.to_float(float32); also with CANN modes (a scoped customize_dtypes)."""
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


# ---------------------------------------------------------------------------------------------------- side by side


COMPARE = """func.func @g(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %y {name = "softmax"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}
"""


def test_compare_policies_table_json_and_dot(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from ascend_mp.tools.ascend_opt import main

    src = f"{tmp_path}/m.mlir"
    with open(src, "w") as f:
        f.write(COMPARE)
    out_json, out_dot = f"{tmp_path}/c.json", f"{tmp_path}/g.dot"
    main([src, "--compare-policies", f"--compare-json={out_json}", f"--precision-dot={out_dot}", "--amp_policy=tf"])
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["op", "type", "cann", "allow_mix_precision", "tf", "mindspore", "O2", "torch"]
    # MatMul is low under every policy; Softmax: CANN gray follows the fp16 MatMul, TF infer not between allow
    # ops stays fp32, MindSpore O2 fp16 (not black), torch's fp32 list.
    assert table[1].split() == ["fc", "MatMulV2", "fp16", "fp16", "fp16", "fp16"]
    assert table[2].split() == ["softmax", "SoftmaxV2", "fp16", "fp16", "fp16", "fp32", "<-", "differ"]
    assert table[-1] == "1 of 2 ops differ between the policies"
    data = json.load(open(out_json))
    assert data["differ"] == 1 and data["ops"][1]["reasons"]["torch"] == "torch: fp32 op"
    dot = open(out_dot).read()
    assert dot.startswith("digraph precision {") and dot.rstrip().endswith("}")
    assert 'label="tf"' in dot
    assert dot.count("shape=diamond") == 3  # x and w cast to fp16, the Softmax result back to fp32
    assert dot.count('fillcolor="#cccccc"') == 3  # all inserted
    assert 'fillcolor="#f4a261", label="MatMulV2\\nfc\\nfp16"' in dot
    assert 'fillcolor="#f4a261", label="SoftmaxV2\\nsoftmax\\nfp16"' in dot


def test_amp_flags_on_the_command_line(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from ascend_mp.tools.ascend_opt import main

    src = f"{tmp_path}/m.mlir"
    with open(src, "w") as f:
        f.write(SEED_004)
    main([src, "--amp_policy=mindspore", "--amp_level=O1"])
    out = capsys.readouterr().out
    assert "ascend.MatMulV2" in out and "-> tensor<8x4xf16>" in out
    with pytest.raises(SystemExit) as e:
        main([src, "--amp_policy=mindspore", "--amp_level=O9"])
    message = e.value.code if isinstance(e.value.code, str) else capsys.readouterr().err.strip()
    assert e.value.code != 0 and "\n" not in message
    assert message.startswith("ascend-opt: error: unknown amp_level 'O9' for amp_policy mindspore"), message


# ---------------------------------------------------------------------------------------------------- the report


def test_report_covers_every_chunk_of_split_input_file(tmp_path: object) -> None:
    import json

    from ascend_mp.tools.ascend_opt import main

    src, report = f"{tmp_path}/m.mlir", f"{tmp_path}/r.json"
    with open(src, "w") as f:
        f.write(COMPARE.replace("@g", "@first") + "\n// -----\n" + SEED_004)
    for args in (
        ["--precision_mode=allow_mix_precision", f"--precision-report={report}"],
        ["-p", f'ascend-precision{{mode=allow_mix_precision report="{report}"}}'],
    ):
        main([src, "--split-input-file", "-o", f"{tmp_path}/out.mlir", *args])
        data = json.load(open(report))
        names = [o["name"] for o in data["ops"]]
        assert names[:2] == ["fc", "softmax"] and "Default/ReLU-op2" in names, (args, names)
        assert data["totals"]["ops"] == len(names) == 6


def test_mixlist_to_remove_warning_reaches_the_report(tmp_path: object) -> None:
    path = f"{tmp_path}/mix.json"
    with open(path, "w") as f:
        f.write('{"black-list": {"to-remove": ["MatMulV2"]}}')
    report = run_precision(parse_module(COMPARE), mode="allow_mix_precision", modify_mixlist=path)
    assert any("'MatMulV2' is not on the black-list; to-remove has no effect" in w for w in report.warnings), (
        report.warnings
    )


def test_a_gray_op_after_an_fp16_bf16_join_names_the_join() -> None:
    text = """func.func @g(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = ascend.MatMulV2 %x, %x {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = ascend.Relu %x {name = "rb", caps = #ascend.caps<(bf16) -> bf16>, list = #ascend.list<white>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = ascend.Add %a, %b {name = "join"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %s : tensor<4x4xf32>
}
"""
    report = run_precision(parse_module(text), mode="allow_mix_precision", soc="ascend910b")
    assert report.by_name("mm").chosen.outputs == ("f16",) and report.by_name("rb").chosen.outputs == ("bf16",)
    join = report.by_name("join")
    assert join.chosen.outputs == ("f32",)
    assert join.reason == "gray: follows the fp16/bf16 join of MatMulV2/mm and Relu/rb"


def test_mindspore_o2_keeps_the_loss_not_the_backward_in_fp32() -> None:
    from pathlib import Path

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
    # type (an identity after retyping, folded: DESIGN 5, issue 12.5), counted in casts_folded.
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


def test_tf_cast_on_a_list_is_painted_like_any_op() -> None:
    """With Cast added to the clear list, a user's Cast to fp32 next to an allow op is painted allow and
    retargeted to fp16, although one of its consumers is not allow."""
    text = """func.func @g(%x: tensor<4x4xi32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %c = ascend.Cast %x {name = "cst"} : (tensor<4x4xi32>) -> tensor<4x4xf32>
  %m = ascend.MatMulV2 %c, %c {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = ascend.Exp %c {name = "e"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %m, %e : tensor<4x4xf32>, tensor<4x4xf32>
}
"""
    plain = run_precision(parse_module(text), policy="tf")
    assert plain.by_name("cst").chosen.outputs == ("f32",)  # Exp (deny) also reads it
    listed = run_precision(parse_module(text), policy="tf", tf_lists="CLEARLIST_ADD=Cast")
    assert listed.by_name("cst").chosen.outputs == ("f16",) and listed.by_name("e").chosen.outputs == ("f32",)


# ---------------------------------------------------------------------------------------------------- torch autocast
# What CUDA autocast does on these blocks was read from PyTorch 2.13's own AutocastCUDA kernels by
# `conformance/run.py torch` (docs/conformance.md); these tests keep the policy there without torch installed.

_ATTENTION = """func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %scale: tensor<f32>) -> tensor<2x4x8xf32> {
  %s = ascend.BatchMatMulV2 %q, %k {adj_x2 = true, name = "scores"} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %m = ascend.Mul %s, %scale {name = "scaled"} : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = ascend.SoftmaxV2 %m {name = "probs"} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %c = ascend.BatchMatMulV2 %p, %v {name = "context"} : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %c : tensor<2x4x8xf32>
}
"""


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


def test_compare_policies_shows_torch_running_attention_in_fp16(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ascend-opt --compare-policies` on an attention block: the torch column has both BatchMatMulV2 and the scaled
    scores in fp16 and only the softmax in fp32, as CUDA autocast runs them."""
    from ascend_mp.tools.ascend_opt import main

    src = f"{tmp_path}/attention.mlir"
    with open(src, "w") as f:
        f.write(_ATTENTION)
    main([src, "--compare-policies"])
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[1:-1]}
    torch_column = {name: row[5] for name, row in rows.items()}  # op, type, cann, tf, mindspore O2, torch
    assert torch_column == {"scores": "fp16", "scaled": "fp16", "probs": "fp32", "context": "fp16"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["torch", "--level", "UNSAFE_FORCE_ALL"], "run.py: error: --level applies to tf only"),
        (
            ["torch", "--python", "/nonexistent/python"],
            "run.py: error: no PyTorch python at /nonexistent/python: run `make conformance` (it creates the venv) or pass --python",
        ),
    ],
)
def test_conformance_runner_in_a_real_process_rejects_bad_arguments_in_one_line(args: list[str], message: str) -> None:
    """`conformance/run.py` (make conformance) refuses what it cannot run before building anything, in one line."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "conformance" / "run.py"), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1] == message and "Traceback" not in done.stderr
