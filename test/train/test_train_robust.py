"""ascend-train when things go wrong and its outputs and UX:
non-finite values, divergence, loss-scale collapse, damaged checkpoints, devices/pipes/symlinks at the
output paths, Ctrl-C, custom models, the progress bar and the plot."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ascend_mp.builder import Dense, Relu, Sequential
from ascend_mp.errors import AscendError
from ascend_mp.tools import ascend_train
from ascend_mp.train import TrainConfig, compile_training, load_digits, report_summary, train
from ascend_mp.train import trainer as trainer_mod
from ascend_mp.train.data import Dataset


def tiny() -> Sequential:
    return Sequential([Dense(64, 10)], name="tiny")


def cfg(**kw: Any) -> TrainConfig:
    base: dict[str, Any] = {"subset": 64, "epochs": 1, "batch": 16, "precision_mode": "allow_mix_precision"}
    return TrainConfig(**(base | kw))


def strict_json(text: str) -> Any:
    """JSON as the standard defines it: NaN and Infinity literals are refused."""

    def refuse(name: str) -> Any:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = 0
    try:
        ascend_train.main(list(args))
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------------------
# Divergence and non-finite values
# --------------------------------------------------------------------------------------


def test_diverged_run_stops_with_a_message_and_writes_every_output(tmp_path: Path) -> None:
    result = train(
        cfg(precision_mode=None, loss_scale="none", lr=3e38, epochs=3), out_dir=tmp_path, progress=False, model=tiny()
    )
    assert result.diverged is not None and "the parameters are no longer finite after step" in result.diverged
    assert result.steps < 3 * 4  # stopped early
    history = strict_json((tmp_path / "history.json").read_text())
    assert history["diverged"]["step"] == result.steps and "no longer finite" in history["diverged"]["reason"]
    losses = history["steps"]["loss"]
    assert any(v in ("NaN", "Infinity") for v in losses)  # recorded, JSON-valid
    assert (tmp_path / "loss_scale.png").read_bytes()[:4] == b"\x89PNG"
    assert "diverged: the parameters are no longer finite" in result.summary()
    # no checkpoint of non-finite parameters was written (the run diverged in its first epoch)
    assert not (tmp_path / "checkpoint.npz").exists()


def test_diverged_run_keeps_the_last_finite_checkpoint(tmp_path: Path) -> None:
    train(cfg(precision_mode=None, loss_scale="none"), out_dir=tmp_path, progress=False, model=tiny())
    good = (tmp_path / "checkpoint.npz").read_bytes()
    # resume with a learning rate that blows up: the epoch-1 checkpoint must stay as it was
    result = train(
        cfg(precision_mode=None, loss_scale="none", lr=3e38, epochs=3),
        out_dir=tmp_path,
        resume=True,
        progress=False,
        model=tiny(),
    )
    assert result.diverged is not None
    assert (tmp_path / "checkpoint.npz").read_bytes() == good


def test_cli_diverged_run_exits_1_after_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys,
        "--precision_mode",
        "none",
        "--loss-scale",
        "none",
        "--lr",
        "3e38",
        "--subset",
        "64",
        "--epochs",
        "2",
        "-q",
        "--out",
        str(tmp_path),
    )
    assert code == 1
    assert (
        err.startswith("ascend-train: error: training diverged: the parameters are no longer finite")
        and err.count("\n") == 1
    )
    assert "(history and plot written)" in err and "diverged:" in out
    assert strict_json((tmp_path / "history.json").read_text())["diverged"]


def test_overflowing_steps_record_json_valid_history(tmp_path: Path) -> None:
    """An overflowing scale: the loss is inf/NaN on the overflow steps; history.json stays strict JSON."""
    data = load_digits(subset=64)
    x = data.x_train.copy()
    x[:8] = np.float32(3e38)  # these examples overflow fp16 and fp32 alike
    poisoned = Dataset(x, data.y_train, data.x_test, data.y_test)
    result = train(cfg(epochs=2), out_dir=tmp_path, progress=False, data=poisoned, model=tiny())
    history = strict_json((tmp_path / "history.json").read_text())
    assert any(isinstance(v, str) for v in history["steps"]["loss"])
    assert result.skipped >= 1 and result.diverged is None
    assert all(np.all(np.isfinite(p)) for p in result.params)


# --------------------------------------------------------------------------------------
# Loss-scale collapse
# --------------------------------------------------------------------------------------


def _always_overflowing() -> Dataset:
    data = load_digits(subset=64)
    return Dataset(np.full_like(data.x_train, np.inf), data.y_train, data.x_test, data.y_test)


def test_loss_scale_collapse_warns_and_says_so(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trainer_mod, "COLLAPSE_WARN", 6)
    with caplog.at_level(logging.WARNING, logger="ascend_mp"):
        result = train(cfg(epochs=2), progress=False, data=_always_overflowing(), model=tiny())
    assert result.skipped == result.steps == 8
    warnings = [r.getMessage() for r in caplog.records if "loss scale collapse" in r.getMessage()]
    assert len(warnings) == 1 and "6 consecutive overflow steps up to step 6" in warnings[0]
    assert "loss scale collapsed: 6 consecutive overflow steps" in result.summary()
    assert result.history["collapse"] == result.collapse
    assert result.diverged is None


def test_loss_scale_collapse_stops_the_run_as_mindspore_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trainer_mod, "COLLAPSE_WARN", 3)
    monkeypatch.setattr(trainer_mod, "COLLAPSE_STOP", 10)
    result = train(cfg(epochs=5), out_dir=tmp_path, progress=False, data=_always_overflowing(), model=tiny())
    assert (
        result.steps == 10
        and result.diverged is not None
        and "the loss scale collapsed: 10 consecutive overflow steps" in result.diverged
    )
    assert strict_json((tmp_path / "history.json").read_text())["diverged"]["step"] == 10


def test_scale_reaching_zero_warns_at_once(caplog: pytest.LogCaptureFixture) -> None:
    """PyTorch's preset has no floor: a scale of 2^-148 halves to 0 on the first overflow."""
    with caplog.at_level(logging.WARNING, logger="ascend_mp"):
        result = train(cfg(init_scale=2.0**-148), progress=False, data=_always_overflowing(), model=tiny())
    assert result.final_scale == 0.0
    assert result.collapse is not None and "scale now 0" in result.collapse


