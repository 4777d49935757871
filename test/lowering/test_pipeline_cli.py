"""The documented command line (README "Out into MLIR", docs/usage/lowering.md "Pipeline") runs as written:
`ascend-opt ... -p convert-ascend-to-linalg --print-op-generic | iree-compile - ...`, then
`iree-run-module`; its output agrees with the interpreter's run of the same decided program."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ascend_mp.frontend import import_onnx
from ascend_mp.interpreter import Program
from ascend_mp.ir import make_context, read_module
from ascend_mp.passes import PASSES

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CPU = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
]
SHAPES = {
    "examples/cnn.mlir": [(16, 1, 8, 8), (8, 1, 3, 3), (8,), (128, 10), (10,)],
    "test/fixtures/onnx/mlp.dynamo.onnx": None,  # the fixture's saved input
}


@pytest.mark.parametrize("source", list(SHAPES))
def test_documented_pipeline_runs(source: str, tmp_path: Path) -> None:
    path = ROOT / source
    if SHAPES[source] is None:
        inputs = [np.load(ROOT / "test/fixtures/onnx/mlp.npz")["input"]]
        module = import_onnx(str(path))
    else:
        rng = np.random.default_rng(0)
        inputs = [rng.standard_normal(s).astype(np.float32) for s in SHAPES[source]]
        module = read_module(str(path), make_context())
    name = next(op.sym_name.data for op in module.walk() if op.name == "func.func")  # pyright: ignore[reportAttributeAccessIssue]
    vmfb = tmp_path / "m.vmfb"
    opt = subprocess.Popen(
        [
            str(BIN / "ascend-opt"),
            str(path),
            "--precision_mode=allow_mix_precision",
            "-p",
            "convert-ascend-to-linalg",
            "--print-op-generic",
        ],
        stdout=subprocess.PIPE,
    )
    compiled = subprocess.run([str(BIN / "iree-compile"), "-", *CPU, "-o", str(vmfb)], stdin=opt.stdout, check=False)
    assert opt.wait() == 0 and compiled.returncode == 0
    args = []
    for i, a in enumerate(inputs):
        np.save(tmp_path / f"in{i}.npy", a)
        args.append(f"--input=@{tmp_path / f'in{i}.npy'}")
    out = tmp_path / "out.npy"
    run = subprocess.run(
        [
            str(BIN / "iree-run-module"),
            "--device=local-task",
            f"--module={vmfb}",
            f"--function={name}",
            *args,
            f"--output=@{out}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    PASSES["ascend-precision"]()(mode="allow_mix_precision").apply(make_context(), module)
    (want,) = Program.from_module(module).run(name, *inputs)[:1]
    y = np.load(out)
    assert y.shape == want.shape and y.dtype == want.dtype
    np.testing.assert_allclose(y, want, rtol=2e-3, atol=1e-6)
