"""`ascend-eval`: accuracy, agreement and errors per mode over a dataset, checked against onnxruntime and numpy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from classifiers import cnn, dataset, mlp, ort_run
from cli_util import run_main

from ascend_mp.tools.ascend_eval import main as eval_main

HOT = 3e4
"""mlp(hot=HOT): fp16's largest finite value (65504) is passed by the first layer on most samples."""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("eval")
    out: dict[str, Path] = {}
    for name, model, count in (("cnn", cnn(), 40), ("hot", mlp(hot=HOT), 64)):
        onnx.save(model, root / f"{name}.onnx")
        np.savez(root / f"{name}.npz", **dataset(model, count))
        out[name], out[f"{name}_data"] = root / f"{name}.onnx", root / f"{name}.npz"
    return out


def _eval(capsys: pytest.CaptureFixture[str], *argv: Any) -> dict[str, Any]:
    code, out, err = run_main(eval_main, [*map(str, argv), "--json", "--no-progress"], capsys)
    assert code == 0, err
    return json.loads(out)


def _mode(report: dict[str, Any], mode: str) -> dict[str, Any]:
    return next(m for m in report["modes"] if m["mode"] == mode)


def test_fp32_accuracy_is_onnxruntime_s(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    data = dict(np.load(files["cnn_data"]))
    expected = float(np.mean(ort_run(onnx.load(files["cnn"]), {"x": data["x"]})[0].argmax(-1) == data["labels"]))
    assert 0.3 < expected < 1.0  # the labels are noisy: accuracy is a real measurement
    report = _eval(
        capsys, files["cnn"], files["cnn_data"], "--modes", "fp32,force_fp16", "--batch-size", "16", "--jobs", "1"
    )
    fp32 = _mode(report, "fp32")
    assert fp32["accuracy"] == expected and fp32["agreement"] == 1.0
    assert fp32["rel_err"]["max"] < 1e-5 and fp32["nonfinite_samples"] == 0
    fp16 = _mode(report, "force_fp16")
    assert 1e-4 < fp16["rel_err"]["median"] <= fp16["rel_err"]["p99"] <= fp16["rel_err"]["max"] < 1e-2
    assert report["samples"] == 40 and report["batch_size"] == 16  # 40 = 16 + 16 + 8: the padded last batch counts 8


def _numpy_fp16_mlp(model: onnx.ModelProto, x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """force_fp16 on the mlp in numpy: fp16 operands, cube ops accumulate in fp32 and round once, fp16 adds."""
    w = {i.name: onnx.numpy_helper.to_array(i).astype(np.float16) for i in model.graph.initializer}
    f32, f16 = np.float32, np.float16
    with np.errstate(all="ignore"):
        m1 = (x.astype(f16).astype(f32) @ w["w1"].astype(f32)).astype(f16)
        h = np.maximum(m1 + w["b1"], f16(0))
        m2 = (h.astype(f32) @ w["w2"].astype(f32)).astype(f16)
        return (m2 + w["b2"]).astype(f32)


def test_overflow_counts_and_agreement_match_numpy(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    model, data = onnx.load(files["hot"]), dict(np.load(files["hot_data"]))
    fp32 = ort_run(model, {"x": data["x"]})[0].argmax(-1)
    logits = _numpy_fp16_mlp(model, data["x"])
    nonfinite = int((~np.isfinite(logits)).any(-1).sum())
    agreement = float(np.mean(logits.astype(np.float64).argmax(-1) == fp32))
    assert nonfinite > 10 and agreement < 0.9  # the model is built to break fp16
    report = _eval(capsys, files["hot"], files["hot_data"], "--modes", "fp32,force_fp16", "--jobs", "1")
    fp16 = _mode(report, "force_fp16")
    assert fp16["nonfinite_samples"] == nonfinite
    assert abs(fp16["agreement"] - agreement) <= 1 / 64
    assert fp16["rel_err"]["max"] == "inf"
    assert _mode(report, "fp32")["accuracy"] == float(np.mean(fp32 == data["labels"]))


def test_results_do_not_depend_on_jobs(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    args = (
        files["cnn"],
        files["cnn_data"],
        "--modes",
        "fp32,allow_mix_precision,cube_fp16in_fp32out",
        "--batch-size",
        "8",
    )
    one, two = _eval(capsys, *args, "--jobs", "1"), _eval(capsys, *args, "--jobs", "2")
    for report in (one, two):
        report.pop("seconds")
        for m in report["modes"]:
            m.pop("seconds")
    assert one == two


def test_folder_of_npy_batches(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = dict(np.load(files["cnn_data"]))
    for k, start in enumerate(range(0, 40, 15)):
        np.save(tmp_path / f"batch_{k:03d}.npy", data["x"][start : start + 15])
    np.save(tmp_path / "labels.npy", data["labels"])
    folder = _eval(capsys, files["cnn"], tmp_path, "--modes", "fp32,force_fp16", "--jobs", "1")
    whole = _eval(capsys, files["cnn"], files["cnn_data"], "--modes", "fp32,force_fp16", "--jobs", "1")
    assert [(m["accuracy"], m["rel_err"]) for m in folder["modes"]] == [
        (m["accuracy"], m["rel_err"]) for m in whole["modes"]
    ]


def test_mlir_model(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An MLIR module (here the import of the ONNX model, batch 8) evaluates as the ONNX model does."""
    from ascend_mp.frontend import import_onnx
    from ascend_mp.ir import print_module

    (tmp_path / "m.mlir").write_text(print_module(import_onnx(str(files["cnn"]), "x:8,1,8,8")))
    mlir = _eval(capsys, tmp_path / "m.mlir", files["cnn_data"], "--modes", "fp32,force_fp16", "--jobs", "1")
    onnx_ = _eval(
        capsys, files["cnn"], files["cnn_data"], "--modes", "fp32,force_fp16", "--jobs", "1", "--batch-size", "8"
    )
    assert mlir["batch_size"] == 8
    assert [m["accuracy"] for m in mlir["modes"]] == [m["accuracy"] for m in onnx_["modes"]]


def test_plot(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "eval.png"
    _eval(
        capsys,
        files["cnn"],
        files["cnn_data"],
        "--modes",
        "fp32,force_fp16,must_keep_origin_dtype",
        "--jobs",
        "1",
        "--plot",
        png,
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_failing_mode_is_a_row(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """must_keep_origin_dtype cannot place the fp32 Conv (fp16-only on ascend910): that mode reports its error."""
    report = _eval(capsys, files["cnn"], files["cnn_data"], "--modes", "fp32,must_keep_origin_dtype", "--jobs", "1")
    row = _mode(report, "must_keep_origin_dtype")
    assert not row["ok"] and "Conv2D 'conv'" in row["error"]


# --------------------------------------------------------------------------------------
# Bad input: one line, non-zero exit
# --------------------------------------------------------------------------------------


def _error(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str]:
    code, _, err = run_main(eval_main, [*map(str, argv), "--no-progress", "--jobs", "1"], capsys)
    assert err.count("\n") == 1 and err.startswith("ascend-eval: error: "), err
    return code, err


def test_missing_input_name(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "d.npz", image=np.zeros((4, 1, 8, 8), np.float32))
    code, err = _error(capsys, files["cnn"], tmp_path / "d.npz")
    assert code == 1 and "no array for model input 'x'" in err and "arrays: image" in err


def test_shape_mismatch(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "d.npz", x=np.zeros((4, 1, 9, 9), np.float32))
    code, err = _error(capsys, files["cnn"], tmp_path / "d.npz")
    assert code == 1 and "'x' has shape (4, 1, 9, 9), the model expects (N, 1, 8, 8)" in err


def test_bad_file(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "d.npz").write_bytes(b"not a zip file")
    code, err = _error(capsys, files["cnn"], tmp_path / "d.npz")
    assert code == 1 and "d.npz: cannot read as .npz" in err


def test_bad_labels(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "d.npz", x=np.zeros((4, 1, 8, 8), np.float32), labels=np.zeros(3, np.int64))
    code, err = _error(capsys, files["cnn"], tmp_path / "d.npz")
    assert code == 1 and "'labels' must be 4 integer class indices" in err


def test_unknown_mode(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _error(capsys, files["cnn"], files["cnn_data"], "--modes", "fp32,fast")
    assert code == 2 and "unknown mode 'fast'" in err


def test_missing_model(tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _error(capsys, tmp_path / "none.onnx", files["cnn_data"])
    assert code == 1 and "none.onnx" in err


@pytest.mark.parametrize("tool", ["ascend-eval", "ascend-tune"])
def test_console_scripts(tool: str, files: dict[str, Path]) -> None:
    """Installed through the entry module; the real process exits 2 on a usage error with one line."""
    import subprocess
    import sys
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == tool]
    assert script.value.startswith("ascend_mp.tools.entry:")
    proc = subprocess.run(
        [str(Path(sys.executable).parent / tool), str(files["cnn"]), str(files["cnn_data"]), "--batch-size", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--batch-size expects a positive count" in proc.stderr
    )


def test_wrong_element_kind(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "d.npz", x=np.zeros((4, 1, 8, 8), np.int32))
    code, err = _error(capsys, files["cnn"], tmp_path / "d.npz")
    assert code == 1 and "'x' holds int32, the model input is float32" in err


def test_float64_data_is_rounded_to_the_input_dtype(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = dict(np.load(files["cnn_data"]))
    np.savez(tmp_path / "d64.npz", x=data["x"].astype(np.float64), labels=data["labels"])
    wide = _eval(capsys, files["cnn"], tmp_path / "d64.npz", "--modes", "fp32", "--jobs", "1")
    same = _eval(capsys, files["cnn"], files["cnn_data"], "--modes", "fp32", "--jobs", "1")
    assert wide["modes"][0]["accuracy"] == same["modes"][0]["accuracy"]
