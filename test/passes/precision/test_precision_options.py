"""The options of `ascend-precision` and `ascend-loss-scale` are stated once and shared by every entry point: the
passes, `run_precision`, the ATC flags of `ascend-opt` / `ascend-run`, `TrainConfig` and `ascend-train`."""

from __future__ import annotations

import argparse
import importlib
import json
from dataclasses import fields
from pathlib import Path

import pytest
from xdsl.utils.arg_spec import parse_pipeline

from ascend_mp.ir import parse_module, print_module
from ascend_mp.passes.loss_scale import LossScaleOptions, LossScalePass
from ascend_mp.passes.precision import AscendPrecisionPass, PrecisionOptions, run_precision
from ascend_mp.policies import POLICIES
from ascend_mp.precision_options import AMP_DTYPES, POLICY_NAMES, option_flags
from ascend_mp.tools.atc import ATC_FLAGS, add_atc_arguments, precision_options
from ascend_mp.tools.cli import UsageError
from ascend_mp.train import TrainConfig
from ascend_mp.train.config import training_passes

GRAPH = """
func.func @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = ascend.Relu %a {name = "relu"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %b : tensor<4x4xf32>
}
"""


def test_the_pass_fields_are_the_options_fields() -> None:
    options = [(f.name, f.default) for f in fields(PrecisionOptions)]
    assert [(f.name, f.default) for f in fields(AscendPrecisionPass)] == options
    assert len(options) == 13
    shared = [(f.name, f.default) for f in fields(LossScaleOptions)]
    assert [(f.name, f.default) for f in fields(LossScalePass)][-len(shared) :] == shared


def test_the_atc_flags_derive_from_the_fields() -> None:
    assert ATC_FLAGS == option_flags()
    assert ATC_FLAGS["precision_mode"] == "mode" and ATC_FLAGS["soc_version"] == "soc"
    assert ATC_FLAGS["precision_report"] == "report" and ATC_FLAGS["amp_policy"] == "policy"
    assert set(ATC_FLAGS.values()) == {f.name for f in fields(PrecisionOptions)} - {"tf_lists"}
    parser = argparse.ArgumentParser()
    add_atc_arguments(parser, "atc")
    args = parser.parse_args(
        ["--precision_mode", "allow_mix_precision", "--soc_version", "Ascend910B1", "--amp_dtype", "bf16"]
    )
    assert precision_options(args) == {"mode": "allow_mix_precision", "soc": "ascend910b", "amp_dtype": "bf16"}


@pytest.mark.parametrize("tool", ["ascend_eval", "ascend_tune"])
def test_the_eval_and_tune_flags_are_the_atc_flags(tool: str) -> None:
    """ascend-eval and ascend-tune register some of the ATC flags: the same flags, help and metavar as ascend-opt's,
    read back into the pass fields they name (tune's own `--precision_mode`, the mode it tunes, is not one of them)."""
    module = importlib.import_module(f"ascend_mp.tools.{tool}")
    parser = module._parser()  # pyright: ignore[reportPrivateUsage]
    reference = argparse.ArgumentParser()
    add_atc_arguments(reference, "atc")
    ours = {a.dest: a for a in parser._actions}  # pyright: ignore[reportPrivateUsage]
    theirs = {a.dest: a for a in reference._actions}  # pyright: ignore[reportPrivateUsage]
    for flag in module.PASS_FLAGS:
        assert (ours[flag].option_strings, ours[flag].help, ours[flag].metavar) == (
            theirs[flag].option_strings,
            theirs[flag].help,
            theirs[flag].metavar,
        )
    argv = ["m.onnx", "d.npz", "--soc_version", "ascend910b", "--op_info", "ops.json"]
    args = parser.parse_args(argv)
    assert precision_options(args, only=module.PASS_FLAGS) == {"soc": "ascend910b", "op_info": "ops.json"}
    with pytest.raises(UsageError, match="--op_info given twice"):  # as in ascend-opt
        parser.parse_args([*argv, "--op_info", "other.json"])


def test_the_choices_are_the_libraries() -> None:
    assert POLICY_NAMES == tuple(POLICIES)
    from ascend_mp.policies import amp_dtype

    for name in AMP_DTYPES:
        amp_dtype(name)  # accepted


