"""ascend-run in-process: outputs, inputs from files, -o, the ATC flags, and every error path."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ascend_mp.tools.ascend_run import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MLP = str(EXAMPLES / "mlp.mlir")
SMALL = """func.func @f(%x: tensor<2x3xf32>, %n: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<3xi32>) {
  %y = ascend.Relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = ascend.Add %n, %n : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %y, %m : tensor<2x3xf32>, tensor<3xi32>
}
func.func private @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
func.func @g(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  func.return %x : tensor<?x2xf32>
}
"""


@pytest.fixture
def small(tmp_path: Path) -> str:
    path = tmp_path / "small.mlir"
    path.write_text(SMALL)
    return str(path)


def ok(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    main(argv)
    out, err = capsys.readouterr()
    assert err == ""
    return out


def error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line message of a failing run (exit status 1, no traceback)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code not in (0, None)
    _, err = capsys.readouterr()
    message = str(info.value.code) if isinstance(info.value.code, str) else err.strip()
    assert "\n" not in message.strip() and "Traceback" not in message
    assert message.startswith("ascend-run: error: "), message
    return message.removeprefix("ascend-run: error: ")


# --------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------


def test_random_inputs_and_stable_output(small: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = ok([small, "--seed", "5"], capsys)
    lines = out.splitlines()
    assert lines[0] == "@f: 2 inputs, 2 outputs"
    assert lines[1].startswith("input %x: tensor<2x3xf32> sum=") and lines[1].endswith("(random, seed 5)")
    assert lines[3].startswith("input %n: tensor<3xi32> sum=")
    n = [int(v) for v in lines[4].strip(" []").split(", ")]
    assert all(0 <= v < 10 for v in n)
    assert lines[5].startswith("result0: tensor<2x3xf32> sum=") and lines[7].startswith("result1: tensor<3xi32>")
    assert [int(v) for v in lines[8].strip(" []").split(", ")] == [2 * v for v in n]
    assert lines[-1] == "float status: clear"
    assert out == ok([small, "--seed", "5"], capsys)  # same seed, same text
    assert out != ok([small, "--seed", "6"], capsys)


def test_inputs_from_npy_and_npz(small: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.5]], np.float32)
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "in.npz", n=np.array([1, 2, 3], np.int32))
    for spec in ("x", "%x", "0"):
        out = ok([small, "--input", f"{spec}={tmp_path / 'x.npy'}", "--inputs", str(tmp_path / "in.npz")], capsys)
        assert f"input %x: tensor<2x3xf32> sum=3.5000 min=-5.0000 max=6.5000 ({tmp_path / 'x.npy'})" in out
        assert (
            "result0: tensor<2x3xf32> sum=12.5000 min=0.0000 max=6.5000\n  [0.0000, 2.0000, 0.0000, 4.0000, 0.0000, 6.5000]"
            in out
        )
        assert "result1: tensor<3xi32> sum=12 min=2 max=6\n  [2, 4, 6]" in out
    np.savez(tmp_path / "both.npz", arg0=x, **{"1": np.array([0, 0, 1], np.int32)})
    assert "[0, 0, 2]" in ok([small, "--inputs", str(tmp_path / "both.npz")], capsys)


def test_output_file_is_written_atomically(small: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.npz"
    ok([small, "-o", str(out)], capsys)
    with np.load(out) as data:
        assert sorted(data.files) == ["result0", "result1"]
        assert data["result0"].dtype == np.float32 and data["result1"].dtype == np.int32
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.npz", "small.mlir"]  # no temporary left


def test_print_memory_and_timing(capsys: pytest.CaptureFixture[str]) -> None:
    out = ok([MLP, "--print-memory", "--print-timing"], capsys)
    assert "peak memory: 87592 bytes of live tensors" in out
    timing = out[out.index("time: ") :].splitlines()
    assert timing[0].endswith(" ms") and {line.split()[0] for line in timing[1:]} == {
        "MatMulV2",
        "BiasAdd",
        "Relu",
        "SoftmaxV2",
    }


def test_function_selection(small: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.save(tmp_path / "g.npy", np.ones((5, 2), np.float32))
    assert ok([small, "--function", "@g", "--input", f"x={tmp_path / 'g.npy'}"], capsys).startswith(
        "@g: 1 input, 1 output"
    )
    assert ok([small, "--function", "helper"], capsys).startswith("@helper: 1 input")  # private, but named


def test_standard_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(SMALL))
    assert ok(["-"], capsys).startswith("@f: 2 inputs")


def test_precision_flags_run_the_pass(capsys: pytest.CaptureFixture[str]) -> None:
    fp32 = ok([MLP, "--print-memory"], capsys)
    fp16 = ok([MLP, "--print-memory", "--precision_mode", "force_fp16"], capsys)
    assert "result0: tensor<64x10xf32>" in fp16  # the signature keeps its dtypes
    peak = lambda text: int(text.split("peak memory: ")[1].split()[0])  # noqa: E731
    assert peak(fp16) < 0.8 * peak(fp32)  # the fp16 intermediates
    assert ok([MLP, "--precision_mode_v2", "fp16"], capsys) == ok([MLP, "--precision_mode", "force_fp16"], capsys)


def test_compare_modes_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    main([str(EXAMPLES / "cnn.mlir"), "--compare-modes"])
    out = capsys.readouterr().out
    table = out[out.index("mode ") :].splitlines()
    assert table[0].split() == ["mode", "max_rel_err", "mean_rel_err", "peak_bytes", "low_ops", "casts"]
    rows = {line.split()[0]: line for line in table[2:]}
    assert (
        "error:" in rows["must_keep_origin_dtype"] and "cnn.mlir:3:3: Conv2D 'conv1'" in rows["must_keep_origin_dtype"]
    )
    assert len(rows["force_fp16"].split()) == 6


def test_ascend_run_does_not_import_xdsl_interpreters(small: str) -> None:
    code = f"import sys; from ascend_mp.tools.ascend_run import main; main([{small!r}]); print('xdsl.interpreters' in sys.modules, 'ascend_mp.passes.precision' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines()[-1] == "False False"


# --------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------


def test_file_errors(small: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        error([str(tmp_path / "nope.mlir")], capsys)
        == f"{tmp_path / 'nope.mlir'}: cannot read file: No such file or directory"
    )
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f() {\n  %x = ascend.Relu\n}\n")
    assert error([str(bad)], capsys).startswith(f"{bad}:3:1: ")
    missing = tmp_path / "x.npy"
    assert (
        error([small, "--input", f"x={missing}"], capsys) == f"{missing}: cannot read file: No such file or directory"
    )
    (tmp_path / "junk.npy").write_text("not numpy")
    assert error([small, "--input", f"x={tmp_path / 'junk.npy'}"], capsys).startswith(
        f"{tmp_path / 'junk.npy'}: not a .npy file"
    )
    assert error([small, "--inputs", str(tmp_path / "junk.npy")], capsys).startswith(f"{tmp_path / 'junk.npy'}: ")
    assert error([small, "-o", str(tmp_path / "no" / "dir" / "out.npz")], capsys).startswith(
        f"{tmp_path / 'no' / 'dir' / 'out.npz'}: cannot write file"
    )


def test_input_errors(small: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.save(tmp_path / "wide.npy", np.ones((2, 4), np.float32))
    np.save(tmp_path / "double.npy", np.ones((2, 3), np.float64))
    assert error([small, "--input", f"x={tmp_path / 'wide.npy'}"], capsys) == (
        f"{tmp_path / 'wide.npy'}: argument 0 (%x) of @f expects tensor<2x3xf32>, got float32 array of shape (2, 4)"
    )
    assert error([small, "--input", f"0={tmp_path / 'double.npy'}"], capsys) == (
        f"{tmp_path / 'double.npy'}: argument 0 (%x) of @f expects tensor<2x3xf32>, got float64 array of shape (2, 3)"
    )
    assert error([small, "--input", f"q={tmp_path / 'wide.npy'}"], capsys) == (
        f"--input q={tmp_path / 'wide.npy'}: 'q' names no argument (arguments: 0: %x, 1: %n)"
    )
    assert error([small, "--input", "x"], capsys) == "--input expects NAME_OR_INDEX=PATH.npy, got 'x'"
    np.savez(tmp_path / "extra.npz", bogus=np.ones(3))
    assert error([small, "--inputs", str(tmp_path / "extra.npz")], capsys) == (
        f"{tmp_path / 'extra.npz'}: 'bogus' names no argument (arguments: 0: %x, 1: %n)"
    )
    assert (
        error([small, "--function", "g"], capsys) == "argument 0 (%x) of @g has a dynamic shape; give it with --input"
    )


def test_usage_errors(small: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert error([small, "--bogus"], capsys) == "unrecognized arguments: --bogus"
    assert error([small, "--seed", "x"], capsys) == "argument --seed: expected an integer, got 'x'"
    assert error([small, "--seed", "-1"], capsys) == "argument --seed: expected an integer from 0 to 2**128-1, got -1"
    assert error([small, "--precision_mode", "fast"], capsys).startswith(
        "argument --precision_mode/--precision-mode: invalid choice: 'fast'"
    )
    assert error([small, "--function", "nope"], capsys) == "unknown function @nope (functions: @f, @helper, @g)"
    assert error([small, "--compare-modes", "--precision_mode", "force_fp16"], capsys) == (
        "--compare-modes runs every precision mode; drop --precision_mode/--precision_mode_v2"
    )
    assert error([], capsys) == "the following arguments are required: file"


def test_empty_module_has_nothing_to_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.mlir"
    path.write_text("func.func private @ext(tensor<2xf32>) -> tensor<2xf32>\n")
    assert error([str(path)], capsys) == f"{path}: no public function with a body to run"


def test_precision_pass_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = error([str(EXAMPLES / "cnn.mlir"), "--precision_mode", "must_keep_origin_dtype"], capsys)
    assert message.startswith(f"{EXAMPLES / 'cnn.mlir'}:3:3: Conv2D 'conv1' has no kernel"), message
    assert error(
        [MLP, "--precision_mode", "force_fp16", "--modify_mixlist", str(tmp_path / "none.json")], capsys
    ).startswith(str(tmp_path / "none.json"))


def test_cli_entry_point(small: str) -> None:
    tool = Path(sys.executable).parent / "ascend-run"
    assert tool.exists(), "the ascend-run console script is not installed (pip install -e .)"
    proc = subprocess.run(
        [str(tool), small, "--function", "nope"], capture_output=True, text=True, env=dict(os.environ)
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == "ascend-run: error: unknown function @nope (functions: @f, @helper, @g)\n"


# --------------------------------------------------------------------------------------
# Robustness: sizes, inputs, exit codes
# --------------------------------------------------------------------------------------


def exit_code(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    return code, capsys.readouterr().err


def test_usage_errors_exit_2_other_errors_1(small: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code([small, "--bogus"], capsys)[0] == 2
    assert exit_code([small, "--seed", "-1"], capsys)[0] == 2
    assert exit_code([small, "--compare-modes", "-o", "x.npz"], capsys)[0] == 2
    assert exit_code([small, "--function", "nope"], capsys)[0] == 1


def test_random_inputs_are_drawn_in_chunks_with_the_values_of_one_draw() -> None:
    from ascend_mp.tools import ascend_run

    n = ascend_run.RANDOM_CHUNK * 2 + 17
    for dtype, reference in (
        (np.float16, lambda r: r.standard_normal(n).astype(np.float16)),
        (np.float32, lambda r: r.standard_normal(n).astype(np.float32)),
        (np.int32, lambda r: r.integers(0, 10, n).astype(np.int32)),
        (np.bool_, lambda r: r.integers(0, 2, n).astype(np.bool_)),
    ):
        got = ascend_run.random_array(np.random.default_rng(5), np.dtype(dtype), (n,))
        assert got.dtype == dtype and np.array_equal(got, reference(np.random.default_rng(5)))


def test_huge_tensors_are_refused_before_allocating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.mlir"
    path.write_text(
        "func.func @f(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {\n"
        "  %0 = ascend.Relu %x : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>\n"
        "  func.return %0 : tensor<1024x1024xf32>\n}\n"
    )
    monkeypatch.setenv("ASCEND_MP_MAX_TENSOR_BYTES", str(1 << 20))
    assert error([str(path)], capsys) == (
        f"{path}:1:1: argument 0 of @f (tensor<1024x1024xf32>) needs 4.2 MB (1048576 elements of 4 bytes); "
        "the limit is 1.0 MB (physical memory, or $ASCEND_MP_MAX_TENSOR_BYTES)"
    )
    monkeypatch.setenv("ASCEND_MP_MAX_TENSOR_BYTES", str(1 << 23))
    assert "result0: tensor<1024x1024xf32>" in ok([str(path)], capsys)


OUTER = """func.func @f(%a: tensor<?x1xf32>, %b: tensor<1x?xf32>) -> tensor<?x?xf32> {
  %0 = ascend.MatMulV2 %a, %b : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %1 = ascend.Relu %0 : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %1 : tensor<?x?xf32>
}
func.func @g(%a: tensor<?x1xf32>, %b: tensor<1x?xf32>) -> tensor<?x?xf32> {
  %0 = func.call @f(%a, %b) : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}
