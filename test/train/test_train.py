"""The training runtime and ascend-train: smoke runs on a digits subset, outputs, resume,
atomic writes, underflow statistics, the CLI's one-line errors."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path

import numpy as np
import pytest

from ascend_mp.errors import AscendError
from ascend_mp.ir import print_module
from ascend_mp.tools.ascend_train import main as cli
from ascend_mp.train import (
    TrainConfig,
    accuracy_comparison,
    compile_training,
    demo,
    load_digits,
    train,
    underflow_stats,
)
from ascend_mp.train import trainer as trainer_mod

SMALL = {"subset": 128, "epochs": 2, "batch": 32, "precision_mode": "allow_mix_precision"}


def small(**kw: object) -> TrainConfig:
    return TrainConfig(**(SMALL | kw))  # pyright: ignore[reportArgumentType]


def test_data_split_is_fixed_and_standardised() -> None:
    a, b = load_digits(), load_digits()
    assert a.x_train.shape == (1437, 64) and a.x_test.shape == (360, 64) and a.x_train.dtype == np.float32
    assert np.array_equal(a.x_test, b.x_test) and np.array_equal(a.y_train, b.y_train)
    assert np.allclose(a.x_train.mean(0), 0, atol=1e-5)
    assert load_digits(image=True, subset=10).x_train.shape == (10, 1, 8, 8)


def _fingerprint(d) -> str:  # noqa: ANN001
    h = hashlib.sha256()
    for a in (d.x_train, d.y_train, d.x_test, d.y_test):
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def test_shipped_data_gives_the_historical_split() -> None:
    """The fingerprints were computed from scikit-learn's `load_digits` and
    `train_test_split(test_size=0.2, random_state=0, stratify=y)` (scikit-learn 1.x), the
    split every history before the data was shipped used."""
    assert _fingerprint(load_digits()) == "00629b4a8e3fca3bcf2f446043c1def64679959a19ca2adf11546d0a5dd9e7be"
    assert _fingerprint(load_digits(image=True)) == "2f08f6626ed2eaca7749c62f29fce829607bc3c76ed1ab6cf2e10a34e83a047f"
    assert _fingerprint(load_digits(subset=100)) == "4b0d046c9e3bcf2eb7436ac35b6d27b60e35c716a7f5d349584be18ce4884e46"
    d = load_digits()
    test, total = np.bincount(d.y_test), np.bincount(d.y_test) + np.bincount(d.y_train)
    assert np.all(np.abs(test - 0.2 * total) <= 1)  # stratified: 20% of every class


def test_sklearn_is_not_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "sklearn", None)  # importing it would fail
    assert load_digits(subset=5).x_train.shape == (5, 64)


def test_smoke_run_writes_history_plot_and_checkpoint(tmp_path: Path) -> None:
    result = train(small(), out_dir=tmp_path, progress=False)
    assert result.steps == 8 and result.test_accuracy > 0.3
    history = json.loads((tmp_path / "history.json").read_text())
    assert len(history["steps"]["loss"]) == len(history["steps"]["scale"]) == len(history["steps"]["skipped"]) == 8
    assert [e["epoch"] for e in history["epochs"]] == [1, 2]
    assert history["steps"]["scale"][0] == 65536.0
    assert len(history["underflow"]["samples"]) == 2 and "mean_scaled" in history["underflow"]
    assert history["summary"]["steps"] == 8 and history["config"]["precision_mode"] == "allow_mix_precision"
    # the effective configuration: every default resolved
    config = history["config"]
    assert (config["model"], config["reduced_dtype"], config["preset"]) == ("mlp", "fp16", "pytorch")
    assert (
        config["init_scale"],
        config["growth_factor"],
        config["backoff_factor"],
        config["growth_interval"],
        config["min_scale"],
    ) == (65536.0, 2.0, 0.5, 2000, 0.0)
    assert config["drop_overflow_update"] is True and config["lr"] == 0.02
    assert (tmp_path / "loss_scale.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with np.load(tmp_path / "checkpoint.npz") as ck:
        assert int(ck["epoch"]) == 2 and ck["param_0"].dtype == np.float32 and ck["param_0"].shape == (64, 128)
        assert {"slot_0", "loss_scale", "good_steps", "step", "meta", "history"} <= set(ck.files)
    assert not list(tmp_path.glob(".*"))  # no temporary files left
    assert "test accuracy" in result.summary() and "wrote" in result.summary()


def test_resume_continues_exactly(tmp_path: Path) -> None:
    straight = train(small(epochs=3), progress=False)
    train(small(epochs=1), out_dir=tmp_path, progress=False)
    resumed = train(small(epochs=3), out_dir=tmp_path, resume=True, progress=False)
    assert resumed.steps == 12
    assert all(np.array_equal(a, b) for a, b in zip(straight.params, resumed.params))
    assert resumed.history["steps"]["loss"] == straight.history["steps"]["loss"]


def test_checkpoint_errors(tmp_path: Path) -> None:
    train(small(epochs=1), out_dir=tmp_path, progress=False)
    with pytest.raises(AscendError, match="checkpoint does not match this run \\(optimizer, slots differ\\)"):
        train(small(optimizer="sgd"), out_dir=tmp_path, resume=True, progress=False)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(AscendError, match="bad.npz: not a readable ascend-train checkpoint"):
        train(small(), resume=bad, progress=False)
    with pytest.raises(AscendError, match="missing.npz: no checkpoint to resume from"):
        train(small(), resume=tmp_path / "missing.npz", progress=False)


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    train(small(epochs=1), out_dir=tmp_path, progress=False)
    before = (tmp_path / "checkpoint.npz").read_bytes()

    def broken(f, **arrays):  # writes half a file, then fails
        f.write(b"PK\x03\x04half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(trainer_mod.np, "savez", broken)
    with pytest.raises(OSError, match="No space left on device"):
        train(small(epochs=1), out_dir=tmp_path, progress=False)
    assert (tmp_path / "checkpoint.npz").read_bytes() == before
    assert not list(tmp_path.glob(".*"))


def test_loss_stays_fp32_under_mixed_precision() -> None:
    text = print_module(compile_training(small()).module)
    fwd = text.split("func.func @forward_grad")[0]
    assert "SoftmaxCrossEntropyWithLogits" in fwd and "-> (tensor<32xf32>, tensor<32x10xf32>)" in fwd
    assert "MatMulV2 %{{" not in fwd and "tensor<32x128xf16>" in fwd
    text = print_module(compile_training(small(keep_loss_fp32=False)).module)
    assert "-> (tensor<32xf16>, tensor<32x10xf16>)" in text.split("func.func @forward_grad")[0]


def test_fixed_and_fp32_runs_and_cnn() -> None:
    fixed = train(small(loss_scale="fixed", scale=256.0), progress=False)
    assert fixed.final_scale == 256.0 and set(fixed.history["steps"]["scale"]) == {256.0}
    fp32 = train(small(precision_mode=None, loss_scale="none"), progress=False)
    assert fp32.final_scale == 1.0 and fp32.skipped == 0
    cnn = train(small(model="cnn", epochs=1), progress=False)
    assert cnn.steps == 4 and np.isfinite(cnn.train_loss)


def test_overflowing_scale_is_skipped_and_backs_off() -> None:
    result = train(small(init_scale=2.0**28, epochs=6), progress=False)
    skipped = result.history["steps"]["skipped"]
    assert skipped[0] and result.skipped >= 1 and not skipped[-1]
    assert result.final_scale == 2.0 ** (28 - result.skipped)


def test_underflow_stats() -> None:
    g = [np.array([1e-8, 1e-3, 0.0], np.float32), np.array([[1e3]], np.float32)]
    stats = underflow_stats(g, 65536.0)
    assert stats == pytest.approx({"unscaled": 1 / 3, "scaled": 0.0, "overflow_scaled": 1 / 3})
    assert underflow_stats([np.zeros(3)], 2.0) == {"unscaled": 0.0, "scaled": 0.0, "overflow_scaled": 0.0}


def test_warns_without_loss_scaling(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ascend_mp"):
        train(small(epochs=1, loss_scale="none"), progress=False)
    assert "training with allow_mix_precision and no loss scaling" in caplog.text


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        (small(model="resnet"), "unknown model 'resnet' \\(models: mlp, cnn\\)"),
        (small(precision_mode="fp8"), "unknown precision mode 'fp8'"),
        (small(batch=0), "batch must be positive, got 0"),
        (small(batch=200), "the batch \\(200\\) is larger than the training set \\(128 examples\\)"),
        (small(lr=float("inf")), "ascend-loss-scale: lr must be > 0 and finite, got inf"),
        (small(lr=float("nan")), "ascend-loss-scale: lr must be > 0 and finite, got nan"),
        (small(init_scale=1e39), "ascend-loss-scale: init-scale must be a positive finite float32 number, got 1e\\+39"),
        (
            small(loss_scale="fixed", scale=float("inf")),
            "ascend-loss-scale: scale must be a positive finite float32 number, got inf",
        ),
        (small(growth_factor=float("inf")), "ascend-loss-scale: growth-factor must be > 1 and finite, got inf"),
        (small(min_scale=float("inf")), "ascend-loss-scale: min-scale must be >= 0 and finite, got inf"),
        (small(momentum=float("nan")), "ascend-loss-scale: momentum must be in \\[0, 1\\), got nan"),
        (small(seed=-1), "seed must be in \\[0, 2\\^32\\), got -1"),
        (small(subset=0), "the training subset must be positive, got 0"),
        (small(optimizer="rmsprop"), "optimizer must be one of sgd, momentum, adam, got 'rmsprop'"),
    ],
)
def test_config_errors(cfg: TrainConfig, message: str) -> None:
    with pytest.raises(AscendError, match=message):
        train(cfg, progress=False)


# --------------------------------------------------------------------------------------
# The CLI
# --------------------------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = 0
    try:
        cli(list(args))
    except SystemExit as e:
        code = 1 if isinstance(e.code, str) else int(e.code or 0)
        if isinstance(e.code, str):
            print(e.code, file=__import__("sys").stderr)
    out, err = capsys.readouterr()
    return code, out, err


def test_default_mode_is_canns_and_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert TrainConfig().precision_mode == "allow_fp32_to_fp16"
    code, out, _ = run_cli(capsys, "--subset", "64", "--epochs", "1")
    assert code == 0
    assert out.startswith(
        "precision mode: allow_fp32_to_fp16 (the default: CANN's for training)\nprecision allow_fp32_to_fp16:"
    )
    # the default mode finds an fp32 kernel for every op of the MLP: it reduces nothing and says so
    assert re.search(r"model mlp, allow_fp32_to_fp16 \(nothing reduced: all \d+ ops fp32\)", out)
    assert re.search(r"precision allow_fp32_to_fp16: nothing reduced, all \d+ ops keep fp32", out)
    assert "(fp16)" not in out
    code, out, _ = run_cli(capsys, "--subset", "64", "--epochs", "1", "--precision_mode", "allow_mix_precision")
    assert code == 0 and out.startswith("precision mode: allow_mix_precision\n")
    reduced = re.search(r"model mlp, allow_mix_precision \((\d+) of (\d+) ops in fp16\)", out)
    assert reduced and 0 < int(reduced[1]) < int(reduced[2])


def test_cli_trains_quietly_without_a_tty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys,
        "--subset",
        "96",
        "--epochs",
        "1",
        "--out",
        str(tmp_path / "run"),
        "--precision_mode",
        "allow_mix_precision",
    )
    assert code == 0
    assert "precision allow_mix_precision:" in out and "test accuracy" in out and "wrote" in out
    assert "it/s" not in err  # no progress bar when stderr is not a terminal
    assert err.startswith("ascend-train: epoch 1/1: loss ") and len(err.strip().splitlines()) == 1
    assert (tmp_path / "run" / "history.json").exists()
    code, out, err = run_cli(
        capsys,
        "--subset",
        "96",
        "--epochs",
        "2",
        "--out",
        str(tmp_path / "run"),
        "--resume",
        "-q",
        "--precision_mode",
        "allow_mix_precision",
    )
    assert code == 0 and err == "" and "steps 6" in out


@pytest.mark.parametrize(
    ("args", "message", "status"),
    [
        (["--bogus"], "unrecognized arguments: --bogus", 2),
        (["--epochs", "0"], "argument --epochs: must be >= 1, got 0", 2),
        (["--resume"], "--resume without a checkpoint path needs --out DIR", 2),
        (["--growth-factor", "0.5"], "argument --growth-factor: must be > 1, got 0.5", 2),
        (["--seed", "-1"], "argument --seed: must be >= 0, got -1", 2),
        (["--seed", "x"], "argument --seed: expected an integer, got 'x'", 2),
        (["--lr", "inf"], "argument --lr: must be finite, got inf", 2),
        (["--lr", "nan"], "argument --lr: must be finite, got nan", 2),
        (["--init-scale", "1e39"], "argument --init-scale: must be <= 3.40282e+38, got 1e39", 2),
        (["--scale", "inf"], "argument --scale: must be finite, got inf", 2),
        (["--min-scale", "inf"], "argument --min-scale: must be finite, got inf", 2),
        (["--momentum", "1"], "argument --momentum: must be < 1, got 1", 2),
        (
            ["--model", "vgg"],
            "argument --model: expected mlp, cnn or an ONNX model file (.onnx, or a file that reads as one), got 'vgg'",
            2,
        ),
        (["--modify_mixlist", "/nonexistent/ops.json", "--subset", "64"], "/nonexistent/ops.json", 1),
        (["--resume", "/nonexistent/ck.npz"], "/nonexistent/ck.npz: no checkpoint to resume from", 1),
    ],
)
def test_cli_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str, status: int
) -> None:
    code, out, err = run_cli(capsys, *args)
    assert code == status
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ascend-train: error: ") and message in lines[0], err
    assert "Traceback" not in err


def test_cli_warning_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(
        capsys,
        "--subset",
        "64",
        "--epochs",
        "1",
        "--loss-scale",
        "none",
        "-q",
        "--precision_mode",
        "allow_mix_precision",
    )
    assert code == 0
    assert (
        err.strip()
        == "ascend-train: warning: training with allow_mix_precision and no loss scaling: small fp16 gradients flush to zero (use --loss-scale dynamic)"
    )


def test_demo_and_accuracy_comparison(capsys: pytest.CaptureFixture[str]) -> None:
    result = demo(epochs=1)
    out = capsys.readouterr().out
    assert "precision allow_mix_precision:" in out and "test accuracy: fp32" in out
    assert 0 < result["mixed"] <= 1
    cmp = accuracy_comparison(seeds=(0,), epochs=1)
    assert set(cmp) >= {"fp32_accuracy", "mixed_accuracy", "difference_pt", "step_ms"}


def test_more_config_and_output_errors(tmp_path: Path) -> None:
    with pytest.raises(AscendError, match="stats-every must be >= 0, got -1"):
        train(small(stats_every=-1), progress=False)
    with pytest.raises(AscendError, match="the training subset must be positive, got 0"):
        load_digits(subset=0)
    with pytest.raises(AscendError, match="missing.txt: cannot read file"):
        compile_training(small(keep_dtype=str(tmp_path / "missing.txt")))
    with pytest.raises(AscendError, match="--resume needs an output folder or a checkpoint path"):
        train(small(), resume=True, progress=False)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(AscendError, match="file: cannot make the output folder"):
        train(small(epochs=1), out_dir=blocker, progress=False)
    assert blocker.read_text() == "not a folder"


def test_user_keep_dtype_and_the_marked_loss_ops(tmp_path: Path) -> None:
    """The user's keep_dtype file goes to the precision pass as it is; the loss ops are kept by their marks."""
    keep = tmp_path / "keep.txt"
    keep.write_text("dense_1/MatMulV2\n")
    compiled = compile_training(small(keep_dtype=str(keep)))
    assert compiled.report.by_name("dense_1/MatMulV2").reason == "keep_dtype"
    assert compiled.report.by_name("loss/ReduceMean").reason == "keep_dtype (marked)"
    assert compiled.report.by_name("loss/SoftmaxCrossEntropyWithLogits").reason == "keep_dtype (marked)"
    unmarked = compile_training(small(keep_loss_fp32=False))
    assert unmarked.report.by_name("loss/ReduceMean").reason != "keep_dtype (marked)"
