"""`ascend-opt` as a user meets it: flags, errors, output files."""

from pathlib import Path

import pytest

from ascend_mp.tools.ascend_opt import main

GOOD = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""

BAD_SHAPE = GOOD.replace("-> tensor<4xf32> {", "-> tensor<5xf32> {").replace("-> tensor<4xf32>\n", "-> tensor<5xf32>\n").replace("return %0 : tensor<4xf32>", "return %0 : tensor<5xf32>")


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
        if isinstance(e.code, str):
            print(e.code, file=__import__("sys").stderr)
    out, err = capsys.readouterr()
    return code, out, err


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
    for flag in ("--precision_mode", "--precision_mode_v2", "--modify_mixlist", "--keep_dtype", "--customize_dtypes",
                 "--soc_version", "--op_info", "--precision-report", "ascend-attach-caps"):
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
    assert one_line_error(err) == f"ascend-opt: error: {src}:2:3: 'ascend.Relu' op expects the result shape to equal the operand shape"


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
