"""Operator implementation modes: the ini parser, the `ascend-impl-mode` pass,
the ATC flags, the interpreter's high_performance bodies and what `--compare-modes` shows."""

from __future__ import annotations

import logging
import math
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ascend_mp.dialects.ascend import OPS_BY_TYPE
from ascend_mp.errors import AscendError
from ascend_mp.implmode import DUAL_IMPL_OPS, load_impl_modes, load_op_precision_mode
from ascend_mp.interpreter.kernels import OpSpec, apply
from ascend_mp.ir import make_context, parse_module, print_module

F16 = np.float16

# --------------------------------------------------------------------------------------
# The ini file
# --------------------------------------------------------------------------------------


def ini(tmp_path: Path, text: str) -> str:
    path = tmp_path / "op_precision.ini"
    path.write_text(text)
    return str(path)


def test_ini_bare_lines_and_sections(tmp_path: Path) -> None:
    path = ini(
        tmp_path,
        "# comment\nExp=high_performance\n; ini comment\n[ByOpType]\n Sqrt = keep_fp16 \n"
        "[ByNodeName]\nlayer1/softmax=high_precision\n",
    )
    p = load_op_precision_mode(path, OPS_BY_TYPE)
    assert p.by_type == {"Exp": "high_performance", "Sqrt": "keep_fp16"}
    assert p.by_name == {"layer1/softmax": "high_precision"}
    assert p.warnings == []


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("Exp=fast\n", 1, "unknown mode 'fast' for 'Exp'"),
        ("Exp=high_performance\nSqrt\n", 2, "malformed line 'Sqrt' (expected OpType=mode)"),
        ("[ByNodeName]\nn1=\n", 2, "malformed line 'n1=' (expected node name=mode)"),
        ("[ByOpName]\nExp=high_performance\n", 1, "unknown section '[ByOpName]'"),
        ("[ByOpType\n", 1, "unknown section '[ByOpType'"),
        ("Exp=high_performance\n[ByOpType]\nExp=high_precision\n", 3, "duplicate key 'Exp' (first given on line 1)"),
        ("[ByNodeName]\nn=keep_fp16\nn=keep_fp16\n", 3, "duplicate key 'n'"),
        ("Exp-2=high_performance\n", 1, "'Exp-2' is not a valid op type"),
    ],
)
def test_ini_errors_name_file_line_and_key(tmp_path: Path, text: str, line: int, needle: str) -> None:
    path = ini(tmp_path, text)
    with pytest.raises(AscendError) as e:
        load_op_precision_mode(path, OPS_BY_TYPE)
    message = str(e.value)
    assert message.startswith(f"{path}:{line}: ") and needle in message, message
    assert "\n" not in message


def test_ini_unknown_op_type_is_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = ini(tmp_path, "Expp=high_performance\n")
    with caplog.at_level(logging.WARNING, "ascend_mp"):
        p = load_op_precision_mode(path, OPS_BY_TYPE)
    assert p.by_type == {"Expp": "high_performance"}
    assert p.warnings == [f"{path}:1: unknown op type 'Expp'; did you mean 'Exp'?"]
    assert p.warnings[0] in caplog.text


def test_missing_ini_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(AscendError, match="no-such.ini"):
        load_op_precision_mode(str(tmp_path / "no-such.ini"))


# --------------------------------------------------------------------------------------
# Which op gets which mode
# --------------------------------------------------------------------------------------


def test_select_implmode_applies_to_dual_ops_unless_for_all() -> None:
    some = load_impl_modes("high_performance")
    assert some.mode_for("Exp", None) == "high_performance"
    assert some.mode_for("Relu", None) is None  # no second implementation: not touched
    every = load_impl_modes("high_performance_for_all")
    assert every.mode_for("Relu", None) == "high_performance" and every.mode_for("Exp", None) == "high_performance"
    assert load_impl_modes("high_precision").mode_for("Gelu", None) == "high_precision"
    assert {"Exp", "Gelu", "SoftmaxV2", "LayerNorm", "Sqrt"} <= DUAL_IMPL_OPS


def test_optypelist_replaces_the_built_in_list() -> None:
    c = load_impl_modes("high_performance", " Relu, Exp")
    assert c.mode_for("Relu", None) == "high_performance" and c.mode_for("Exp", None) == "high_performance"
    assert c.mode_for("Sqrt", None) is None


@pytest.mark.parametrize(
    ("select", "optypes", "needle"),
    [
        (None, "Exp", "--optypelist_for_implmode needs --op_select_implmode"),
        ("high_performance_for_all", "Exp", "not high_performance_for_all"),
        ("high_performance", "Exp,,Sqrt", "'' is not an op type"),
        ("fastest", None, "--op_select_implmode: unknown mode 'fastest'"),
    ],
)
def test_flag_combination_errors(select: str | None, optypes: str | None, needle: str) -> None:
    with pytest.raises(AscendError, match=needle.replace("(", r"\(")):
        load_impl_modes(select, optypes)


