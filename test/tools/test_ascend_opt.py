"""`ascend-opt` as a user meets it: flags, errors, output files."""

import json
from pathlib import Path

import pytest
from cli_util import run_main

from ascend_mp.tools.ascend_opt import main

GOOD = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""

BAD_SHAPE = (
    GOOD.replace("-> tensor<4xf32> {", "-> tensor<5xf32> {")
    .replace("-> tensor<4xf32>\n", "-> tensor<5xf32>\n")
    .replace("return %0 : tensor<4xf32>", "return %0 : tensor<5xf32>")
)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_main(main, args, capsys)


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("ascend-opt: error: ")
    return lines[0]


def test_prints_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(GOOD)
    code, out, _ = run([str(src), "-p", "ascend-attach-caps"], capsys)
    assert code == 0
    assert "ascend.Relu %x {caps = #ascend.caps<(f16) -> f16, (f32) -> f32" in out


def test_help_lists_atc_flags_and_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    for flag in (
        "--precision_mode",
        "--precision_mode_v2",
        "--modify_mixlist",
        "--keep_dtype",
        "--customize_dtypes",
        "--soc_version",
        "--op_info",
        "--precision-report",
        "ascend-attach-caps",
    ):
        assert flag in out


def test_missing_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([str(tmp_path / "nope.mlir")], capsys)
    assert code == 1
    assert "nope.mlir: No such file or directory" in one_line_error(err)