"""


def _outer_inputs(tmp_path: Path, n: int) -> tuple[str, list[str]]:
    path = tmp_path / "outer.mlir"
    path.write_text(OUTER)
    np.save(tmp_path / "a.npy", np.ones((n, 1), np.float32))
    np.save(tmp_path / "b.npy", np.ones((1, n), np.float32))
    return str(path), ["--input", f"a={tmp_path / 'a.npy'}", "--input", f"b={tmp_path / 'b.npy'}"]


@pytest.mark.parametrize("extra", [[], ["--print-memory"], ["--function", "g"]])
def test_a_dynamic_result_over_the_limit_stops_the_run_at_its_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, extra: list[str]
) -> None:
    """Shapes only the run knows (here an outer product of two vectors) are checked as soon as the op made them,
    before any later op allocates: the error names the op (its file:line:col) and what its result needs."""
    path, inputs = _outer_inputs(tmp_path, 300)  # a 300x300 float32 result: 360 KB
    monkeypatch.setenv("ASCEND_MP_MAX_TENSOR_BYTES", str(100_000))
    assert error([path, *inputs, *extra], capsys) == (
        f"{path}:2:3: the result of ascend.MatMulV2 needs 360.0 KB (90000 elements of 4 bytes); "
        "the limit is 100.0 KB (physical memory, or $ASCEND_MP_MAX_TENSOR_BYTES)"
    )
    monkeypatch.setenv("ASCEND_MP_MAX_TENSOR_BYTES", str(400_000))
    assert "result0: tensor<?x?xf32> sum=90000.0000" in ok([path, *inputs, *extra], capsys)


@pytest.mark.parametrize("extra", [[], ["--print-memory"], ["--function", "g"]])
def test_a_kernel_out_of_memory_names_its_op_and_operand_shapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, extra: list[str]
) -> None:
    """A kernel whose allocation fails (numpy's MemoryError: here raised by a stand-in MatMulV2 kernel, since a
    real one depends on the machine's memory and overcommit policy) is a one-line error naming the op, also
    inside a called function and on the step-by-step path of --print-memory."""
    from ascend_mp.interpreter import compiler

    real = compiler.make_kernel

    def make_kernel(spec: Any) -> Any:
        kernel = real(spec)
        if spec.type != "MatMulV2":
            return kernel

        def failing(*args: Any) -> Any:
            raise MemoryError("Unable to allocate 3.64 TiB")

        return failing

    monkeypatch.setattr(compiler, "make_kernel", make_kernel)
    path, inputs = _outer_inputs(tmp_path, 7)
    assert error([path, *inputs, *extra], capsys) == (
        f"{path}:2:3: out of memory running ascend.MatMulV2 on operands of shapes (7, 1), (1, 7)"
    )


def test_npy_header_is_checked_before_reading(small: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from numpy.lib import format as npf

    good = tmp_path / "x.npy"
    np.save(good, np.arange(6, dtype=np.float32).reshape(2, 3))
    truncated = tmp_path / "t.npy"
    truncated.write_bytes(good.read_bytes()[:-4])
    assert error([small, "--input", f"x={truncated}"], capsys) == (
        f"{truncated}: not a readable .npy file: its header claims (2, 3) float32 (24 bytes) but the file holds 20 bytes of data"
    )
    fortran = tmp_path / "f.npy"
    np.save(fortran, np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    assert "[0.0000, 1.0000, 2.0000, 3.0000, 4.0000, 5.0000]" in ok([small, "--input", f"x={fortran}"], capsys)
    objects = tmp_path / "o.npy"
    with open(objects, "wb") as f:
        npf.write_array_header_1_0(f, {"descr": "|O", "fortran_order": False, "shape": (1,)})
        f.write(b"\0" * 8)
    assert "pickles are refused" in error([small, "--input", f"x={objects}"], capsys)


def test_npz_edge_cases(small: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.npz"
    np.savez(empty)
    assert "(random, seed 0)" in ok([small, "--inputs", str(empty)], capsys)  # a valid empty archive: nothing given
    both = tmp_path / "both.npz"
    np.savez(both, x=np.zeros((2, 3), np.float32), arg0=np.ones((2, 3), np.float32))
    assert "is already given by" in error([small, "--inputs", str(both)], capsys)
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((2, 3), np.float32))
    given = tmp_path / "given.npz"
    np.savez(given, x=np.zeros((2, 3), np.float32))
    message = error([small, "--inputs", str(given), "--input", f"0={x}"], capsys)
    assert message == f"{x}: argument 0 (%x) is already given by {given}[x]"


def test_recursion_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.mlir"
    path.write_text(
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %0 : tensor<4xf32>\n}\n"
    )
    assert error([str(path)], capsys) == f"{path}:2:3: recursive call (@f -> @f): recursion is not supported"


def test_keyboard_interrupt_exits_130(
    small: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ascend_mp.interpreter.runner import Program

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Program, "run", interrupted)
    out = tmp_path / "out.npz"
    assert exit_code([small, "-o", str(out)], capsys) == (130, "")
    assert not out.exists()