def test_optypelist_unknown_type_is_a_warning() -> None:
    c = load_impl_modes("high_performance", "Exp,Sqrtt", known_op_types=OPS_BY_TYPE)
    assert c.warnings == ["--optypelist_for_implmode: unknown op type 'Sqrtt'; did you mean 'Sqrt'?"]


def test_node_name_beats_op_type_and_the_ini_excludes_the_flags(tmp_path: Path) -> None:
    path = ini(tmp_path, "[ByOpType]\nExp=high_performance\n[ByNodeName]\ne2=high_precision\n")
    c = load_impl_modes("high_performance_for_all", None, path)
    assert c.mode_for("Exp", "e1") == "high_performance"
    assert c.mode_for("Exp", "e2") == "high_precision"
    assert c.mode_for("Sqrt", None) is None  # CANN: with --op_precision_mode only the ini takes effect
    assert any("take no effect" in w for w in c.warnings)


# --------------------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------------------

GRAPH = """func.func @f(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %0 = ascend.Exp %x {name = "e1"} : (tensor<2x8xf16>) -> tensor<2x8xf16>
  %1 = ascend.Exp %0 {name = "e2", impl_mode = "high_performance"} : (tensor<2x8xf16>) -> tensor<2x8xf16>
  %2 = ascend.Relu %1 : (tensor<2x8xf16>) -> tensor<2x8xf16>
  %3 = ascend.SoftmaxV2 %2 : (tensor<2x8xf16>) -> tensor<2x8xf16>
  func.return %3 : tensor<2x8xf16>
}
"""


def modes_after(text: str, **options: str) -> dict[str, str | None]:
    from ascend_mp.passes.impl_mode import ImplModePass

    module = parse_module(text)
    p = ImplModePass(**options)
    p.apply(make_context(), module)
    once = print_module(module)
    p.apply(make_context(), module)
    assert print_module(module) == once  # idempotent
    result: dict[str, str | None] = {}
    for i, op in enumerate(o for o in module.walk() if o.name.startswith("ascend.")):
        mode = op.properties.get("impl_mode")
        result[f"{i}:{op.name.removeprefix('ascend.')}"] = None if mode is None else mode.data  # type: ignore[attr-defined]
    return result


