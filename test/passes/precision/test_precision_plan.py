"""The ascend-precision pass (docs/design.md §5): the precision report (passes/precision/plan.py)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from precision_util import CNN, MLP, opt, run, write

from ascend_mp.passes.precision import (
    run_precision,
)
from benchmarks.graphs import chain_module


def test_report_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "report.json"
    with caplog.at_level(logging.INFO, logger="ascend_mp"):
        _, report = run(MLP, mode="allow_mix_precision", report=str(path))
    data = json.loads(path.read_text())
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file left
    assert data["mode"] == "allow_mix_precision" and data["soc"] == "ascend910"
    assert data["totals"] == {
        "ops": 5,
        "ops_reduced": 3,
        "casts_inserted": 4,
        "casts_folded": 0,
        "weight_bytes_before": 0,
        "weight_bytes_after": 0,
        "constants_stored_low": 0,  # weights are arguments here
    }
    fc1 = data["ops"][0]
    assert fc1 == {
        "name": "fc1",
        "type": "MatMulV2",
        "location": "test.mlir:2:3",
        "original": {"inputs": ["float32", "float32", None], "outputs": ["float32"]},
        "chosen": {"inputs": ["float16", "float16", None], "outputs": ["float16"]},
        "list": "white",
        "engine": "aicore",
        "reason": "white",
    }
    assert [o["reason"] for o in data["ops"]] == [
        "white",
        "gray: follows MatMulV2/fc1",
        "gray: follows BiasAdd/bias1",
        "black",
        "gray: follows Log/log",
    ]
    assert data["ops"][2]["name"] is None
    assert report.to_json() == data
    infos = [r.message for r in caplog.records if r.levelno == logging.INFO]
    assert "Reduce precision: fc1 float32 -> float16 (white)" in infos
    assert "Reduce precision: Relu float32 -> float16 (gray: follows BiasAdd/bias1)" in infos


def test_report_from_ascend_opt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path, "m.mlir", CNN)
    path = tmp_path / "r.json"
    code, _, _ = opt([src, "--precision_mode=force_fp32", f"--precision-report={path}"], capsys)
    assert code == 0
    ops = {o["name"]: o for o in json.loads(path.read_text())["ops"]}
    assert ops["conv1"]["reason"] == "no fp32 kernel"
    assert ops["conv1"]["location"] == f"{src}:2:3"


def test_report_of_built_ops_names_their_position() -> None:
    module = chain_module(8)
    report = run_precision(module, mode="allow_mix_precision")
    assert report.ops[0].location == "@chain, op #1"
    assert report.ops[3].location == "@chain, op #4"
