"""The interpreter's execution: compiling modules, calls, argument checks, the float
status register (and its check analysis), float16 carried in float32 against numpy
float16, memory accounting, profiling, reference mode."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import MODES, graphs

from ascend_mp.errors import AscendError
from ascend_mp.interpreter import Program, run_function
from ascend_mp.ir import parse_module, print_module, read_module
from ascend_mp.passes.loss_scale import initial_state
from ascend_mp.passes.precision import run_precision
from ascend_mp.train import TrainConfig, compile_training

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
F16, F32, F64 = np.float16, np.float32, np.float64


def program(text: str, **kw: Any) -> Program:
    return Program.from_module(parse_module(text, "test.mlir"), **kw)


def rand(*shape: int, seed: int = 0, dtype: Any = F32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------------------


def mlp_args(seed: int = 0, dtype: Any = F32) -> list[np.ndarray]:
    return [
        rand(64, 64, seed=seed, dtype=dtype),
        rand(64, 128, seed=seed + 1, dtype=dtype) * dtype(0.1),
        rand(128, seed=seed + 2, dtype=dtype),
        rand(128, 10, seed=seed + 3, dtype=dtype) * dtype(0.1),
        rand(10, seed=seed + 4, dtype=dtype),
    ]


def numpy_mlp(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray) -> np.ndarray:
    z = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_mlp_example_matches_numpy() -> None:
    prog = Program.from_module(read_module(str(EXAMPLES / "mlp.mlir")))
    args = mlp_args()
    (probs,) = prog.run("mlp", *args)
    assert probs.dtype == np.float32 and probs.shape == (64, 10)
    np.testing.assert_allclose(probs, numpy_mlp(*[a.astype(F64) for a in args]), rtol=1e-5, atol=1e-6)
    assert prog.float_status is False


def test_reference_mode_runs_in_float64_and_ignores_declared_precision() -> None:
    text = (EXAMPLES / "mlp.mlir").read_text()
    args64 = [a.astype(F64) for a in mlp_args()]
    ref32 = program(text, reference=True).run("mlp", *args64)[0]
    ref16 = program(text.replace("f32", "f16"), reference=True).run("mlp", *[a.astype(F16) for a in args64])[0]
    assert ref32.dtype == np.float64
    np.testing.assert_allclose(ref32, numpy_mlp(*args64), rtol=1e-12, atol=1e-15)
    # the f16 graph's reference is the same graph in float64 (on the f16-rounded inputs)
    np.testing.assert_allclose(ref16, numpy_mlp(*[a.astype(F16).astype(F64) for a in args64]), rtol=1e-12, atol=1e-15)


def test_fp16_graph_rounds_every_op() -> None:
    prog = program("""
    func.func @f(%x: tensor<3xf16>) -> tensor<3xf16> {
      %y = ascend.Mul %x, %x : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
      %z = ascend.Sub %y, %x : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
      func.return %z : tensor<3xf16>
    }""")
    x = np.array([1 + 2.0**-10, 300.0, 2.0], F16)
    (z,) = prog.run("f", x)
    # (1+2^-10)^2 = 1 + 2^-9 + 2^-20 rounds to 1 + 2^-9 before the subtraction
    assert z.tolist() == [2.0**-10, np.inf, 2.0]
    assert prog.float_status is True


CALLS = """
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s, %d = func.call @sum_diff(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %r = func.call @relu(%d) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %s, %r : tensor<4xf32>, tensor<4xf32>
}
func.func private @sum_diff(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = ascend.Add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = ascend.Sub %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s, %d : tensor<4xf32>, tensor<4xf32>
}
func.func private @relu(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ascend.Relu %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
"""


@pytest.mark.parametrize("track", [False, True])
def test_func_call_between_functions(track: bool) -> None:
    prog = program(CALLS)
    x, y = np.array([1, 2, 3, 4], F32), np.array([4, 3, 2, 1], F32)
    s, r = prog.run("main", x, y, track_memory=track, profile=track)
    assert s.tolist() == [5, 5, 5, 5] and r.tolist() == [0, 0, 1, 3]
    assert prog.public == ["main"]
    if track:
        assert set(prog.op_times) == {"Add", "Sub", "Relu"}
        assert prog.peak_bytes >= 4 * 16


def test_constants() -> None:
    prog = program("""
    func.func @f() -> (tensor<2x2xf32>, tensor<3xf16>, tensor<2xi32>, tensor<3xi1>, tensor<bf16>) {
      %a = ascend.Const dense<[[1.0, 2.0], [3.0, 4.5]]> : tensor<2x2xf32>
      %b = ascend.Const dense<0.1> : tensor<3xf16>
      %c = ascend.Const dense<[7, -2]> : tensor<2xi32>
      %d = ascend.Const dense<[true, false, true]> : tensor<3xi1>
      %e = ascend.Const dense<3.0> : tensor<bf16>
      func.return %a, %b, %c, %d, %e : tensor<2x2xf32>, tensor<3xf16>, tensor<2xi32>, tensor<3xi1>, tensor<bf16>
    }""")
    a, b, c, d, e = prog.run("f")
    assert a.tolist() == [[1.0, 2.0], [3.0, 4.5]]
    assert b.dtype == F16 and b.tolist() == [np.float16(0.1)] * 3
    assert c.dtype == np.int32 and c.tolist() == [7, -2]
    assert d.dtype == np.bool_ and d.tolist() == [True, False, True]
    assert e.shape == () and float(e) == 3.0


def test_compiled_program_no_longer_needs_the_module() -> None:
    module = read_module(str(EXAMPLES / "mlp.mlir"))
    prog = Program.from_module(module)
    args = mlp_args()
    expected = prog.run("mlp", *args)[0]
    for fn in list(module.ops):  # destroy the IR: the compiled steps hold plain Python values only
        fn.detach()
        fn.erase()
    np.testing.assert_array_equal(prog.run("mlp", *args)[0], expected)


def test_run_function_and_inputs_are_not_modified() -> None:
    module = read_module(str(EXAMPLES / "mlp.mlir"))
    args = mlp_args()
    copies = [a.copy() for a in args]
    out = run_function(module, "mlp", *args)
    assert len(out) == 1
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)


# --------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------


def one_line_error(fn: Any, *args: Any, **kw: Any) -> str:
    with pytest.raises(AscendError) as info:
        fn(*args, **kw)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_argument_errors_name_the_argument() -> None:
    prog = Program.from_module(read_module(str(EXAMPLES / "mlp.mlir")))
    args = mlp_args()
    assert one_line_error(prog.run, "mlp", *args[:4]) == "@mlp takes 5 arguments, got 4"
    bad = [args[0].astype(F64), *args[1:]]
    assert (
        one_line_error(prog.run, "mlp", *bad)
        == "@mlp argument 0 (%x): expected tensor<64x64xf32>, got f64 array of shape (64, 64)"
    )
    bad = [args[0], args[1][:, :3], *args[2:]]
    assert (
        one_line_error(prog.run, "mlp", *bad)
        == "@mlp argument 1 (%w1): expected tensor<64x128xf32>, got f32 array of shape (64, 3)"
    )
    ints = [args[0], args[1], np.zeros(128, np.int32), *args[3:]]
    assert "argument 2 (%b1): expected tensor<128xf32>, got i32" in one_line_error(prog.run, "mlp", *ints)
    assert one_line_error(prog.run, "nope") == "unknown function @nope (functions: @mlp)"


def test_dynamic_dimensions_accept_any_size() -> None:
    prog = program("""
    func.func @f(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
      %y = ascend.Neg %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
      func.return %y : tensor<?x3xf32>
    }""")
    assert prog.run("f", np.ones((5, 3), F32))[0].shape == (5, 3)
    assert "expected tensor<?x3xf32>" in one_line_error(prog.run, "f", np.ones((5, 4), F32))


def test_call_to_a_declaration_is_an_error() -> None:
    message = one_line_error(
        program,
        """
    func.func private @ext(tensor<4xf32>) -> tensor<4xf32>
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = func.call @ext(%x) : (tensor<4xf32>) -> tensor<4xf32>
      func.return %y : tensor<4xf32>
    }""",
    )
    assert re.fullmatch(r"test\.mlir:4:\d+: call to @ext, which has no body in this module", message), message


def test_kernel_errors_carry_the_location() -> None:
    message = one_line_error(
        program,
        """
    func.func @f(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
      %y = ascend.MaxPool %x {ksize = array<i64: 1, 2, 1, 1>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
      func.return %y : tensor<1x4x4x4xf32>
    }""",
    )
    assert message.startswith("test.mlir:3:") and "pools only over H and W" in message


# --------------------------------------------------------------------------------------
# Float status
# --------------------------------------------------------------------------------------

OVERFLOW = """
func.func @f(%a: tensor<2x4xf16>, %b: tensor<4x2xf16>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x2xf16>) {
  %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  %before = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  %y = ascend.MatMulV2 %a, %b : (tensor<2x4xf16>, tensor<4x2xf16>) -> tensor<2x2xf16>
  %after = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  %c2 = ascend.NPUClearFloatStatus %after : (tensor<8xf32>) -> tensor<8xf32>
  %cleared = ascend.NPUGetFloatStatus %c2 : (tensor<8xf32>) -> tensor<8xf32>
  func.return %before, %after, %cleared, %y : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x2xf16>
}
"""
SET, CLEAR = [1.0] + [0.0] * 7, [0.0] * 8


@pytest.mark.parametrize("track", [False, True])
def test_overflowing_fp16_matmul_sets_the_status_and_clear_resets_it(track: bool) -> None:
    prog = program(OVERFLOW)
    big = np.full((2, 4), 200.0, F16)  # 4 * 200 * 200 = 160000 > 65504
    before, after, cleared, y = prog.run("f", big, big.T.copy(), track_memory=track)
    assert np.isinf(y).all()
    assert before.tolist() == CLEAR and after.tolist() == SET and cleared.tolist() == CLEAR
    assert prog.float_status is False  # cleared by the last NPUClearFloatStatus
    small = np.ones((2, 4), F16)
    _, after, _, _ = prog.run("f", small, small.T.copy())
    assert after.tolist() == CLEAR


def test_float_status_is_cleared_when_a_run_starts() -> None:
    prog = program("""
    func.func @f(%x: tensor<2xf16>) -> tensor<2xf16> {
      %y = ascend.Add %x, %x : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
      func.return %y : tensor<2xf16>
    }""")
    prog.run("f", np.array([60000, 1], F16))
    assert prog.float_status is True
    prog.run("f", np.array([1, 1], F16))
    assert prog.float_status is False


def test_inf_arguments_set_the_status_only_through_an_ai_core_kernel() -> None:
    prog = program("""
    func.func @f(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      %c = ascend.Const dense<3.0e+38> : tensor<2xf32>
      %y = ascend.Reshape %x : (tensor<2xf32>) -> tensor<2xf32>
      func.return %c, %y : tensor<2xf32>, tensor<2xf32>
    }""")
    c, _ = prog.run("f", np.array([1.0, 2.0], F32))
    assert prog.float_status is False
    prog.run("f", np.array([np.nan, 2.0], F32))
    assert prog.float_status is True  # the Reshape kernel wrote a NaN


STATUS_AFTER_CLEAR = """
func.func @f(%x: tensor<3xf16>) -> (tensor<8xf32>, tensor<8xf32>, tensor<3xf16>) {
  %a = ascend.Mul %x, %x : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  %g0 = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  %b = ascend.Relu %a : (tensor<3xf16>) -> tensor<3xf16>
  %g1 = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  func.return %g0, %g1, %b : tensor<8xf32>, tensor<8xf32>, tensor<3xf16>
}
"""


def test_a_kernel_after_a_clear_sets_the_status_again() -> None:
    # Relu preserves finiteness, but its operand was checked before the clear: it must check again
    g0, g1, b = program(STATUS_AFTER_CLEAR).run("f", np.array([300.0, 1.0, 2.0], F16))
    assert np.isinf(b[0]) and g0.tolist() == CLEAR and g1.tolist() == SET


TAIL_AFTER_READ = """
func.func @f(%x: tensor<3xf16>) -> (tensor<8xf32>, tensor<3xf16>) {
  %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  %a = ascend.Mul %x, %x : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %g = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  %b = ascend.Add %a, %a : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  func.return %g, %b : tensor<8xf32>, tensor<3xf16>
}
func.func @g(%x: tensor<3xf16>) -> (tensor<8xf32>, tensor<3xf16>) {
  %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  %h = ascend.Add %x, %x : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %r:2 = func.call @tail(%h) : (tensor<3xf16>) -> (tensor<3xf16>, tensor<3xf16>)
  %g = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  func.return %g, %r#0 : tensor<8xf32>, tensor<3xf16>
}
func.func private @tail(%x: tensor<3xf16>) -> (tensor<3xf16>, tensor<3xf16>) {
  %y = ascend.Add %x, %x : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  func.return %y, %y : tensor<3xf16>, tensor<3xf16>
}
"""


@pytest.mark.parametrize("final_status", [True, False])
def test_unread_final_status_drops_only_the_checks_after_the_last_read(final_status: bool) -> None:
    """With final_status=False nothing reads the register after a run: the tail after the last
    status op goes unchecked, but every status op still sees what came before it, and a called
    function keeps its checks (its caller reads the register afterwards)."""
    prog = program(TAIL_AFTER_READ, final_status=final_status)
    g, b = prog.run("f", np.array([300.0, 1.0, 2.0], F16))  # the Mul overflows before the read
    assert g.tolist() == SET and np.isinf(b[0]) and prog.float_status is True
    g, b = prog.run("f", np.array([200.0, 1.0, 2.0], F16))  # only the Add after the read overflows
    assert g.tolist() == CLEAR and np.isinf(b[0])
    assert prog.float_status is final_status  # no one looks: the check is left out
    checks = {name: fn.source.count("st.flag = True") for name, fn in prog.functions.items()}
    assert checks == {"f": 2 if final_status else 1, "g": 1, "tail": 1}  # Mul (+ Add); @g's Add; @tail's Add
    g, r = prog.run("g", np.array([20000.0, 1.0, 2.0], F16))
    assert np.isinf(r[0]) and g.tolist() == SET  # the overflow inside @tail reaches @g's read either way


def test_training_programs_do_not_track_the_final_status_and_train_the_same() -> None:
    """The trainer compiles its step with final_status=False; the step's results are the same
    bits as a program that checks everything (the step reads the status with its own ops)."""
    compiled = compile_training(
        TrainConfig(model="mlp", batch=8, precision_mode="allow_mix_precision", loss_scale="dynamic")
    )
    assert compiled.program.final_status is False
    full = Program.from_module(compiled.module)
    state = initial_state(compiled.step_fn, compiled.model.init_params(0))
    specs = full.signature("train_step")[0]
    n = len(state.args())
    for scale in (state.loss_scale, np.array(2.0**40, F32)):  # a clean step, then one that overflows in fp16
        x = rand(*specs[n].shape, seed=1) * F32(1e3 if scale > 2.0**20 else 1)
        labels = np.eye(specs[n + 1].shape[1], dtype=F32)[np.arange(specs[n + 1].shape[0]) % specs[n + 1].shape[1]]
        args = [*state.args(), x, labels, np.asarray(scale, F32), state.good_steps, state.step]
        ours, ref = compiled.program.run("train_step", *args), full.run("train_step", *args)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(ours, ref, strict=True))
        overflowed = any(r.shape == () and r == scale / 2 for r in ours)  # the dynamic scale backs off
        assert overflowed == bool(scale > 2.0**20)


def test_overflow_hidden_by_a_later_op_is_still_seen() -> None:
    prog = program("""
    func.func @f(%x: tensor<3xf16>, %one: tensor<3xf16>) -> tensor<3xf16> {
      %a = ascend.Mul %x, %x : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
      %b = ascend.RealDiv %one, %a : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
      func.return %b : tensor<3xf16>
    }""")
    (b,) = prog.run("f", np.array([300.0, 1.0, 2.0], F16), np.ones(3, F16))
    assert np.isfinite(b).all() and prog.float_status is True  # 1 / inf = 0, but Mul overflowed


def test_inf_hidden_by_maximum_is_still_seen() -> None:
    prog = program("""
    func.func @f(%x: tensor<2xf16>, %y: tensor<2xf16>) -> tensor<2xf16> {
      %a = ascend.Log %x : (tensor<2xf16>) -> tensor<2xf16>
      %b = ascend.Maximum %a, %y : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
      func.return %b : tensor<2xf16>
    }""")
    (b,) = prog.run("f", np.zeros(2, F16), np.ones(2, F16))
    assert b.tolist() == [1.0, 1.0] and prog.float_status is True  # log(0) = -inf


def test_overflow_in_a_callee_is_seen_by_the_caller() -> None:
    prog = program("""
    func.func @main(%x: tensor<2xf16>) -> tensor<8xf32> {
      %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
      %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
      %y = func.call @square(%x) : (tensor<2xf16>) -> tensor<2xf16>
      %g = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
      func.return %g : tensor<8xf32>
    }
    func.func private @square(%x: tensor<2xf16>) -> tensor<2xf16> {
      %y = ascend.Mul %x, %x : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
      %z = ascend.Neg %y : (tensor<2xf16>) -> tensor<2xf16>
      func.return %x : tensor<2xf16>
    }""")
    assert prog.run("main", np.array([1000.0, 1.0], F16))[0].tolist() == SET
    assert prog.run("main", np.array([10.0, 1.0], F16))[0].tolist() == CLEAR


# A random straight-line graph: the analysed checks must give the same status reads as
# checking every result.
UNARY = ["Neg", "Relu", "Exp", "Square", "Sigmoid", "Floor", "Tanh", "Log", "Sqrt"]
BINARY = ["Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum"]
STATUS = ["Clear", "Get"]


@st.composite
def status_graphs(draw: st.DrawFn) -> tuple[str, int]:
    lines = ["%s = ascend.NPUAllocFloatStatus : tensor<8xf32>"]
    values = ["%x", "%y"]
    dtype = {"%x": "f16", "%y": "f16"}
    gets: list[str] = []
    for i in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "cast", "status", "reshape", "matmul"]))
        name = f"%v{i}"
        if kind == "status":
            which = draw(st.sampled_from(STATUS))
            if which == "Clear":
                lines.append(f"%c{i} = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>")
            else:
                lines.append(f"%g{i} = ascend.NPUGetFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>")
                gets.append(f"%g{i}")
            continue
        a = draw(st.one_of(st.just(values[-1]), st.sampled_from(values)))  # mostly chains
        t = dtype[a]
        if kind == "unary":
            lines.append(f"{name} = ascend.{draw(st.sampled_from(UNARY))} {a} : (tensor<2x2x{t}>) -> tensor<2x2x{t}>")
        elif kind == "reshape":
            lines.append(f"{name} = ascend.Reshape {a} : (tensor<2x2x{t}>) -> tensor<2x2x{t}>")
        elif kind == "cast":
            t2 = "f32" if t == "f16" else "f16"
            lines.append(f"{name} = ascend.Cast {a} : (tensor<2x2x{t}>) -> tensor<2x2x{t2}>")
            t = t2
        else:
            b = draw(st.sampled_from([v for v in values if dtype[v] == t]))
            op = "MatMulV2" if kind == "matmul" else draw(st.sampled_from(BINARY))
            lines.append(f"{name} = ascend.{op} {a}, {b} : (tensor<2x2x{t}>, tensor<2x2x{t}>) -> tensor<2x2x{t}>")
        values.append(name)
        dtype[name] = t
    outs = gets + [values[-1]]  # the last value: earlier ones are often consumed once, by one op
    types = ["tensor<8xf32>"] * len(gets) + [f"tensor<2x2x{dtype[outs[-1]]}>"]
    body = "\n  ".join(lines)
    text = f"""func.func @f(%x: tensor<2x2xf16>, %y: tensor<2x2xf16>) -> ({", ".join(types)}) {{
  {body}
  func.return {", ".join(outs)} : {", ".join(types)}
}}"""
    return text, len(gets)


VALUES = st.sampled_from(
    [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 255.0, -300.0, 65504.0, -65504.0, 6e-8, np.inf, -np.inf, np.nan]
)


@settings(max_examples=100, deadline=None)
@given(graph=status_graphs(), x=st.lists(VALUES, min_size=4, max_size=4), y=st.lists(VALUES, min_size=4, max_size=4))
def test_status_analysis_agrees_with_checking_every_result(
    graph: tuple[str, int], x: list[float], y: list[float]
) -> None:
    text, _ = graph
    module = parse_module(text, "graph.mlir")
    args = [np.array(x, F16).reshape(2, 2), np.array(y, F16).reshape(2, 2)]
    fast, full = Program.from_module(module), Program.from_module(module, status_analysis=False)
    got, want = fast.run("f", *args), full.run("f", *args)
    for g, w in zip(got[:-1], want[:-1]):
        assert g.tolist() == w.tolist(), text
    assert fast.float_status == full.float_status, text
    fast.run("f", *args, track_memory=True)  # the step loop agrees with the generated code
    assert fast.float_status == full.float_status, text


SPECIALS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    12.0,
    -12.0,
    300.0,
    -300.0,
    65504.0,
    -65504.0,
    6e-8,
    3e38,
    np.inf,
    -np.inf,
    np.nan,
]
T22, T2, T4, S = "tensor<2x2xf16>", "tensor<2xf16>", "tensor<4xf16>", "tensor<f16>"
X4, K2, Y2 = "tensor<1x1x3x3xf16>", "tensor<1x1x2x2xf16>", "tensor<1x1x2x2xf16>"
CONV = "strides = array<i64: 1, 1, 1, 1>"
PER_OP: list[tuple[str, list[str], str, list[str]]] = [
    # op, operand types, attributes, result types
    *[(op, [T22], "", [T22]) for op in UNARY + ["Rsqrt", "Gelu", "LeakyRelu"]],
    *[
        (op, [T22, T22], "", [T22])
        for op in BINARY + ["Pow", "MatMulV2", "SoftmaxGrad", "SigmoidGrad", "TanhGrad", "ReluGrad", "LeakyReluGrad"]
    ],
    ("MatMul", [T22, T22, T2], "{transpose_x1 = true}", [T22]),
    ("BatchMatMul", ["tensor<1x2x2xf16>", "tensor<1x2x2xf16>"], "", ["tensor<1x2x2xf16>"]),
    ("BiasAdd", [T22, T2], "", [T22]),
    ("Cast", [T22], "", ["tensor<2x2xf32>"]),
    ("Cast", ["tensor<2x2xf32>"], "", [T22]),
    ("Reshape", [T22], "", [T4]),
    ("Transpose", [T22], "{perm = array<i64: 1, 0>}", [T22]),
    ("ConcatV2D", [T22, T22], "{concat_dim = 0 : i64}", ["tensor<4x2xf16>"]),
    ("ReduceSum", [T22], "{axes = array<i64: 0>}", [T2]),
    ("ReduceMean", [T22], "{axes = array<i64: 1>}", [T2]),
    ("ReduceMax", [T22], "{axes = array<i64: 0>}", [T2]),
    ("BiasAddGrad", [T22], "", [T2]),
    ("SoftmaxV2", [T22], "", [T22]),
    ("LogSoftmaxV2", [T22], "", [T22]),
    ("SoftmaxCrossEntropyWithLogits", [T22, T22], "", [T2, T22]),
    ("Conv2D", [X4, K2], f"{{{CONV}}}", [Y2]),
    ("DepthwiseConv2D", [X4, "tensor<2x2x1x1xf16>"], f"{{{CONV}}}", [Y2]),
    ("Conv2DBackpropFilter", [X4, Y2], f"{{{CONV}, filter_size = array<i64: 1, 1, 2, 2>}}", [K2]),
    # stride 2 with a 1x1 filter skips input pixels: their inf/NaN reaches no output
    ("Conv2D", [X4, "tensor<1x1x1x1xf16>"], "{strides = array<i64: 1, 1, 2, 2>}", [Y2]),
    (
        "Conv2DBackpropFilter",
        [X4, Y2],
        "{strides = array<i64: 1, 1, 2, 2>, filter_size = array<i64: 1, 1, 1, 1>}",
        ["tensor<1x1x1x1xf16>"],
    ),
    ("Conv2DBackpropInput", [K2, Y2], f"{{{CONV}, input_size = array<i64: 1, 1, 3, 3>}}", [X4]),
    ("MaxPool", [X4], "{ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 1, 1>}", [Y2]),
    ("AvgPool", [X4], "{ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 1, 1>}", [Y2]),
    ("ApplyGradientDescent", [T22, S, T22], "", [T22]),
    ("ApplyMomentumD", [T22, T22, S, T22, S], "", [T22, T22]),
]


def _shape(t: str) -> tuple[int, ...]:
    return tuple(int(d) for d in t.split("<")[1].split("x")[:-1])


def _dtype(t: str) -> Any:
    return F16 if t.endswith("f16>") else F32


@pytest.mark.parametrize("keep_operands", [False, True], ids=["propagation", "preservation"])
@pytest.mark.parametrize(
    "op,operand_types,attrs,result_types", PER_OP, ids=[f"{p[0]}-{i}" for i, p in enumerate(PER_OP)]
)
def test_status_analysis_per_op(
    op: str, operand_types: list[str], attrs: str, result_types: list[str], keep_operands: bool
) -> None:
    """Each op's claims against checking every result, for pairs of special values.

    Neg makes the operands; ReluGrad(1, y) masks every inf/NaN of the op's first result,
    so that result is checked only if the analysis distrusts the op. Returning the
    operands too (`keep_operands`) has them checked directly, which tests the claim that
    finite operands give finite results; otherwise they are checked only if the op does
    not propagate their inf/NaN."""
    n = len(operand_types)
    negs = "\n".join(f"  %n{i} = ascend.Neg %x{i} : ({t}) -> {t}" for i, t in enumerate(operand_types))
    names = ["%c"] + [f"%c{i}" for i in range(1, len(result_types))]
    r0 = result_types[0]
    returned = [("%d", r0), *zip(names[1:], result_types[1:])]
    if keep_operands:
        returned += [(f"%n{i}", t) for i, t in enumerate(operand_types)]
    args = ", ".join(f"%x{i}: {t}" for i, t in enumerate(operand_types))
    text = f"""func.func @f({args}, %one: {r0}) -> ({", ".join(t for _, t in returned)}) {{
{negs}
  {", ".join(names)} = ascend.{op} {", ".join(f"%n{i}" for i in range(n))} {attrs} : ({", ".join(operand_types)}) -> ({", ".join(result_types)})
  %d = ascend.ReluGrad %one, %c : ({r0}, {r0}) -> {r0}
  func.return {", ".join(v for v, _ in returned)} : {", ".join(t for _, t in returned)}
}}"""
    module = parse_module(text, "op.mlir")
    fast, full = Program.from_module(module), Program.from_module(module, status_analysis=False)
    one = np.ones(_shape(r0), _dtype(r0))
    with np.errstate(over="ignore"):
        for u, v in itertools.product(SPECIALS, SPECIALS):
            # operand 0: u everywhere or u / v alternating; the others: v, v / u, u / v or u
            for base, alternate in ((None, None), (v, u), (u, v), (u, u)):
                xs = []
                for i, t in enumerate(operand_types):
                    a = np.full(_shape(t), u if i == 0 else (base if base is not None else v), _dtype(t))
                    if base is not None:
                        a.reshape(-1)[1::2] = v if i == 0 else alternate
                    xs.append(a)
                fast.run("f", *xs, one)
                full.run("f", *xs, one)
                assert fast.float_status == full.float_status, f"{op}{tuple(x.tolist() for x in xs)}"


@pytest.mark.parametrize("keep_operands", [False, True], ids=["propagation", "preservation"])
@pytest.mark.parametrize("mask", [False, True], ids=["flag", "greater-mask"])
def test_status_analysis_of_select_and_greater(mask: bool, keep_operands: bool) -> None:
    """Select copies one operand (finite operands: finite result) and lets the other's inf/NaN
    go nowhere, so the analysis checks its operands rather than its result; Greater's bool
    result has nothing to check. Checked against checking every result, for special values."""
    t = "tensor<2x2xf16>"
    cond = "%g" if mask else "%c"
    ret = [("%d", t)] + ([("%a", t), ("%b", t)] if keep_operands else [])
    text = f"""func.func @f(%c: tensor<i1>, %x: {t}, %y: {t}, %one: {t}) -> ({", ".join(r for _, r in ret)}) {{
  %a = ascend.Neg %x : ({t}) -> {t}
  %b = ascend.Neg %y : ({t}) -> {t}
  %g = ascend.Greater %a, %b : ({t}, {t}) -> tensor<2x2xi1>
  %s = ascend.Select {cond}, %a, %b : ({"tensor<2x2xi1>" if mask else "tensor<i1>"}, {t}, {t}) -> {t}
  %d = ascend.ReluGrad %one, %s : ({t}, {t}) -> {t}
  func.return {", ".join(v for v, _ in ret)} : {", ".join(r for _, r in ret)}
}}"""
    module = parse_module(text, "select.mlir")
    fast, full = Program.from_module(module), Program.from_module(module, status_analysis=False)
    steps = {s.op_type: s for s in fast.functions["f"].steps}
    assert steps["Select"].checks == () and steps["Greater"].checks == ()
    one = np.ones((2, 2), F16)
    with np.errstate(over="ignore"):
        for u, v in itertools.product(SPECIALS, SPECIALS):
            for c in (True, False):
                x, y = np.array([[u, v], [v, u]], F16), np.full((2, 2), v, F16)
                fast.run("f", np.array(c), x, y, one)
                full.run("f", np.array(c), x, y, one)
                assert fast.float_status == full.float_status, (c, u, v)


def test_status_analysis_checks_few_results_of_a_training_step() -> None:
    prog = Program.from_module(read_module(str(EXAMPLES / "run_mlp_train.mlir")))
    steps = prog.functions["train_step"].steps
    checked = sum(len(s.checks) for s in steps)
    # the returned loss and parameters, plus the two values only Relu/ReluGrad consume
    assert checked == 7, [(s.op_type, len(s.checks)) for s in steps]


# --------------------------------------------------------------------------------------
# float16 carried in float32
# --------------------------------------------------------------------------------------


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtypes, shapes and values, NaN where NaN, signed zeros included."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind != "f" and a.dtype.name != "bfloat16":
        return bool((a == b).all())
    wide_a, wide_b = a.astype(F64), b.astype(F64)
    nan = np.isnan(wide_a)
    return bool(
        (nan == np.isnan(wide_b)).all()
        and (wide_a[~nan] == wide_b[~nan]).all()
        and (np.signbit(wide_a) == np.signbit(wide_b))[~nan].all()
    )


def graph_args(module: Any, fn: str, seed: int) -> list[np.ndarray]:
    """Random arguments for `fn`: mostly moderate values, some huge (fp16 overflow), tiny and special ones."""
    specs, _ = Program.from_module(module).signature(fn)
    r = np.random.default_rng(seed)
    args = []
    for s in specs:
        v = r.standard_normal(s.shape) * r.choice([1.0, 30.0, 1e-5])
        flat = v.reshape(-1)
        picks = r.integers(0, flat.size, 3)
        flat[picks] = r.choice([0.0, -0.0, 7e4, -7e4, 3e-8, np.inf, np.nan], 3)
        with np.errstate(over="ignore"):
            args.append(v.astype(s.dtype))
    return args


@settings(max_examples=40, deadline=None)
@given(graph=graphs(), mode=st.sampled_from(MODES), seed=st.integers(0, 2**16))
def test_carried_f16_programs_match_native_float16(graph: tuple[str, Any], mode: str, seed: int) -> None:
    """Random graphs after the precision pass: results and float status bit for bit the same
    whether float16 tensors are carried in float32 (the default) or numpy float16 arrays."""
    soc, module = graph
    try:
        run_precision(module, mode=mode, soc=soc)
    except AscendError:
        return  # must_keep_origin_dtype without a kernel (the precision tests cover it)
    carried, native = Program.from_module(module), Program.from_module(module, carry_f16=False)
    args = graph_args(module, "g", seed)
    ours, want = carried.run("g", *args), native.run("g", *[a.copy() for a in args])
    for a, b in zip(ours, want):
        assert same_bits(a, b), print_module(module)
    assert carried.float_status == native.float_status
    carried.run("g", *args, track_memory=True)
    native.run("g", *args, track_memory=True)
    assert carried.peak_bytes == native.peak_bytes


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_carried_f16_training_step_matches_native_float16(model: str) -> None:
    compiled = compile_training(
        TrainConfig(model=model, batch=8, precision_mode="allow_mix_precision", loss_scale="dynamic")
    )
    native = Program.from_module(compiled.module, carry_f16=False)
    state = initial_state(compiled.step_fn, compiled.model.init_params(0))
    specs, _ = native.signature("train_step")
    n = len(state.args())
    r = np.random.default_rng(1)
    x = r.standard_normal(specs[n].shape).astype(F32)
    labels = np.eye(10, dtype=F32)[r.integers(0, 10, x.shape[0])]
    for scale in (256.0, 2.0**40):  # a clean step, then one whose scaled gradients overflow fp16
        args = [*state.args(), x, labels, np.array(scale, F32), state.good_steps, state.step]
        ours, want = compiled.program.run("train_step", *args), native.run("train_step", *args)
        assert all(same_bits(a, b) for a, b in zip(ours, want))
        assert bool(ours[-1]) == (scale > 2.0**20)


# --------------------------------------------------------------------------------------
# Memory and profiling
# --------------------------------------------------------------------------------------


def test_peak_bytes_follow_liveness() -> None:
    prog = program("""
    func.func @f(%x: tensor<4xf32>) -> tensor<2x2xf32> {
      %a = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
      %b = ascend.Neg %a : (tensor<4xf32>) -> tensor<4xf32>
      %c = ascend.Reshape %b : (tensor<4xf32>) -> tensor<2x2xf32>
      %d = ascend.Neg %c : (tensor<2x2xf32>) -> tensor<2x2xf32>
      func.return %d : tensor<2x2xf32>
    }""")
    prog.run("f", np.ones(4, F32), track_memory=True)
    # x + a live together (32 bytes), then a + b, b + d (Reshape shares b's buffer): never 3 tensors
    assert prog.peak_bytes == 32


def test_activation_bytes_leave_out_the_arguments() -> None:
    """Counted by hand: x, w 64 B each (f32 4x4). MatMul: x+w+a live (192), w dies; Relu: x+a+b (192),
    a dies; Add: x+b+c (192). Activations (arguments left out): a, then a+b (128), then b+c (128).
    The f16 variant counts 2 bytes per element and the cast is an activation too."""
    prog = program("""
    func.func @f(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %a = ascend.MatMulV2 %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      %b = ascend.Relu %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
      %c = ascend.Add %b, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      func.return %c : tensor<4x4xf32>
    }
    func.func @g(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf16> {
      %h = ascend.Cast %x : (tensor<4x4xf32>) -> tensor<4x4xf16>
      %y = func.call @f(%x, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      %z = ascend.Cast %y : (tensor<4x4xf32>) -> tensor<4x4xf16>
      %s = ascend.Add %z, %h : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
      func.return %s : tensor<4x4xf16>
    }""")
    x, w = rand(4, 4), rand(4, 4, seed=1)
    prog.run("f", x, w, track_memory=True)
    assert (prog.peak_bytes, prog.peak_activation_bytes) == (192, 128)
    prog.run("g", x, w, track_memory=True)
    # h (32 B) lives across the call, whose own activations peak at 128: 160; then y+z (64+32), z+h+s (96)
    assert prog.peak_activation_bytes == 160
    assert prog.peak_bytes == 32 + 192  # h, and the callee's own peak (x + w + a)


def test_unused_results_are_freed_at_once() -> None:
    prog = program("""
    func.func @f(%z: tensor<8x10xf32>, %t: tensor<8x10xf32>) -> tensor<8xf32> {
      %l, %g = ascend.SoftmaxCrossEntropyWithLogits %z, %t : (tensor<8x10xf32>, tensor<8x10xf32>) -> (tensor<8xf32>, tensor<8x10xf32>)
      %m = ascend.Neg %l : (tensor<8xf32>) -> tensor<8xf32>
      func.return %m : tensor<8xf32>
    }""")
    prog.run("f", rand(8, 10), rand(8, 10, seed=1), track_memory=True)
    # during the first op: z, t, l, g (320 + 320 + 32 + 320); g dies unused, z and t after it
    assert prog.peak_bytes == 992


def test_fp16_mlp_has_about_half_the_peak_bytes_of_fp32() -> None:
    text = (EXAMPLES / "run_mlp_train.mlir").read_text()
    peaks = {}
    for dtype, np_dtype in (("f32", F32), ("f16", F16)):
        prog = program(text.replace("f32", dtype))
        specs, _ = prog.signature("train_step")
        args = [rand(*s.shape, seed=i, dtype=np_dtype) for i, s in enumerate(specs)]
        prog.run("train_step", *args, track_memory=True)
        peaks[dtype] = prog.peak_bytes
    assert peaks["f32"] > 100_000
    assert 0.45 <= peaks["f16"] / peaks["f32"] <= 0.55, peaks


def test_profile_times_every_op_type() -> None:
    prog = Program.from_module(read_module(str(EXAMPLES / "mlp.mlir")))
    prog.run("mlp", *mlp_args(), profile=True)
    assert set(prog.op_times) == {"MatMulV2", "BiasAdd", "Relu", "SoftmaxV2"}
    assert all(t > 0 for t in prog.op_times.values())


# --------------------------------------------------------------------------------------
# Speed
# --------------------------------------------------------------------------------------


def numpy_train_step(
    x: np.ndarray, y: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray, lr: np.ndarray
) -> list[np.ndarray]:
    h = x @ w1 + b1
    a = np.maximum(h, np.float32(0))
    z = a @ w2 + b2
    s = z - z.max(1, keepdims=True)
    logp = s - np.log(np.exp(s).sum(1, keepdims=True))
    loss = -(y * logp).sum(1).mean()
    dz = (np.exp(logp) - y) * np.float32(1 / 64)
    da = dz @ w2.T
    dh = np.where(h > 0, da, np.float32(0))
    return [np.asarray(loss), w1 - lr * (x.T @ dh), b1 - lr * dh.sum(0), w2 - lr * (a.T @ dz), b2 - lr * dz.sum(0)]


def train_step_args() -> list[np.ndarray]:
    r = np.random.default_rng(0)
    return [
        r.standard_normal((64, 64)).astype(F32),
        np.eye(10, dtype=F32)[r.integers(0, 10, 64)],
        (r.standard_normal((64, 128)) * 0.1).astype(F32),
        np.zeros(128, F32),
        (r.standard_normal((128, 10)) * 0.1).astype(F32),
        np.zeros(10, F32),
        np.array(0.1, F32),
    ]


def test_training_step_matches_numpy() -> None:
    """Speed against numpy is a benchmark figure (benchmarks/run.py --only step), not a unit test."""
    prog = Program.from_module(read_module(str(EXAMPLES / "run_mlp_train.mlir")))
    args = train_step_args()
    ours, ref = prog.run("train_step", *args), numpy_train_step(*args)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