def test_pass_records_modes_with_precedence(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = ini(
        tmp_path, "SoftmaxV2=high_performance\nExp=high_performance\n[ByNodeName]\ne2=high_precision\nghost=keep_fp16\n"
    )
    with caplog.at_level(logging.WARNING, "ascend_mp"):
        got = modes_after(GRAPH, op_precision_mode=path)
    # e2 had high_performance; its node name entry says high_precision, which is not written
    assert got == {"0:Exp": "high_performance", "1:Exp": None, "2:Relu": None, "3:SoftmaxV2": "high_performance"}
    assert "[ByNodeName] 'ghost' names no op of the module" in caplog.text


def test_pass_select_and_optypelist() -> None:
    assert modes_after(GRAPH, op_select_implmode="high_precision") == {
        "0:Exp": None,
        "1:Exp": None,
        "2:Relu": None,
        "3:SoftmaxV2": None,
    }
    assert modes_after(GRAPH, op_select_implmode="high_performance", optypelist_for_implmode="Relu") == {
        "0:Exp": None,
        "1:Exp": "high_performance",
        "2:Relu": "high_performance",
        "3:SoftmaxV2": None,
    }


def test_pass_option_error_is_one_line() -> None:
    from ascend_mp.passes.impl_mode import ImplModePass

    with pytest.raises(AscendError, match="needs --op_select_implmode"):
        ImplModePass(optypelist_for_implmode="Exp").apply(make_context(), parse_module(GRAPH))


# --------------------------------------------------------------------------------------
# ATC flags in the tools (in-process)
# --------------------------------------------------------------------------------------


def run_tool(main, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:  # noqa: ANN001
    try:
        main(args)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_ascend_opt_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ascend_mp.tools.ascend_opt import main

    src = tmp_path / "m.mlir"
    src.write_text(GRAPH.replace("f16", "f32"))
    code, out, _ = run_tool(
        main, [str(src), "--precision_mode", "force_fp16", "--op_select_implmode", "high_performance"], capsys
    )
    assert code == 0
    assert re.search(r'ascend.SoftmaxV2 %\d+ {impl_mode = "high_performance"} : \(tensor<2x8xf16>\)', out)  # then fp16
    assert re.search(r"ascend.Relu %\d+ : ", out)
    code, _, err = run_tool(main, [str(src), "--optypelist_for_implmode", "Exp"], capsys)
    assert code == 1 and err.strip() == (
        "ascend-opt: error: --optypelist_for_implmode needs --op_select_implmode (high_precision or high_performance)"
    )
    code, _, err = run_tool(main, [str(src), "--op_select_implmode", "fast"], capsys)
    assert code == 2 and "--op_select_implmode" in err and "Traceback" not in err
    bad = ini(tmp_path, "Exp=fast\n")
    code, _, err = run_tool(main, [str(src), "--op_precision_mode", bad], capsys)
    assert (
        code == 1
        and err.strip().startswith(f"ascend-opt: error: {bad}:1: unknown mode 'fast'")
        and len(err.strip().splitlines()) == 1
    )


# --------------------------------------------------------------------------------------
# The interpreter: high_performance = each intermediate step rounded to fp16
# (references: numpy float16 arithmetic, which rounds every operation to fp16)
# --------------------------------------------------------------------------------------


def run_op(
    op: str, mode: str | None, *xs: np.ndarray, attrs: dict | None = None, outs: int = 1, out_shapes=None
) -> np.ndarray:  # noqa: ANN001
    a = dict(attrs or {})
    if mode is not None:
        a["impl_mode"] = mode
    shapes = tuple(x.shape for x in xs)
    spec = OpSpec(op, tuple(x.dtype for x in xs), (np.dtype(F16),) * outs, shapes, out_shapes or (shapes[0],) * outs, a)
    r = apply(spec, *xs)
    return r[0] if outs > 1 else r


def ref_exp(x: np.ndarray) -> np.ndarray:
    t = x * F16(math.log2(math.e))
    n = np.clip(np.floor(t), -64, 64)
    return np.ldexp(np.exp2(t - n), n.astype(np.int32)).astype(F16)


def ref_log(x: np.ndarray) -> np.ndarray:
    return np.log2(x) * F16(math.log(2))


def ref_sqrt(x: np.ndarray) -> np.ndarray:
    rsqrt = (np.float32(1) / np.sqrt(x.astype(np.float32))).astype(F16)  # one rsqrt step, rounded once
    return x * rsqrt


def ref_tanh(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x) * F16(2))
    return np.sign(x) * ((F16(1) - e) / (F16(1) + e))


def ref_sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))
    r = F16(1) / (F16(1) + e)
    return np.where(x >= 0, r, e * r)


def ref_gelu(x: np.ndarray) -> np.ndarray:
    inner = F16(math.sqrt(2 / math.pi)) * (x + F16(0.044715) * (x * x * x))
    return (F16(0.5) * x) * (F16(1) + np.tanh(inner))


def ref_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    total = e.astype(np.float32).sum(axis=-1, keepdims=True).astype(F16)  # fp32 accumulation, one rounding
    return e / total


def rand(shape: tuple[int, ...], scale: float = 1.0, positive: bool = False, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape) * scale
    return (np.abs(x) + 1e-3 if positive else x).astype(F16)


CASES = {
    "Exp": (ref_exp, np.exp, rand((512,), 3.0)),
    "Log": (ref_log, np.log, rand((512,), 10.0, positive=True)),
    "Sqrt": (ref_sqrt, np.sqrt, rand((512,), 100.0, positive=True)),
    "Tanh": (ref_tanh, np.tanh, rand((512,), 0.3)),
    "Sigmoid": (ref_sigmoid, lambda x: 1 / (1 + np.exp(-x)), rand((512,), 4.0)),
    "Gelu": (
        ref_gelu,
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        rand((512,), 3.0),
    ),
}


@pytest.mark.parametrize("op", sorted(CASES))
def test_high_performance_elementwise_matches_the_fp16_step_rule(op: str) -> None:
    ref, exact, x = CASES[op]
    with np.errstate(all="ignore"):
        want = ref(x).astype(F16)
    fast = run_op(op, "high_performance", x)
    precise = run_op(op, None, x)
    np.testing.assert_array_equal(fast, want)
    assert not np.array_equal(fast, precise)  # the mode changes results
    # and costs precision against float64
    true = exact(x.astype(np.float64))
    err = lambda y: float(np.mean(np.abs(y.astype(np.float64) - true) / np.maximum(np.abs(true), 1e-3)))  # noqa: E731
    assert err(fast) > err(precise)
    np.testing.assert_array_equal(run_op(op, "high_precision", x), precise)
    np.testing.assert_array_equal(run_op(op, "support_out_of_bound_index", x), precise)  # recorded, no effect here


def test_high_performance_softmax() -> None:
    x = rand((8, 64), 3.0)
    fast = run_op("SoftmaxV2", "high_performance", x, attrs={"axes": (-1,)})
    np.testing.assert_array_equal(fast, ref_softmax(x))
    assert not np.array_equal(fast, run_op("SoftmaxV2", None, x, attrs={"axes": (-1,)}))