def test_a_pipeline_spec_sets_the_fields() -> None:
    (spec,) = parse_pipeline('ascend-precision{mode=allow_mix_precision modify-mixlist="x.json" amp-dtype=bf16}')
    made = AscendPrecisionPass.from_pass_spec(spec)
    assert made.options() == PrecisionOptions(mode="allow_mix_precision", modify_mixlist="x.json", amp_dtype="bf16")
    assert made.given() == {"mode": "allow_mix_precision", "modify_mixlist": "x.json", "amp_dtype": "bf16"}


def test_run_precision_takes_the_options_or_their_fields(tmp_path: Path) -> None:
    a, b = parse_module(GRAPH), parse_module(GRAPH)
    ra = run_precision(a, PrecisionOptions(mode="allow_mix_precision", report=str(tmp_path / "a.json")))
    rb = run_precision(b, mode="allow_mix_precision", report=str(tmp_path / "b.json"))
    assert print_module(a) == print_module(b) and ra.to_json() == rb.to_json()
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    assert ra.by_name("mm").reason == "white" and ra.ops_reduced == 2
    with pytest.raises(TypeError, match="not both"):
        run_precision(parse_module(GRAPH), PrecisionOptions(), mode="force_fp16")


def test_train_config_holds_the_pass_options() -> None:
    cfg = TrainConfig(
        precision_mode="allow_mix_precision",
        keep_dtype="k.txt",
        soc_version="ascend910b",
        loss_scale="fixed",
        scale=1024.0,
        lr=0.5,
    )
    assert cfg.precision == PrecisionOptions(mode="allow_mix_precision", keep_dtype="k.txt", soc="ascend910b")
    assert cfg.scaling == LossScaleOptions(manager="fixed", scale=1024.0, optimizer="momentum", lr=0.5)
    assert (cfg.precision_mode, cfg.loss_scale) == ("allow_mix_precision", "fixed")
    assert TrainConfig(precision_mode=None).precision is None
    assert TrainConfig(precision_mode_v2="mixed_float16").precision == PrecisionOptions(mode_v2="mixed_float16")
    assert TrainConfig(amp_policy="torch").precision == PrecisionOptions(policy="torch")
    assert TrainConfig(precision_mode_v2="mixed_bfloat16").precision_mode == "allow_mix_precision_bf16"
    with pytest.raises(TypeError, match="unexpected option 'warp'"):
        TrainConfig(warp=9)  # pyright: ignore[reportArgumentType]


def test_the_training_pipeline_is_ascend_opts_order_with_every_option() -> None:
    cfg = TrainConfig(
        precision=PrecisionOptions(policy="torch", amp_dtype="bf16", to_float="fc=fp32"),
        scaling=LossScaleOptions(manager="fixed", scale=8.0),
        keep_loss_fp32=False,
    )
    passes = training_passes(cfg)
    assert [p.name for p in passes] == ["ascend-autodiff", "ascend-precision", "ascend-loss-scale"]
    autodiff, precision, scaling = passes
    assert autodiff.keep_loss is False  # pyright: ignore[reportAttributeAccessIssue]
    assert isinstance(precision, AscendPrecisionPass) and precision.options() == cfg.precision
    assert isinstance(scaling, LossScalePass) and scaling.manager == "fixed" and scaling.scale == 8.0
    assert [p.name for p in training_passes(TrainConfig(precision_mode=None))] == [
        "ascend-autodiff",
        "ascend-loss-scale",
    ]


def test_ascend_train_takes_the_atc_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ascend_mp.tools.ascend_train import main

    report = tmp_path / "report.json"
    main(
        [
            "--subset",
            "64",
            "--epochs",
            "1",
            "--loss-scale",
            "none",
            "--amp_policy",
            "torch",
            "--amp_dtype",
            "bf16",
            "--soc_version",
            "ascend910b",
            "--precision-report",
            str(report),
        ]
    )
    out = capsys.readouterr().out
    assert out.startswith("precision mode: amp_policy torch\nprecision torch bf16:") and "reduced to bf16" in out
    assert "model mlp, amp_policy torch (20 of 31 ops in bf16), loss scale none" in out  # what the report counts
    written = json.loads(report.read_text())
    assert written["mode"] == "torch bf16" and written["soc"] == "ascend910b"
    low = {d["chosen"]["outputs"][0] for d in written["ops"] if d["type"] == "MatMulV2"}
    assert low == {"bfloat16"}  # the torch policy's bf16 autocast reached the pass
    with pytest.raises(SystemExit) as e:
        main(["--amp_policy", "jax"])
    assert e.value.code == 2 and "invalid choice: 'jax'" in capsys.readouterr().err