# --------------------------------------------------------------------------------------
# Damaged checkpoints
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ck")
    train(cfg(), out_dir=out, progress=False, model=tiny())
    return out / "checkpoint.npz"


def _damaged(checkpoint: Path, tmp_path: Path, **changes: Any) -> Path:
    with np.load(checkpoint, allow_pickle=False) as data:
        arrays = {k: np.asarray(data[k]) for k in data.files}
    for k, v in changes.items():
        if v is None:
            del arrays[k]
        else:
            arrays[k] = np.asarray(v)
    path = tmp_path / "damaged.npz"
    np.savez(path, **arrays)  # pyright: ignore[reportArgumentType]
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"epoch": -1}, "checkpoint field 'epoch' must be in [0, 2147483647], got -1"),
        ({"epoch": [1, 2]}, "checkpoint field 'epoch' must be an integer scalar, got int64 of shape (2,)"),
        ({"epoch": 1.5}, "checkpoint field 'epoch' must be an integer scalar, got float64 of shape ()"),
        ({"step": 2**40}, "checkpoint field 'step' must be in [0, 2147483647], got 1099511627776"),
        ({"good_steps": -3}, "checkpoint field 'good_steps' must be in [0, 2147483647], got -3"),
        ({"loss_scale": [1.0, 2.0]}, "checkpoint field 'loss_scale' must be a float scalar, got float64 of shape (2,)"),
        (
            {"loss_scale": np.float32("nan")},
            "checkpoint field 'loss_scale' must be a positive finite float32 number, got nan",
        ),
        (
            {"loss_scale": np.float32(0)},
            "checkpoint field 'loss_scale' must be a positive finite float32 number, got 0.0",
        ),
        (
            {"param_0": np.zeros((3, 3), np.float32)},
            "checkpoint field 'param_0' (dense_0_w) has shape (3, 3), expected (64, 10)",
        ),
        (
            {"param_1": np.full(10, np.nan, np.float32)},
            "checkpoint field 'param_1' (dense_0_b) holds non-finite values",
        ),
        ({"param_1": np.zeros(10, np.int32)}, "checkpoint field 'param_1' (dense_0_b) must hold floats, got int32"),
        ({"slot_0": np.zeros(2, np.float32)}, "checkpoint field 'slot_0' (zeros:0) has shape (2,), expected (64, 10)"),
        ({"slot_0": None}, "not a readable ascend-train checkpoint (field 'slot_0' is missing)"),
        ({"history": json.dumps([1, 2])}, "checkpoint field 'history' must be a JSON object, got list"),
        (
            {"history": "{not json"},
            "checkpoint field 'history' is not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        ),
        (
            {
                "history": json.dumps(
                    {"steps": {"loss": [1.0], "scale": [], "skipped": []}, "epochs": [], "underflow": {"samples": []}}
                )
            },
            "checkpoint field 'history' has 'steps' lists of different lengths",
        ),
        (
            {
                "history": json.dumps(
                    {"steps": {"loss": [], "scale": [], "skipped": []}, "epochs": [], "underflow": {"samples": []}}
                )
            },
            "checkpoint field 'history' records 0 epochs, but the checkpoint is at epoch 1",
        ),
        ({"meta": np.zeros(3)}, "checkpoint field 'meta' must be a JSON string, got float64 of shape (3,)"),
    ],
)
def test_damaged_checkpoint_fields_are_named(
    checkpoint: Path, tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    path = _damaged(checkpoint, tmp_path, **changes)
    with pytest.raises(AscendError) as info:
        train(cfg(epochs=2), resume=path, progress=False, model=tiny())
    assert str(info.value) == f"{path}: {message}"


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.99])
def test_truncated_checkpoint_is_one_line(checkpoint: Path, tmp_path: Path, keep: float) -> None:
    data = checkpoint.read_bytes()
    path = tmp_path / "truncated.npz"
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(AscendError, match=r"truncated.npz: not a readable ascend-train checkpoint \(\w+"):
        train(cfg(epochs=2), resume=path, progress=False, model=tiny())