def test_high_performance_layer_norm() -> None:
    x, g, b = rand((4, 32), 3.0, seed=1), rand((32,), seed=2), rand((32,), seed=3)
    eps = F16(1e-5)
    m = x.astype(np.float32).mean(axis=-1, keepdims=True).astype(F16)
    d = x - m
    var = (d * d).astype(np.float32).mean(axis=-1, keepdims=True).astype(F16)
    inv = F16(1) / np.sqrt(var + eps)
    want = (d * inv) * g + b
    spec_attrs = {"begin_norm_axis": 1, "begin_params_axis": 1, "epsilon": 1e-5}
    shapes = ((4, 32), (4, 1), (4, 1))
    fast = run_op("LayerNorm", "high_performance", x, g, b, attrs=spec_attrs, outs=3, out_shapes=shapes)
    np.testing.assert_array_equal(fast, want)
    assert not np.array_equal(fast, run_op("LayerNorm", None, x, g, b, attrs=spec_attrs, outs=3, out_shapes=shapes))


def test_f32_ops_and_bf16() -> None:
    x = rand((64,), 3.0).astype(np.float32)
    spec = OpSpec(
        "Exp", (np.dtype(np.float32),), (np.dtype(np.float32),), ((64,),), ((64,),), {"impl_mode": "high_performance"}
    )
    np.testing.assert_array_equal(apply(spec, x), np.exp(x))  # f32 ops: nothing to lower
    bf = x.astype(ml_dtypes.bfloat16)
    bspec = OpSpec("Sqrt", (bf.dtype,), (bf.dtype,), ((64,),), ((64,),), {"impl_mode": "high_performance"})
    pos = np.abs(bf)
    r = (np.float32(1) / np.sqrt(pos.astype(np.float32))).astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(apply(bspec, pos), (pos.astype(np.float32) * r).astype(ml_dtypes.bfloat16))


def test_executor_runs_the_recorded_mode_with_f16_carried_in_f32() -> None:
    from ascend_mp.interpreter import Program

    x = rand((2, 8), 0.5)
    fast = Program.from_module(
        parse_module(GRAPH.replace('{name = "e1"}', '{name = "e1", impl_mode = "high_performance"}'))
    ).run("f", x)[0]
    plain = Program.from_module(parse_module(GRAPH.replace(', impl_mode = "high_performance"', ""))).run("f", x)[0]
    e2 = ref_exp(ref_exp(x))  # both Exps high_performance; Relu exact; the SoftmaxV2 high_precision
    want = run_op("SoftmaxV2", None, np.maximum(e2, F16(0)), attrs={"axes": (-1,)})
    np.testing.assert_array_equal(fast, want)
    assert not np.array_equal(fast, plain)


# --------------------------------------------------------------------------------------
# --compare-modes shows the cost
# --------------------------------------------------------------------------------------

LN_SOFTMAX = """func.func @f(%x: tensor<8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %y, %m, %v = ascend.LayerNorm %x, %g, %b {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64} : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  %s = ascend.SoftmaxV2 %y : (tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %s : tensor<8x64xf32>
}
"""


def test_compare_modes_high_performance_costs_precision_under_force_fp16() -> None:
    from ascend_mp.interpreter import compare_modes
    from ascend_mp.passes.impl_mode import ImplModePass

    r = np.random.default_rng(0)
    inputs = [(r.standard_normal(s) * 3).astype(np.float32) for s in ((8, 64), (64,), (64,))]
    precise = compare_modes(parse_module(LN_SOFTMAX), "f", inputs, ["force_fp16", "force_fp32"])
    module = parse_module(LN_SOFTMAX)
    ImplModePass(op_select_implmode="high_performance").apply(make_context(), module)
    fast = compare_modes(module, "f", inputs, ["force_fp16", "force_fp32"])
    assert fast[0].mean_rel_err > 1.2 * precise[0].mean_rel_err
    assert fast[1].max_rel_err == precise[1].max_rel_err  # f32 kernels: the mode changes nothing


def test_ascend_run_compare_modes_with_impl_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ascend_mp.tools.ascend_run import main

    src = tmp_path / "m.mlir"
    src.write_text(LN_SOFTMAX)

    def mean_err(extra: list[str]) -> float:
        code, out, err = run_tool(main, [str(src), "--compare-modes", "--modes", "force_fp16", *extra], capsys)
        assert code == 0, err
        row = next(line for line in out.splitlines() if line.startswith("force_fp16"))
        return float(row.split()[2])

    assert mean_err(["--op_select_implmode", "high_performance"]) > mean_err([])
