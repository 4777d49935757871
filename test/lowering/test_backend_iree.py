"""The IREE backend: compile cache, one-line errors, the Python API's backend option and
`ascend-run --backend iree`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # test/cli_util.py
from cli_util import run_main  # noqa: E402

from ascend_mp.backend import run_function  # noqa: E402
from ascend_mp.backend.iree import (  # noqa: E402
    IreeError,
    IreeProgram,
    cache_dir,
    compile_module,
    compile_text,
    lower_to_text,
)
from ascend_mp.errors import AscendError  # noqa: E402
from ascend_mp.ir import make_context, parse_module  # noqa: E402
from ascend_mp.tools.ascend_run import main as ascend_run  # noqa: E402

SMALL = """
func.func @f(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = ascend.Mul %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = ascend.Exp %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}
"""
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _small() -> Any:
    return parse_module(SMALL, "<small>", make_context())


def _args() -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2)]


def test_compile_is_cached_by_content(monkeypatch: pytest.MonkeyPatch) -> None:
    text = lower_to_text(_small())
    first = compile_text(text)
    assert list(cache_dir().glob("*.vmfb")) and cache_dir().is_relative_to(Path(os.environ["ASCEND_MP_CACHE"]))

    def no_compile(*a: object, **k: object) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(subprocess, "run", no_compile)
    assert compile_text(text) == first  # from the cache
    assert compile_module(_small()) == first  # printed into the compiler's file, not a string: the same key
    with pytest.raises(AssertionError, match="compiled again"):
        compile_text(text + "\n// another module\n")  # another text: another key
    assert {p.suffix for p in cache_dir().iterdir()} == {".vmfb"}  # no source or partial file left behind


def test_lowering_leaves_the_module_alone() -> None:
    module = _small()
    before = str(module)
    lower_to_text(module)
    assert str(module) == before


def test_python_api_backends_agree() -> None:
    x, y = _args()
    want = np.exp(x.astype(np.float64) * y)
    (a,) = run_function(_small(), "f", x, y, backend="iree")
    (b,) = run_function(_small(), "f", x, y)
    np.testing.assert_allclose(a, want, rtol=1e-6)
    np.testing.assert_allclose(b, want, rtol=1e-6)


def test_unknown_backend_and_device_are_one_line_errors() -> None:
    with pytest.raises(AscendError, match="unknown backend 'tvm'; expected one of interpreter, iree"):
        run_function(_small(), "f", *_args(), backend="tvm")
    with pytest.raises(IreeError, match="unknown IREE device 'tpu'; expected one of cpu, cuda"):
        IreeProgram.from_module(_small(), "tpu")
    with pytest.raises(AscendError, match="the interpreter runs on the cpu only, got device 'cuda'"):
        run_function(_small(), "f", *_args(), device="cuda")


def test_compile_error_is_one_line() -> None:
    with pytest.raises(IreeError) as e:
        compile_text('"func.func"() ({}) : () -> ()')  # no sym_name: iree-compile rejects it
    message = str(e.value)
    assert message.startswith("iree-compile failed for device cpu: <module>:") and "\n" not in message, message
    assert {p.suffix for p in cache_dir().iterdir()} <= {".vmfb"}  # nothing half-written left


def test_unknown_function_is_one_line() -> None:
    with pytest.raises(IreeError, match="no function @g in the compiled module"):
        IreeProgram.from_module(_small()).run("g", *_args())


def test_cuda_compiles_without_a_gpu_and_runs_or_says_why() -> None:
    """Compiling for CUDA needs no GPU; running needs one: the result agrees with the CPU's, or the
    error is one line naming the device."""
    program = IreeProgram.from_module(_small(), "cuda")
    assert program.vmfb
    try:
        (a,) = program.run("f", *_args())
    except IreeError as e:
        assert "device cuda" in str(e) and "\n" not in str(e)
    else:
        np.testing.assert_allclose(a, run_function(_small(), "f", *_args(), backend="iree")[0], rtol=1e-5)


def test_ascend_run_backend_iree_matches_interpreter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mlp = str(EXAMPLES / "mlp.mlir")
    outs = {}
    for backend in ("interpreter", "iree"):
        out = tmp_path / f"{backend}.npz"
        code, stdout, err = run_main(
            ascend_run, [mlp, "--precision_mode=allow_mix_precision", "--backend", backend, "-o", str(out)], capsys
        )
        assert code == 0, err
        assert "result0: tensor<64x10xf32>" in stdout
        assert ("float status" in stdout) == (backend == "interpreter")
        outs[backend] = np.load(out)["result0"]
    np.testing.assert_allclose(outs["iree"], outs["interpreter"], rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--device", "cuda"], "--device cuda needs --backend iree"),
        (["--backend", "iree", "--compare-modes"], "--backend iree runs one function; drop --compare-modes"),
        (["--backend", "tvm"], "invalid choice: 'tvm'"),
    ],
)
def test_ascend_run_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(ascend_run, [str(EXAMPLES / "mlp.mlir"), *argv], capsys)
    assert code == 2
    assert message in err


def test_ascend_run_unlowered_op_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "fast_exp.mlir"
    src.write_text(
        "func.func @f(%x: tensor<4xf16>) -> tensor<4xf16> {\n"
        '  %0 = ascend.Exp %x {impl_mode = "high_performance"} : (tensor<4xf16>) -> tensor<4xf16>\n'
        "  func.return %0 : tensor<4xf16>\n}\n"
    )
    code, _, err = run_main(ascend_run, [str(src), "--backend", "iree"], capsys)
    assert code == 1
    assert err.strip().endswith(
        "fast_exp.mlir:2:3: convert-ascend-to-linalg: ascend.Exp with impl_mode 'high_performance' has no lowering"
        " (only high_precision numerics are lowered)"
    )
    assert len(err.strip().splitlines()) == 1


MASKED_FILL = """
func.func @f(%m: tensor<2x3xi1>, %x: tensor<2x3xf16>) -> tensor<2x3xf16> {
  %ninf = ascend.Const dense_resource<ninf_f16> : tensor<f16> {name = "ninf"}
  %y = ascend.SelectV2 %m, %x, %ninf : (tensor<2x3xi1>, tensor<2x3xf16>, tensor<f16>) -> tensor<2x3xf16>
  func.return %y : tensor<2x3xf16>
}

{-#
  dialect_resources: {
    builtin: {
      ninf_f16: "0x0200000000fc"
    }
  }
#-}
"""


def test_scalar_blob_lowers_to_a_literal_that_cuda_compiles() -> None:
    """An attention mask's scalar -inf arrives as a blob (`dense_resource<...> : tensor<f16>`); IREE's
    CUDA pipeline aborts on a scalar blob inside linalg.generic, so the lowering writes scalar blobs as
    literals (-inf as its bit pattern, which upstream MLIR reads exactly)."""
    module = parse_module(MASKED_FILL, "<masked>", make_context())
    text = lower_to_text(module)
    assert "dense<0xfc00> : tensor<f16>" in text and "dense_resource<ninf" not in text
    assert compile_text(text, "cuda")  # compiling for CUDA needs no GPU
    m = np.array([[True, False, True], [False, True, False]])
    x = np.arange(6, dtype=np.float16).reshape(2, 3)
    (y,) = run_function(parse_module(MASKED_FILL, "<masked>", make_context()), "f", m, x, backend="iree")
    np.testing.assert_array_equal(y, np.where(m, x, np.float16(-np.inf)))
