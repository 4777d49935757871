"""Precision rules as data (ascend_mp.policies): every CANN mode and framework policy on random graphs.

Properties, per mode and policy: the output verifies, integer and bool tensors are untouched, the
function signature is kept, ops marked `keep_dtype` keep their dtype, and a second run changes
nothing (a regression once: an op whose original dtype had no kernel moved again on the second run).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from policies_util import COMPARE, POLICY_RUNS, SEED_004
from xdsl.dialects import func

from ascend_mp.dialects.ascend import AscendOp, CastOp
from ascend_mp.dtypes import tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.ir import parse_module, print_module
from ascend_mp.modes import V1_MODES
from ascend_mp.passes.precision import load_config, run_precision
from ascend_mp.policies import CANN_MODES, POLICIES, Rule

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