def test_parse_error_names_file_line_col(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(GOOD.replace("ascend.Relu %x :", "ascend.Relu %x, :"))
    code, _, err = run([str(src)], capsys)
    assert code == 1
    assert f"{src}:2:" in one_line_error(err)


def test_verify_error_names_op_location(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(BAD_SHAPE)
    code, _, err = run([str(src)], capsys)
    assert code == 1
    assert (
        one_line_error(err)
        == f"ascend-opt: error: {src}:2:3: 'ascend.Relu' op expects the result shape to equal the operand shape"
    )


def test_unknown_pass_and_bad_pipeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(GOOD)
    code, _, err = run([str(src), "-p", "no-such-pass"], capsys)
    assert code == 2
    assert "no-such-pass" in one_line_error(err)
    code, _, err = run([str(src), "-p", "ascend-attach-caps{"], capsys)
    assert code == 2
    assert "invalid pass pipeline" in one_line_error(err)


def test_bad_atc_choice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(GOOD)
    code, _, err = run([str(src), "--precision_mode=fast"], capsys)
    assert code == 2
    assert "invalid choice: 'fast'" in err


def test_output_file_is_atomic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = tmp_path / "m.mlir", tmp_path / "out.mlir"
    src.write_text(GOOD)
    assert run([str(src), "-o", str(out)], capsys)[0] == 0
    assert "ascend.Relu" in out.read_text()
    before = out.read_text()
    src.write_text(BAD_SHAPE)
    assert run([str(src), "-o", str(out)], capsys)[0] == 1
    assert out.read_text() == before, "a failed run must not touch an existing output file"
    assert [p.name for p in tmp_path.iterdir() if ".ascend-tmp-" in p.name] == []


def test_unwritable_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(GOOD)
    code, _, err = run([str(src), "-o", str(tmp_path / "no" / "dir" / "out.mlir")], capsys)
    assert code == 1
    assert "cannot write file" in one_line_error(err)


# --------------------------------------------------------------------------------------
# Exit codes, logging, pass options, targets, SoC names (issues 12 and 14)
# --------------------------------------------------------------------------------------

MIX = """func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = ascend.MatMulV2 %a, %b {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = ascend.Relu %0 {name = "relu"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %1 : tensor<4x4xf32>
}
"""


def test_exit_codes_usage_2_error_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(GOOD)
    assert run([str(src), "--bogus"], capsys)[0] == 2
    assert run([str(src), "--precision_mode", "force_fp16", "--precision_mode", "force_fp32"], capsys)[0] == 2
    assert run([str(src), "-t", "llvm"], capsys)[0] == 2
    src.write_text(BAD_SHAPE)
    assert run([str(src)], capsys)[0] == 1


def test_keyboard_interrupt_exits_130_quietly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ascend_mp.tools import ascend_opt

    def interrupted(self: object, prog: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ascend_opt.AscendOptMain, "apply_passes", interrupted)
    src, out = tmp_path / "m.mlir", tmp_path / "out.mlir"
    src.write_text(GOOD)
    code, stdout, err = run([str(src), "-o", str(out)], capsys)
    assert (code, stdout, err) == (130, "", "")
    assert list(tmp_path.iterdir()) == [src]


def test_only_the_mlir_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(GOOD)
    code, out, _ = run([str(src), "-t", "mlir"], capsys)
    assert code == 0 and "ascend.Relu" in out
    code, _, err = run([str(src), "-t", "riscv-asm"], capsys)
    assert code == 2 and "invalid choice: 'riscv-asm' (choose from mlir)" in one_line_error(err)


def test_log_levels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, keep = tmp_path / "m.mlir", tmp_path / "keep.txt"
    src.write_text(MIX)
    keep.write_text("nothing_matches\n")
    args = [str(src), "--precision_mode", "allow_mix_precision", "--keep_dtype", str(keep)]
    code, _, err = run(args, capsys)
    assert code == 0
    assert err.splitlines() == [f"ascend-opt: warning: {keep}: keep_dtype entry 'nothing_matches' matches no op"]
    code, _, err = run([*args, "--log=info"], capsys)
    assert code == 0
    assert "ascend-opt: info: Reduce precision: mm float32 -> float16" in err, err
    assert f"ascend-opt: warning: {keep}" in err
    code, _, err = run([*args, "--log=null"], capsys)
    assert (code, err) == (0, "")
    code, _, err = run([*args, "--log=error"], capsys)
    assert (code, err) == (0, "")
    assert run([*args, "--log=loud"], capsys)[0] == 2


def test_warnings_of_one_kind_are_summarised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ascend_mp.tools.cli import SHOWN_PER_KIND

    src, mixlist = tmp_path / "m.mlir", tmp_path / "ops.json"
    src.write_text(MIX)
    mixlist.write_text(json.dumps({"white-list": {"to-add": [f"Nope{i}" for i in range(1000)]}}))
    code, _, err = run([str(src), "--precision_mode", "allow_mix_precision", "--modify_mixlist", str(mixlist)], capsys)
    lines = err.splitlines()
    assert code == 0 and len(lines) == SHOWN_PER_KIND + 1, err
    assert lines[-1] == f"ascend-opt: warning: {1000 - SHOWN_PER_KIND} more warnings like the ones above not shown"


def test_pass_option_integer_for_float_is_accepted() -> None:
    from xdsl.passes import PassPipeline

    from ascend_mp.passes import PASSES
    from ascend_mp.tools.cli import coerce_pass_options

    spec = coerce_pass_options(PASSES, "ascend-loss-scale{scale=1024}")
    (loss_scale,) = PassPipeline.parse_spec(PASSES, spec).passes
    assert loss_scale.scale == 1024.0 and isinstance(loss_scale.scale, float)  # pyright: ignore[reportAttributeAccessIssue]
    assert coerce_pass_options(PASSES, "ascend-precision{mode=force_fp16}") == "ascend-precision{mode=force_fp16}"


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("ascend-loss-scale{scale=big}", "pass 'ascend-loss-scale' option 'scale': expected float | None, got big"),
        ("ascend-loss-scale{scale=1,2}", "pass 'ascend-loss-scale' option 'scale': expected float | None, got 1,2"),
        ("ascend-precision{fast}", "pass 'ascend-precision' has no option 'fast' (options: mode, mode-v2,"),
        ("ascend-precision{mode=fast}{", "invalid pass pipeline"),
    ],
)
def test_pass_option_errors_name_pass_and_option(
    pipeline: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(GOOD)
    code, _, err = run([str(src), "-p", pipeline], capsys)
    assert code == 2
    assert message in one_line_error(err)


def test_real_soc_version_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(MIX)
    outputs = {}
    for soc in ("ascend910", "Ascend910A", "Ascend910ProB", "ascend910b", "Ascend910B1", "Ascend910B4"):
        code, out, err = run([str(src), "--precision_mode", "allow_mix_precision_bf16", "--soc_version", soc], capsys)
        outputs[soc] = (code, out)
    assert outputs["Ascend910A"] == outputs["Ascend910ProB"] == outputs["ascend910"]
    assert outputs["Ascend910B1"] == outputs["Ascend910B4"] == outputs["ascend910b"]
    assert outputs["ascend910"] != outputs["ascend910b"]  # no bf16 kernels on the first generation
    code, _, err = run([str(src), "--soc_version", "Ascend910B9"], capsys)
    assert code == 2
    message = one_line_error(err)
    assert "unknown soc_version 'Ascend910B9'" in message and "accepted: " in message and "Ascend910B1" in message


def test_ctrl_c_in_a_real_process_exits_130(tmp_path: Path) -> None:
    """SIGINT while ascend-opt waits for its input: exit status 130, nothing printed, nothing written."""
    import os
    import signal
    import subprocess
    import sys
    import time

    tool = Path(sys.executable).parent / "ascend-opt"
    proc = subprocess.Popen(
        [str(tool), "-o", str(tmp_path / "out.mlir")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        wchan = Path(f"/proc/{proc.pid}/wchan")
        while time.monotonic() < deadline and "pipe" not in (wchan.read_text() if wchan.exists() else "pipe"):
            time.sleep(0.05)  # until it blocks reading standard input (past its imports)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        assert proc.stdin is not None
    assert proc.returncode == 130, err
    assert (out, err) == (b"", b"")
    assert os.listdir(tmp_path) == []


def test_readme_first_commands_work_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's first commands and Python snippet, run from a checkout root, with the shipped examples."""
    import re
    import shlex

    from ascend_mp.tools import ascend_run

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    section = readme.split("## First commands", 1)[1].split("\n## ", 1)[0]
    shell, python = re.findall(r"```(?:sh|python)\n(.*?)```", section, re.S)
    (tmp_path / "examples").symlink_to(root / "examples")
    monkeypatch.chdir(tmp_path)
    lines = [line.split("  #")[0] for line in shell.replace("\\\n", " ").splitlines() if line.strip()]
    assert lines[0].strip().split(" && ") == [". .venv/bin/activate", "mkdir -p out"]
    (tmp_path / "out").mkdir()
    tools = {"ascend-opt": main, "ascend-run": ascend_run.main}
    for line in lines[1:]:
        argv = shlex.split(line)
        try:
            tools[argv[0]](argv[1:])
        except SystemExit as e:
            pytest.fail(f"{line}: exit {e.code}: {capsys.readouterr().err}")
        capsys.readouterr()
    out = tmp_path / "out"
    assert (out / "report.json").exists() and "ascend.Cast" in (out / "model.fp16.mlir").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["examples", "out"]  # nothing left in the checkout's root
    exec(compile(python, "README.md", "exec"), {})
    assert "ascend.Cast" in capsys.readouterr().out
