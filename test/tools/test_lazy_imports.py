"""What `ascend-run` loads: running a small .mlir file imports no optional or unrelated package
(startup time is a benchmark figure; this is what keeps it down)."""

import subprocess
import sys
from pathlib import Path

SMALL = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""

LAZY = (
    "onnx", "onnxruntime", "numba", "llvmlite", "matplotlib", "tqdm", "scipy",
    "ascend_mp.frontend.onnx_import", "ascend_mp.frontend.converters", "ascend_mp.train", "ascend_mp.passes",
    "ascend_mp.interpreter.compare",
)  # fmt: skip
"""Modules only some runs need: ONNX input, compiled rounding, plots and progress bars (training),
the passes (a precision mode), the mode comparison."""

_SCRIPT = """
import contextlib, io, sys
from ascend_mp.tools.ascend_run import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main([sys.argv[1], "--seed", "0"])
    except SystemExit as e:
        assert not e.code, e.code
assert "result0" in out.getvalue(), out.getvalue()
print(" ".join(sorted(sys.modules)))
"""


def _modules_after(script: str, *args: str) -> set[str]:
    # a fresh interpreter: this test process has imported most things already
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_running_a_small_mlir_file_loads_no_optional_package(tmp_path: Path) -> None:
    src = tmp_path / "small.mlir"
    src.write_text(SMALL)
    loaded = _modules_after(_SCRIPT, str(src))
    assert "ascend_mp.interpreter.runner" in loaded and "numpy" in loaded  # the check sees what was loaded
    assert not [m for m in loaded if m in LAZY or m.split(".")[0] in LAZY]


def test_the_interpreter_package_loads_the_comparison_only_when_asked() -> None:
    loaded = _modules_after("import sys\nfrom ascend_mp.interpreter import Program\nprint(' '.join(sys.modules))")
    assert "ascend_mp.interpreter.runner" in loaded and "ascend_mp.interpreter.compare" not in loaded
    loaded = _modules_after("import sys\nfrom ascend_mp.interpreter import compare_modes\nprint(' '.join(sys.modules))")
    assert "ascend_mp.interpreter.compare" in loaded
