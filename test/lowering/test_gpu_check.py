"""benchmarks/gpu_check.py's CPU side: `prepare` compiles for CUDA and the CPU without a GPU, and
`run --device cpu` (the GPU step with the CPU modules) prints each mode's error beside the
interpreter's, within twice it."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import gpu_check


def test_prepare_then_run_on_cpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gpu_check.main(["prepare", "--models", "mlp", "--out", str(tmp_path)])
    for mode in gpu_check.MODES:
        assert (tmp_path / "mlp" / f"{mode}.cuda.vmfb").stat().st_size > 0
    assert all((tmp_path / "bin" / t).exists() for t in gpu_check.TOOLS)
    capsys.readouterr()
    assert gpu_check.main(["run", "--device", "cpu", "--out", str(tmp_path)]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()[1:]]
    assert [r[1] for r in rows] == list(gpu_check.MODES)
    for _, mode, err, interp, ratio, *_ in rows:
        assert float(err) <= 2 * float(interp) + 1e-6, (mode, err, interp, ratio)