def test_cli_damaged_checkpoint_exits_1(checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "truncated.npz"
    path.write_bytes(checkpoint.read_bytes()[:300])
    code, _, err = run_cli(capsys, "--resume", str(path), "--subset", "64", "-q")
    assert (
        code == 1
        and err.startswith(f"ascend-train: error: {path}: not a readable ascend-train checkpoint")
        and err.count("\n") == 1
    )


def test_damaged_checkpoint_leaves_nothing_changed(checkpoint: Path, tmp_path: Path) -> None:
    path = _damaged(checkpoint, tmp_path, loss_scale=np.float32("inf"))
    before = path.read_bytes()
    with pytest.raises(AscendError):
        train(cfg(epochs=2), out_dir=tmp_path, resume=path, progress=False, model=tiny())
    assert path.read_bytes() == before and not (tmp_path / "history.json").exists()


# --------------------------------------------------------------------------------------
# Devices, pipes and symlinks at the output paths
# --------------------------------------------------------------------------------------

OUTPUTS = ("history.json", "loss_scale.png", "checkpoint.npz")


def test_symlinks_at_the_outputs_survive_and_receive(tmp_path: Path) -> None:
    out, targets = tmp_path / "run", tmp_path / "targets"
    out.mkdir()
    targets.mkdir()
    for name in OUTPUTS:
        (targets / name).write_bytes(b"old")
        (out / name).symlink_to(targets / name)
    train(cfg(), out_dir=out, progress=False, model=tiny())
    for name in OUTPUTS:
        assert (out / name).is_symlink()
    assert strict_json((targets / "history.json").read_text())["summary"]["steps"] == 4
    assert (targets / "loss_scale.png").read_bytes()[:4] == b"\x89PNG"
    with np.load(targets / "checkpoint.npz") as ck:
        assert int(ck["epoch"]) == 1


def test_pipes_at_the_outputs_survive_and_receive(tmp_path: Path) -> None:
    received: dict[str, bytes] = {}

    def reader(path: Path) -> None:
        with path.open("rb") as f:
            received[path.name] = f.read()

    threads = []
    for name in OUTPUTS:
        os.mkfifo(tmp_path / name)
        t = threading.Thread(target=reader, args=(tmp_path / name,), daemon=True)
        t.start()
        threads.append(t)
    train(cfg(), out_dir=tmp_path, progress=False, model=tiny())
    for t in threads:
        t.join(timeout=30)
    for name in OUTPUTS:
        assert stat.S_ISFIFO(os.stat(tmp_path / name).st_mode)
    assert strict_json(received["history.json"].decode())["summary"]["steps"] == 4
    assert received["loss_scale.png"][:4] == b"\x89PNG" and received["checkpoint.npz"][:4] == b"PK\x03\x04"


def test_devices_at_the_outputs_survive(tmp_path: Path) -> None:
    null = os.stat("/dev/null").st_rdev
    try:
        for name in OUTPUTS:
            os.mknod(tmp_path / name, stat.S_IFCHR | 0o666, null)
    except PermissionError:
        pytest.skip("creating a device node needs privileges")
    result = train(cfg(), out_dir=tmp_path, progress=False, model=tiny())
    for name in OUTPUTS:
        st = os.stat(tmp_path / name)
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == null
    assert set(result.outputs) == {"history", "plot", "checkpoint"}


# --------------------------------------------------------------------------------------
# Ctrl-C, custom models, progress, plot, bf16
# --------------------------------------------------------------------------------------


def test_ctrl_c_exits_130_quietly(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(trainer_mod, "compile_training", interrupted)
    monkeypatch.setattr("ascend_mp.train.compile_training", interrupted)
    code, out, err = run_cli(capsys, "--subset", "64", "-q")
    assert code == 130 and err == "" and out == ""


def test_sigterm_exits_143_and_leaves_no_temporary_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal

    real = trainer_mod.write_history

    def terminated(path: Path, history: dict[str, Any]) -> None:
        real(path, history)
        os.kill(os.getpid(), signal.SIGTERM)  # arrives while the plot is still to be written

    monkeypatch.setattr(trainer_mod, "write_history", terminated)
    code, _, err = run_cli(capsys, "--subset", "64", "--epochs", "1", "-q", "--out", str(tmp_path))
    assert code == 143 and err == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.npz", "history.json"]


def test_custom_models_are_first_class(tmp_path: Path) -> None:
    model = Sequential([Dense(64, 32), Relu(), Dense(32, 10)], name="my-net")
    result = train(cfg(), out_dir=tmp_path, progress=False, model=model)
    assert re.match(r"model my-net, allow_mix_precision \(\d+ of \d+ ops in fp16\)", result.summary())
    history = strict_json((tmp_path / "history.json").read_text())
    assert history["config"]["model"] == "my-net"
    with np.load(tmp_path / "checkpoint.npz") as ck:
        assert json.loads(str(ck["meta"]))["model"] == "my-net"
    # a model built for the 8x8 images trains on them
    from ascend_mp.builder import Conv2D, Flatten

    cnn = Sequential(
        [Conv2D(1, 4, 3, pad=1), Relu(), Flatten(), Dense(4 * 8 * 8, 10)], input_shape=(1, 8, 8), name="conv4"
    )
    assert train(cfg(), progress=False, model=cnn).model_name == "conv4"


def test_custom_model_with_the_wrong_input_is_one_line() -> None:
    with pytest.raises(
        AscendError, match=r"model 'odd' takes inputs of shape \(32,\); digits are \(64,\) or \(1, 8, 8\)"
    ):
        train(cfg(), progress=False, model=Sequential([Dense(32, 10)], name="odd"))


def test_one_progress_bar_for_the_whole_run(capsys: pytest.CaptureFixture[str]) -> None:
    train(cfg(epochs=3), progress=True, model=tiny())
    err = capsys.readouterr().err
    assert "12/12" in err and "4/4" not in err  # one bar of 3 x 4 steps, not a bar per epoch
    assert "epoch=3" in err and "scale=" in err and "loss=" in err and err.endswith("]\n")  # it stays (leave=True)


def test_plot_panels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    figures: list[Any] = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figures.append(fig))
    data = load_digits(subset=64)
    x = data.x_train.copy()
    x[:2] = np.float32(3e38)  # the batches holding these two examples overflow
    result = train(
        cfg(epochs=2),
        out_dir=tmp_path,
        progress=False,
        model=tiny(),
        data=Dataset(x, data.y_train, data.x_test, data.y_test),
    )
    (fig,) = figures
    loss_ax, scale_ax, acc_ax = fig.axes
    assert loss_ax.get_yscale() == "log" and scale_ax.get_yscale() == "log"
    steps = result.history["steps"]
    skipped = [i + 1 for i, s in enumerate(steps["skipped"]) if s]
    assert skipped
    marks = next(c for c in loss_ax.collections if "skipped" in c.get_label())
    losses = [float(v) for v in steps["loss"]]
    finite = [v for v in losses if np.isfinite(v) and v > 0]
    for sx, sy in marks.get_offsets():
        want = losses[int(sx) - 1]
        assert sy == pytest.approx(want if np.isfinite(want) and want > 0 else max(finite))  # at its loss, not at 0
    initial = next(c for c in scale_ax.collections if "initial scale" in c.get_label())
    assert initial.get_offsets().tolist() == [[0.0, 65536.0]]
    overflow = next(c for c in scale_ax.collections if c.get_label() == "overflow")
    assert [int(p[0]) for p in overflow.get_offsets()] == skipped
    (line,) = acc_ax.get_lines()
    assert line.get_xdata().tolist() == [4, 8] and line.get_ydata().tolist() == [
        100 * e["test_accuracy"] for e in result.history["epochs"]
    ]


def test_bf16_runs_say_bf16() -> None:
    """bf16 runs name bf16, never fp16; on Ascend 910 (no bf16 kernels) the mode reduces nothing and says so."""
    config = cfg(precision_mode="allow_mix_precision_bf16", loss_scale="none")
    compiled = compile_training(config, tiny())
    assert re.match(
        r"precision allow_mix_precision_bf16: nothing reduced, all \d+ ops keep fp32", report_summary(compiled.report)
    )
    summary = train(config, progress=False, compiled=compiled).summary()
    assert (
        re.search(r"allow_mix_precision_bf16 \(nothing reduced: all \d+ ops fp32\)", summary) and "fp16" not in summary
    )
    config = cfg(precision_mode="allow_mix_precision_bf16", loss_scale="none", soc="ascend910b")
    compiled = compile_training(config, tiny())
    assert "reduced to bf16" in report_summary(compiled.report)
    result = train(config, progress=False, compiled=compiled)
    summary = result.summary()
    assert (
        re.search(r"allow_mix_precision_bf16 \(\d+ of \d+ ops in bf16\)", summary)
        and "bf16 underflow" in summary
        and "fp16" not in summary
    )
