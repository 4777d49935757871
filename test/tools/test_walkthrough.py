"""docs/usage/walkthrough.md runs as written: its commands, from the ONNX file on, on a model of the same
shape built with onnx.helper (the torch step is left out: torch is not a test dependency), checked
against a float64 numpy run of the model and against onnxruntime."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "usage" / "walkthrough.md"
BIN = Path(sys.executable).parent
FP16_MAX = 65520.0
"""The smallest value fp16 rounding sends to inf (65504 is the largest finite fp16)."""


def _weights(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """torch.nn.Linear's initialisation, and the walkthrough's scaling of layers 2 and 3."""
    layers = []
    for fan_in, fan_out, scale in ((16, 64, 1.0), (64, 64, 1e5), (64, 10, 1e-3)):
        bound = 1 / np.sqrt(fan_in)
        w = rng.uniform(-bound, bound, (fan_out, fan_in)) * scale
        b = rng.uniform(-bound, bound, fan_out)
        layers.append((w.astype(np.float32), b.astype(np.float32)))
    return layers


def _model(layers: list[tuple[np.ndarray, np.ndarray]]) -> onnx.ModelProto:
    nodes, inits, x = [], [], "x"
    for k, (w, b) in enumerate(layers):
        i = 2 * k
        inits += [numpy_helper.from_array(w, f"{i}.weight"), numpy_helper.from_array(b, f"{i}.bias")]
        y = "logits" if k == len(layers) - 1 else f"/{i}/Gemm_output_0"
        nodes.append(helper.make_node("Gemm", [x, f"{i}.weight", f"{i}.bias"], [y], name=f"/{i}/Gemm", transB=1))
        x = y
        if k < len(layers) - 1:
            x = f"/{i + 1}/Relu_output_0"
            nodes.append(helper.make_node("Relu", [y], [x], name=f"/{i + 1}/Relu"))
    graph = helper.make_graph(
        nodes,
        "main_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _forward64(layers: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The logits in float64, and the largest value layer 2 produces per sample."""
    h = np.asarray(x, np.float64)
    peak = np.zeros(len(x))
    for k, (w, b) in enumerate(layers):
        h = h @ w.astype(np.float64).T + b
        if k == 1:
            peak = h.max(axis=1)  # a negative overflow is cut by the ReLU
        if k < len(layers) - 1:
            h = np.maximum(h, 0)
    return h, peak


def _page_commands() -> list[str]:
    text = PAGE.read_text()
    blocks = re.findall(r"```console\n(.*?)```", text, re.S)
    return [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ")]


def _python_block(name: str) -> str:
    text = PAGE.read_text()
    start = text.index(f"`{name}`")
    return re.search(r"```python\n(.*?)```", text[start:], re.S).group(1)  # pyright: ignore[reportOptionalMemberAccess]


def _row(table: str, mode: str) -> list[str]:
    return next(line.split() for line in table.splitlines() if line.split()[:1] == [mode])


def test_walkthrough_runs_as_written(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    layers = _weights(rng)
    x = rng.standard_normal((64, 16)).astype(np.float32)
    noisy, _ = _forward64(layers, x + 0.5 * rng.standard_normal(x.shape).astype(np.float32))
    labels = noisy.argmax(axis=1)
    np.savez(tmp_path / "val.npz", x=x, labels=labels)
    onnx.save(_model(layers), str(tmp_path / "model.onnx"))
    (tmp_path / "check_ort.py").write_text(_python_block("check_ort.py"))
    logits, peak = _forward64(layers, x)
    fp32_accuracy = float(np.mean(logits.argmax(axis=1) == labels))
    assert (peak > FP16_MAX).any() and (peak <= FP16_MAX).any()  # some samples overflow in fp16, as on the page

    commands = _page_commands()
    assert commands[0] == "python make_model.py" and any(c.startswith("ascend-tune") for c in commands)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    outputs: dict[str, str] = {}
    for command in commands[1:]:
        if command.startswith("python "):
            command = f"{sys.executable} {command[len('python ') :]}"
        proc = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{command}: {proc.stderr}"
        outputs[command] = proc.stdout

    def output_of(prefix: str) -> str:
        return next(out for c, out in outputs.items() if c.startswith(prefix))

    # ascend-eval's fp32 accuracy is the float64 model's (no near-ties at this scale); the fp16 modes lose samples
    table = output_of("ascend-eval model.onnx val.npz --modes fp32,allow_mix_precision,force_fp16")
    assert _row(table, "fp32")[1] == f"{fp32_accuracy:.2%}"
    assert int(_row(table, "allow_mix_precision")[6]) == int((peak > FP16_MAX).sum())
    assert (tmp_path / "eval.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the tuned files: a Gemm becomes MatMulV2 and BiasAdd, so the mixlist names both types
    assert (tmp_path / "keep.cfg").read_text().split() == ["/2/Gemm", "/4/Gemm"]
    assert "MatMulV2" in (tmp_path / "mixlist.json").read_text()
    for flag in ("--modify_mixlist", "--keep_dtype"):
        row = _row(
            output_of(f"ascend-eval model.onnx val.npz --modes fp32,allow_mix_precision {flag}"), "allow_mix_precision"
        )
        assert row[2] == "100.00%" and row[6] == "0"
    # onnxruntime on the exported models: the untuned one overflows, the tuned one has fp32's accuracy
    ort_lines = output_of(sys.executable).splitlines()
    assert ort_lines[0] == f"model.onnx: float32 logits, finite True, accuracy {fp32_accuracy:.2%}"
    assert ort_lines[1].startswith("untuned.onnx: float32 logits, finite False")
    assert ort_lines[2] == f"mixed.onnx: float32 logits, finite True, accuracy {fp32_accuracy:.2%}"
