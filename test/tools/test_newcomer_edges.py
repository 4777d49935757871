"""What a newcomer meets first, tool by tool: --version and -f in every tool, ONNX models found by their content,
optional packages named by their extra, --log levels, both spellings of the precision flags, --compare-modes'
errors on one scale, warnings that name their mode, ascend-opt's -p help, a concise demo, bench rows of
two-output models."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ascend_mp.tools import ascend_eval, ascend_opt, ascend_run, ascend_train, ascend_tune

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TOOLS: dict[str, Callable[[list[str]], None]] = {
    "ascend-opt": ascend_opt.main,
    "ascend-run": ascend_run.main,
    "ascend-train": ascend_train.main,
    "ascend-eval": ascend_eval.main,
    "ascend-tune": ascend_tune.main,
}
READ_MODELS = ("ascend-opt", "ascend-run", "ascend-eval", "ascend-tune")


def call(tool: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        TOOLS[tool](argv)
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def two_output_model(path: Path) -> dict[str, np.ndarray[Any, Any]]:
    """A MatMul and a Relu, both graph outputs (onnx.helper); returns the weight."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "two",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3]),
        ],
        [numpy_helper.from_array(w, "w")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return {"w": w}


# --------------------------------------------------------------------------------------
# --version and -f in every tool
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", list(TOOLS))
def test_every_tool_prints_its_version(tool: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = call(tool, ["--version"], capsys)
    assert (code, err) == (0, "")
    assert out == f"{tool} (ascend-mp {version('ascend-mp')}) built on xdsl {version('xdsl')}\n"


@pytest.mark.parametrize("tool", READ_MODELS)
def test_every_tool_that_reads_a_model_takes_the_same_f_values(tool: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(
        tool, ["-f", "pb", "model", "data.npz"][: 3 if tool in ("ascend-opt", "ascend-run") else 4], capsys
    )
    assert code == 2 and err.count("\n") == 1
    assert "'mlir', 'onnx'" in err or "mlir, onnx" in err, err


def test_ascend_run_reads_an_onnx_model_by_f_and_by_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import onnxruntime as ort

    model = tmp_path / "model.bin"
    two_output_model(model)
    (tmp_path / "model").write_bytes(model.read_bytes())  # no extension at all
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    expected = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for argv in (
        ["-f", "onnx", str(model)],
        [str(tmp_path / "model")],
        ["--frontend", "onnx", str(tmp_path / "model")],
    ):
        out_file = tmp_path / "out.npz"
        code, out, err = call("ascend-run", [*argv, "--input", f"x={tmp_path / 'x.npy'}", "-o", str(out_file)], capsys)
        assert code == 0, err
        assert "@main: 1 input, 2 outputs" in out
        got = np.load(out_file)
        for name, want in zip(("y", "z"), expected):
            np.testing.assert_allclose(got[name], want, rtol=1e-6, atol=1e-6)
    code, out, err = call("ascend-opt", [str(model)], capsys)
    assert code == 0 and 'onnx.name = "z"' in out, err


def test_a_binary_file_that_is_not_mlir_says_so_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model.bin"
    two_output_model(model)
    cut = tmp_path / "cut.bin"
    cut.write_bytes(model.read_bytes()[:60])  # a truncated model: no longer reads as ONNX
    hint = "a binary file, not MLIR text (an ONNX model: name it .onnx or pass -f onnx)"
    for tool in ("ascend-run", "ascend-opt"):
        code, _, err = call(tool, [str(cut)], capsys)
        assert code == 1 and err.count("\n") == 1
        assert err.startswith(f"{tool}: error: {cut}:1:") and "not UTF-8 text (byte 0x" in err and hint in err
    bad = tmp_path / "latin1.mlir"
    bad.write_bytes(b"// caf\xe9\n")  # text in another encoding: no binary-file hint
    code, _, err = call("ascend-run", [str(bad)], capsys)
    assert code == 1 and err.endswith("not UTF-8 text (byte 0xe9)\n")


def test_onnx_is_recognised_by_its_protobuf_fields(tmp_path: Path) -> None:
    from ascend_mp.frontend.tools import is_onnx, looks_like_onnx

    model = tmp_path / "m.data"
    two_output_model(model)
    data = model.read_bytes()
    cases = {
        "m.data": (data, True),
        "cut": (data[:-1], False),
        "text.mlir": ((EXAMPLES / "mlp.mlir").read_bytes(), False),
        "empty": (b"", False),
        "zeros": (b"\0" * 64, False),
        "no_graph": (data[: data.index(b"\x3a")] if data[0] == 0x08 else b"", False),
    }
    for name, (content, want) in cases.items():
        (tmp_path / name).write_bytes(content)
        assert looks_like_onnx(str(tmp_path / name)) is want, name
    assert not looks_like_onnx(str(tmp_path)) and not looks_like_onnx(str(tmp_path / "missing"))
    assert is_onnx(str(model)) and is_onnx("missing.onnx") and not is_onnx("-") and not is_onnx(None)


def test_eval_and_train_take_an_onnx_model_without_its_extension(tmp_path: Path) -> None:
    from ascend_mp.evaluate import load_model
    from ascend_mp.tools.train_inputs import model_argument

    model = tmp_path / "classifier"
    two_output_model(model)
    loaded = load_model(str(model))
    assert loaded.onnx and [n for n, _, _ in loaded.inputs] == ["x"] and loaded.outputs == ["y", "z"]
    assert model_argument(str(model)) == str(model)


# --------------------------------------------------------------------------------------
# Optional packages
# --------------------------------------------------------------------------------------


def test_training_without_tqdm_and_matplotlib_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `import tqdm` now raises ImportError
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    run = tmp_path / "run"
    code, out, err = call("ascend-train", ["--epochs", "1", "--subset", "64", "--out", str(run)], capsys)
    assert code == 0, err
    assert "Traceback" not in err and "test accuracy" in out
    warnings = [line for line in err.splitlines() if ": warning: " in line]
    assert warnings == [
        f"ascend-train: warning: the plot {run / 'loss_scale.png'} needs matplotlib, which is not installed: "
        "pip install 'ascend-mp[plot]'; it is not written"
    ]
    assert (run / "history.json").exists() and not (run / "loss_scale.png").exists()


def test_eval_plot_without_matplotlib_is_one_line_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    plot = tmp_path / "eval.png"
    code, _, err = call("ascend-eval", ["model.onnx", "data.npz", "--plot", str(plot)], capsys)
    assert code == 1
    assert err == "ascend-eval: error: --plot needs matplotlib, which is not installed: pip install 'ascend-mp[plot]'\n"


def test_every_optional_package_is_declared_in_its_extra_with_a_minimum_version() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    import re

    from ascend_mp.optional import EXTRA_OF

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for module, (dist, extra) in EXTRA_OF.items():
        specs = [s for s in extras[extra] if re.split(r"[<>=\[ ]", s)[0] == dist]
        assert len(specs) == 1 and re.search(r">=|==", specs[0]), (module, extra, extras[extra])
        assert any(re.split(r"[<>=\[ ]", s)[0] == dist for s in extras["all"]), dist
    usage = (ROOT / "docs" / "usage" / "install.md").read_text()
    for extra in {extra for _, extra in EXTRA_OF.values()} | {"all"}:
        assert f"ascend-mp[{extra}]" in usage, extra


# --------------------------------------------------------------------------------------
# --log and the precision flags
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("level", "epoch_lines"), [("warning", 1), ("info", 1), ("error", 0)])
def test_log_warning_prints_no_info_line(level: str, epoch_lines: int, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call("ascend-train", ["--epochs", "1", "--subset", "64", "--log", level], capsys)
    assert code == 0, err
    assert ": info: " not in err if level != "info" else True
    assert sum(line.startswith("ascend-train: epoch 1/1: loss ") for line in err.splitlines()) == epoch_lines


def test_ascend_opt_log_levels(capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(EXAMPLES / "model.mlir"), "--precision_mode=allow_mix_precision"]
    _, _, err = call("ascend-opt", [*args, "--log", "warning"], capsys)
    assert ": info: " not in err
    _, _, err = call("ascend-opt", [*args, "--log", "info"], capsys)
    assert "ascend-opt: info: Reduce precision: fc1 float32 -> float16 (white)" in err.splitlines()


def test_precision_flags_take_both_spellings_in_every_tool(capsys: pytest.CaptureFixture[str]) -> None:
    mlp = str(EXAMPLES / "mlp.mlir")
    parsers: dict[str, Callable[[list[str]], Any]] = {
        "ascend-run": lambda a: ascend_run.build_parser().parse_args([mlp, *a]),
        "ascend-train": lambda a: ascend_train.build_parser().parse_args(a),
        "ascend-tune": lambda a: ascend_tune._parser().parse_args(["m.onnx", "d.npz", *a]),
        "ascend-opt": lambda a: ascend_opt.AscendOptMain(args=[mlp, *a]).args,
    }
    for tool, parse in parsers.items():
        for flag in ("--precision_mode", "--precision-mode"):
            assert parse([flag, "force_fp16"]).precision_mode == "force_fp16", (tool, flag)
    for tool in ("ascend-run", "ascend-opt"):
        args = parsers[tool](["--op-select-implmode", "high_performance", "--modify-mixlist", "ops.json"])
        assert (args.op_select_implmode, args.modify_mixlist) == ("high_performance", "ops.json")
    code, _, err = call("ascend-run", [mlp, "--precision_mode", "force_fp16", "--precision-mode", "force_fp32"], capsys)
    assert code == 2 and "given twice" in err


# --------------------------------------------------------------------------------------
# --compare-modes and its warnings
# --------------------------------------------------------------------------------------


def _mlp64(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> np.ndarray[Any, Any]:
    h = np.maximum(x @ w1 + b1, 0.0)
    z = h @ w2 + b2
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_compare_modes_mean_and_max_errors_share_one_scale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ascend_mp.interpreter.compare import precision_rewritten
    from ascend_mp.interpreter.runner import Program
    from ascend_mp.ir import read_module

    rng = np.random.default_rng(3)
    shapes = {"x": (64, 64), "w1": (64, 128), "b1": (128,), "w2": (128, 10), "b2": (10,)}
    args = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    np.savez(tmp_path / "in.npz", **args)
    code, out, err = call(
        "ascend-run",
        [str(EXAMPLES / "mlp.mlir"), "--inputs", str(tmp_path / "in.npz"), "--compare-modes", "--json"],
        capsys,
    )
    assert code == 0, err
    rows = {m["mode"]: m for m in json.loads(out)["modes"] if m["ok"]}
    reference = _mlp64(*(a.astype(np.float64) for a in args.values()))  # numpy float64, independent
    for mode in ("force_fp16", "allow_mix_precision", "cube_fp16in_fp32out"):
        module = precision_rewritten(read_module(str(EXAMPLES / "mlp.mlir")), mode)
        (y,) = Program.from_module(module).run("mlp", *args.values())
        diff = np.abs(y.astype(np.float64) - reference)
        scale = np.abs(reference).max()
        assert rows[mode]["max_rel_err"] == pytest.approx(diff.max() / scale, rel=1e-6)
        assert rows[mode]["mean_rel_err"] == pytest.approx(diff.mean() / scale, rel=1e-6)
    for row in rows.values():
        assert row["mean_rel_err"] <= row["max_rel_err"], row


def test_no_kernel_warnings_name_the_mode(capsys: pytest.CaptureFixture[str]) -> None:
    cnn = str(EXAMPLES / "cnn.mlir")
    code, _, err = call(
        "ascend-run", [cnn, "--compare-modes", "--modes", "force_fp32,allow_mix_precision_bf16"], capsys
    )
    assert code == 0
    assert f"ascend-run: warning: {cnn}:3:3: Conv2D 'conv1' under allow_mix_precision_bf16: no bf16 kernel;" in err


# --------------------------------------------------------------------------------------
# ascend-opt's -p help and --list-passes; pass options
# --------------------------------------------------------------------------------------


def test_opt_help_shows_the_project_passes_not_xdsl_s(capsys: pytest.CaptureFixture[str]) -> None:
    from ascend_mp.passes import PASSES

    code, out, _ = call("ascend-opt", ["--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    p_help = text.split("-p PASSES, --passes PASSES", 1)[1].split(" --print-between-passes", 1)[0]
    for name in PASSES:
        assert name in p_help.replace("- ", "-"), name
    assert "convert-linalg-to-loops" not in p_help.replace("- ", "-") and "--list-passes all" in p_help
    code, out, _ = call("ascend-opt", ["--list-passes"], capsys)
    assert code == 0 and out.split() == list(PASSES)
    code, out, _ = call("ascend-opt", ["--list-passes", "all"], capsys)
    listed = out.split()
    assert code == 0 and set(PASSES) < set(listed) and {"cse", "canonicalize"} < set(listed)


def test_pass_options_coerce_ints_to_floats_and_leave_the_rest() -> None:
    from xdsl.utils.arg_spec import parse_pipeline

    from ascend_mp.passes import PASSES
    from ascend_mp.tools.cli import UsageError, coerce_pass_options

    pipeline = "ascend-loss-scale{scale=1024 growth-interval=100 keep-loss=true}"
    (spec,) = parse_pipeline(coerce_pass_options(PASSES, pipeline))
    assert spec.parameters == {"scale": (1024.0,), "growth-interval": (100,), "keep-loss": (True,)}
    assert [type(v) for v in (*spec.parameters["scale"], *spec.parameters["growth-interval"])] == [float, int]
    unchanged = "ascend-precision{mode=force_fp16},ascend-loss-scale{scale=2.5}"
    assert coerce_pass_options(PASSES, unchanged) is unchanged
    for bad, says in (
        ("ascend-loss-scale{wrt=1.5}", "option 'wrt': expected int | None, got 1.5"),
        ("ascend-loss-scale{keep-loss=1}", "option 'keep-loss': expected bool, got 1"),
        ("no-such-pass", "unknown pass 'no-such-pass' in -p (--list-passes all lists them)"),
    ):
        with pytest.raises(UsageError, match=says.replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")):
            coerce_pass_options(PASSES, bad)


# --------------------------------------------------------------------------------------
# The demo and the bench
# --------------------------------------------------------------------------------------


def test_demo_is_concise(capsys: pytest.CaptureFixture[str]) -> None:
    from ascend_mp.demo import main

    main(["--epochs", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 130
    assert not any(line.lstrip().startswith(("builtin.module", "func.func")) for line in lines)  # no IR dump
    section = lines[lines.index("Why (the precision report):") - 16 : lines.index("Why (the precision report):")]
    ops = [line.split(" = ", 1)[1].split()[0] for line in section if " = " in line]
    assert ops.count("Cast") == 6 and ops.count("MatMulV2") == 2 and ops[-1] == "Cast"  # the mlp: 6 casts, 12 ops
    assert len(lines) < 80


def test_bench_models_rows_for_a_two_output_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks import models

    two_output_model(tmp_path / "twoout.legacy.onnx")
    np.savez(tmp_path / "twoout.inputs.npz", x=np.random.default_rng(4).standard_normal((2, 4)).astype(np.float32))
    monkeypatch.setattr(models, "ZOO", tmp_path)
    rows: list[tuple[str, float]] = []
    models.bench_models(False, lambda r: rows.append(r), lambda name, value, *a, **k: (name, value))
    found = dict(rows)
    assert found["twoout (legacy): fp32 error vs onnxruntime"] < 1e-6
    assert 0 < found["twoout (legacy): allow_mix_precision error vs onnxruntime"] < 1e-2
