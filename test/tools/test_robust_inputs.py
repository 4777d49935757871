"""Inputs and outputs that are not regular files: named pipes (with and without the other end), devices,
inputs larger than the limit. Each tool call runs in a thread with a deadline, so a regression that blocks
fails the test instead of hanging the suite (real `os.mkfifo` pipes in a temporary folder)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from test_error_corpus import CORPUS, Result, run_in_process

INPUTS = CORPUS / "inputs"
DEADLINE = 60.0


@pytest.fixture(autouse=True)
def short_pipe_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASCEND_MP_PIPE_WAIT", "0.3")


def call(tool: str, args: list[str], stdin: bytes = b"") -> Result:
    """The tool in-process, in a thread: fails (instead of hanging) when it has not returned by DEADLINE."""
    box: list[Result | BaseException] = []

    def target() -> None:
        try:
            box.append(run_in_process(tool, args, stdin))
        except BaseException as e:  # noqa: BLE001 - reported below
            box.append(e)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(DEADLINE)
    assert not thread.is_alive(), f"{tool} {args} still runs after {DEADLINE} s (blocked on a pipe?)"
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def one_error(result: Result, tool: str, *says: str) -> str:
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{tool}: error: "), result.stderr
    for text in says:
        assert text in lines[0], lines[0]
    return lines[0]


def writer(path: Path, data: bytes) -> threading.Thread:
    """A thread that opens the pipe for writing (blocking until a reader comes) and writes `data`."""

    def write() -> None:
        try:
            with open(path, "wb") as f:
                f.write(data)
        except BrokenPipeError:  # the reader stopped early (an input over the limit)
            pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


# --------------------------------------------------------------------------------------
# A named pipe as an input: no writer is one line after a bounded wait; with a writer it is read
# --------------------------------------------------------------------------------------

NO_WRITER = "named pipe that no process writes"

CASES: list[tuple[str, str, Callable[[str], list[str]]]] = [
    ("ascend-opt", "model.mlir", lambda p: [p]),
    ("ascend-opt", "model.onnx", lambda p: [p]),
    ("ascend-run", "model.onnx", lambda p: [p]),
    ("ascend-run", "model.mlir", lambda p: [p]),
    ("ascend-run", "x.npy", lambda p: [str(INPUTS / "good.mlir"), "--input", f"0={p}"]),
    ("ascend-run", "x.npz", lambda p: [str(INPUTS / "good.mlir"), "--inputs", p]),
    (
        "ascend-opt",
        "to_float.txt",
        lambda p: [str(INPUTS / "good.mlir"), "--precision_mode", "allow_mix_precision", "--to_float", p],
    ),
    (
        "ascend-opt",
        "keep.txt",
        lambda p: [str(INPUTS / "good.mlir"), "--precision_mode", "allow_mix_precision", "--keep_dtype", p],
    ),
    ("ascend-opt", "mode.ini", lambda p: [str(INPUTS / "good.mlir"), "--op_precision_mode", p]),
    (
        "ascend-opt",
        "mixlist.json",
        lambda p: [str(INPUTS / "good.mlir"), "--precision_mode", "allow_mix_precision", "--modify_mixlist", p],
    ),
]


@pytest.mark.parametrize(("tool", "name", "argv"), CASES, ids=[f"{t}-{n}" for t, n, _ in CASES])
def test_a_pipe_without_writer_is_one_line(
    tool: str, name: str, argv: Callable[[str], list[str]], tmp_path: Path
) -> None:
    path = fifo(tmp_path, name)
    one_error(call(tool, argv(str(path))), tool, str(path), NO_WRITER)


def test_op_info_pipe_is_refused(tmp_path: Path) -> None:
    """--op_info is read by its path (a file or a folder): a pipe is refused at once, not opened."""
    path = fifo(tmp_path, "ops.json")
    result = call("ascend-opt", [str(INPUTS / "good.mlir"), "--precision_mode", "force_fp16", "--op_info", str(path)])
    one_error(result, "ascend-opt", str(path), "it is a named pipe")


def test_resume_from_a_pipe_is_refused(tmp_path: Path) -> None:
    path = fifo(tmp_path, "checkpoint.npz")
    one_error(
        call("ascend-train", ["--resume", str(path), "--epochs", "1"]), "ascend-train", str(path), "not a regular file"
    )


def test_a_pipe_with_a_writer_is_read(tmp_path: Path) -> None:
    model = fifo(tmp_path, "model.mlir")
    feed = writer(model, (INPUTS / "good.mlir").read_bytes())
    result = call("ascend-opt", [str(model)])
    feed.join(DEADLINE)
    assert result.returncode == 0, result.stderr
    assert "func.func" in result.stdout
    keep = fifo(tmp_path, "keep.txt")
    feed = writer(keep, b"# nothing kept\n")
    result = call(
        "ascend-opt", [str(INPUTS / "good.mlir"), "--precision_mode", "allow_mix_precision", "--keep_dtype", str(keep)]
    )
    feed.join(DEADLINE)
    assert result.returncode == 0, result.stderr


def test_dash_reads_standard_input() -> None:
    result = call("ascend-opt", ["-"], (INPUTS / "good.mlir").read_bytes())
    assert result.returncode == 0, result.stderr
    assert "func.func" in result.stdout


# --------------------------------------------------------------------------------------
# A named pipe as an output: written through when read, one line when nobody reads
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["ascend-opt", "ascend-run"])
def test_output_pipe_without_reader_is_one_line(tool: str, tmp_path: Path) -> None:
    out = fifo(tmp_path, "out")
    one_error(
        call(tool, [str(INPUTS / "good.mlir"), "-o", str(out)]), tool, str(out), "named pipe that no process reads"
    )
    assert os.path.exists(out) and not out.is_file()  # still the pipe, never replaced


# --------------------------------------------------------------------------------------
# Devices and size limits
# --------------------------------------------------------------------------------------


def test_onnx_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "zero.onnx"
    link.symlink_to("/dev/zero")
    for tool in ("ascend-opt", "ascend-run"):
        one_error(call(tool, [str(link)]), tool, str(link), "device")


def test_to_float_device_is_refused() -> None:
    result = call(
        "ascend-opt", [str(INPUTS / "good.mlir"), "--precision_mode", "allow_mix_precision", "--to_float", "/dev/zero"]
    )
    one_error(result, "ascend-opt", "/dev/zero", "device")


def test_input_over_the_limit_is_refused_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASCEND_MP_MAX_TENSOR_BYTES", "100")
    one_error(
        call("ascend-opt", [str(INPUTS / "good.mlir")]), "ascend-opt", "good.mlir", "more than the limit of 100 bytes"
    )


def test_endless_pipe_is_cut_at_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASCEND_MP_MAX_TENSOR_BYTES", "100000")
    path = fifo(tmp_path, "model.mlir")
    feed = writer(path, b"// " + b"x" * 1_000_000)
    result = call("ascend-opt", [str(path)])
    one_error(result, "ascend-opt", str(path), "more than the limit")
    feed.join(1)  # the writer gets a broken pipe once the reader closes


# --------------------------------------------------------------------------------------
# Zip bombs: refused from the headers, for --inputs and --resume alike
# --------------------------------------------------------------------------------------


def _bomb(path: Path, nbytes: int) -> None:
    import zipfile

    from numpy.lib import format as npy

    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z,
        z.open("param_0.npy", "w", force_zip64=True) as m,
    ):
        npy.write_array(m, np.zeros(nbytes // 4, np.float32))


@pytest.mark.parametrize("tool", ["ascend-run", "ascend-train"])
def test_zip_bomb_refused_from_its_headers(tool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = tmp_path / "bomb.npz"
    _bomb(bomb, 40_000_000)
    assert bomb.stat().st_size < 200_000
    monkeypatch.setenv("ASCEND_MP_MAX_TENSOR_BYTES", "10000000")
    import tracemalloc

    tracemalloc.start()
    try:
        if tool == "ascend-run":
            result = call(tool, [str(INPUTS / "good.mlir"), "--inputs", str(bomb)])
        else:
            result = call(tool, ["--resume", str(bomb), "--epochs", "1"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    one_error(result, tool, str(bomb), "the limit is 10.0 MB")
    assert peak < 8_000_000, f"{peak} bytes allocated before refusing"


# --------------------------------------------------------------------------------------
# Outputs are committed only when all are good, devices included
# --------------------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_failing_device_output_changes_no_other_output(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    out.write_text("precious\n")
    result = call(
        "ascend-opt",
        [
            str(INPUTS / "good.mlir"),
            "--precision_mode",
            "force_fp16",
            "--precision-report",
            "/dev/full",
            "-o",
            str(out),
        ],
    )
    one_error(result, "ascend-opt", "/dev/full", "No space left on device")
    assert out.read_text() == "precious\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]


# --------------------------------------------------------------------------------------
# Long chains (no deep recursion) and output names that must read back
# --------------------------------------------------------------------------------------


def _chain(n: int) -> str:
    lines = ["func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {"]
    prev = "%x"
    for i in range(n):
        lines.append(f'  %{i} = ascend.Relu {prev} {{name = "r{i}"}} : (tensor<4xf32>) -> tensor<4xf32>')
        prev = f"%{i}"
    return "\n".join([*lines, f"  func.return {prev} : tensor<4xf32>", "}", ""])


def test_policy_views_of_a_long_chain(tmp_path: Path) -> None:
    import sys

    src = tmp_path / "chain.mlir"
    src.write_text(_chain(400))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)  # a copy that recursed along the chain would need a frame per op
    try:
        result = call(
            "ascend-opt",
            [
                str(src),
                "--compare-policies",
                "--precision-dot",
                str(tmp_path / "g.dot"),
                "--precision_mode",
                "allow_mix_precision",
            ],
        )
    finally:
        sys.setrecursionlimit(limit)
    assert result.returncode == 0, result.stderr
    assert "r399" in result.stdout and "r399" in (tmp_path / "g.dot").read_text()


def test_output_names_that_are_not_plain_npz_members(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    names = ["file", "allow_pickle", "../../evil", "ok"]
    nodes = [helper.make_node("Relu", ["x"], [n], name=f"n{i}") for i, n in enumerate(names)]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in names],
    )
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    x = tmp_path / "x.npy"
    np.save(x, np.array([-1, 0, 2], np.float32))
    out = tmp_path / "out.npz"
    result = call("ascend-run", [str(path), "--input", f"x={x}", "-o", str(out)])
    assert result.returncode == 0, result.stderr
    assert "'../../evil' is stored" in result.stderr and "as 'result2' only" in result.stderr
    with np.load(out) as data:
        assert sorted(data.files) == sorted(["file", "allow_pickle", "ok", "result0", "result1", "result2", "result3"])
        for key in ("file", "allow_pickle", "ok", "result2"):
            np.testing.assert_array_equal(data[key], [0, 0, 2])
    assert not (tmp_path.parent / "evil.npy").exists()


# --------------------------------------------------------------------------------------
# Determinism: blob names depend only on the module printed
# --------------------------------------------------------------------------------------


def _opt_text(argv: list[str]) -> str:
    """ascend-opt's output in this process, without a fresh blob store (blobs of earlier runs stay)."""
    import contextlib
    import io

    from ascend_mp.tools.ascend_opt import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main(argv)
        except SystemExit as e:
            assert not e.code, e.code
    return out.getvalue()


def test_the_same_input_prints_the_same_text_in_one_process(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from ascend_mp.ir import isolated_store

    paths = []
    for value in (1.0, 2.0):  # the same names, other bytes: the process-wide store renames the second
        g = helper.make_graph(
            [helper.make_node("Add", ["x", "w"], ["y"], name="a")],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
            [numpy_helper.from_array(np.full((4, 8), value, np.float32), "w")],
        )
        paths.append(tmp_path / f"m{value:g}.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(paths[-1]))
    with isolated_store():
        alone = _opt_text([str(paths[1]), "--precision_mode", "force_fp16"])
    with isolated_store():
        _opt_text([str(paths[0]), "--precision_mode", "force_fp16"])
        runs = [_opt_text([str(paths[1]), "--precision_mode", "force_fp16"]) for _ in range(2)]
        text = tmp_path / "printed.mlir"
        text.write_text(runs[0])
        reparsed = [_opt_text([str(text)]) for _ in range(2)]
    assert runs[0] == runs[1] == alone
    assert reparsed[0] == reparsed[1] == alone
    assert "dense_resource<w_f16>" in alone
