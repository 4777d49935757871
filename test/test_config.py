"""Tests for ascend_mp.config: the modify_mixlist, keep_dtype and customize_dtypes parsers."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from ascend_mp.config import (
    CANN_DTYPES,
    KernelDtypes,
    load_customize_dtypes,
    load_keep_dtype,
    load_mixlist,
    parse_dtype,
)
from ascend_mp.errors import AscendError

KNOWN = {"Sqrt", "Log", "MatMulV2", "Conv2D", "Relu", "Add"}


def write(tmp_path: Path, text: str, name: str = "cfg") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def mixlist(tmp_path: Path, data: object, **kwargs):
    return load_mixlist(write(tmp_path, json.dumps(data), "ops.json"), **kwargs)


def error_of(load, path: str) -> str:
    """The one-line message of the AscendError that load(path) raises."""
    with pytest.raises(AscendError) as info:
        load(path)
    message = str(info.value)
    assert "\n" not in message
    return message


# ------------------------------------------------------------------------------------------------ dtypes


@pytest.mark.parametrize(
    "name, mlir",
    [
        ("float16", "f16"),
        ("float", "f32"),
        ("float32", "f32"),
        ("bfloat16", "bf16"),
        ("double", "f64"),
        ("int8", "i8"),
        ("int16", "i16"),
        ("int32", "i32"),
        ("int64", "i64"),
        ("uint8", "ui8"),
        ("bool", "i1"),
        ("f16", "f16"),
        ("f32", "f32"),
        ("bf16", "bf16"),
    ],
)
def test_parse_dtype_normalises_to_mlir_names(name: str, mlir: str) -> None:
    assert parse_dtype(name) == mlir
    assert CANN_DTYPES.get(name, name) == mlir


@pytest.mark.parametrize("name", ["float17", "fp16", "Float16", "", "f8"])
def test_parse_dtype_unknown_is_none(name: str) -> None:
    assert parse_dtype(name) is None


# ------------------------------------------------------------------------------------------------ modify_mixlist


def test_mixlist_example_a_white_add_moves_gray_op_to_white(tmp_path: Path) -> None:
    ml = mixlist(tmp_path, {"white-list": {"to-add": ["Sqrt"]}})
    assert ml.list_kind("Sqrt", "gray") == ("white", "modify_mixlist: to-add white-list")
    assert ml.warnings == []


def test_mixlist_example_b_black_remove_moves_to_gray(tmp_path: Path) -> None:
    ml = mixlist(tmp_path, {"black-list": {"to-remove": ["Log"]}})
    assert ml.list_kind("Log", "black") == ("gray", "modify_mixlist: to-remove black-list")


def test_mixlist_example_b_white_remove_gives_gray_not_black(tmp_path: Path) -> None:
    ml = mixlist(tmp_path, {"white-list": {"to-remove": ["MatMulV2"]}})
    assert ml.list_kind("MatMulV2", "white") == ("gray", "modify_mixlist: to-remove white-list")


def test_mixlist_example_c_combined(tmp_path: Path) -> None:
    ml = mixlist(
        tmp_path,
        {"black-list": {"to-add": ["Conv2D"], "to-remove": ["Log"]}, "white-list": {"to-add": ["Sqrt"]}},
    )
    assert ml.adds == {"Conv2D": "black", "Sqrt": "white"}
    assert ml.removes == {"Log": frozenset({"black"})}
    assert ml.list_kind("Conv2D", "white") == ("black", "modify_mixlist: to-add black-list")
    assert ml.list_kind("Log", "black") == ("gray", "modify_mixlist: to-remove black-list")
    assert ml.list_kind("Sqrt", "gray") == ("white", "modify_mixlist: to-add white-list")
    assert ml.list_kind("Relu", "gray") == ("gray", "library")
    assert ml.warnings == []


def test_mixlist_remove_of_op_not_on_list_warns_once_and_changes_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ml = mixlist(tmp_path, {"white-list": {"to-remove": ["Relu"]}})
    with caplog.at_level(logging.WARNING, logger="ascend_mp"):
        assert ml.list_kind("Relu", "gray") == ("gray", "library")
        assert ml.list_kind("Relu", "gray") == ("gray", "library")
    expected = f"{ml.path}: 'Relu' is not on the white-list; to-remove has no effect"
    assert ml.warnings == [expected]
    assert [r.getMessage() for r in caplog.records] == [expected]


def test_mixlist_black_add_beats_white_add_with_warning(tmp_path: Path) -> None:
    ml = mixlist(tmp_path, {"white-list": {"to-add": ["Add"]}, "black-list": {"to-add": ["Add"]}})
    assert ml.list_kind("Add", "white") == ("black", "modify_mixlist: to-add black-list")
    assert len(ml.warnings) == 1
    assert "'black-list.to-add[0]'" in ml.warnings[0] and "'white-list.to-add[0]'" in ml.warnings[0]
    assert ml.warnings[0].endswith("black-list wins")


def test_mixlist_gray_add_counts_and_beats_white_add(tmp_path: Path) -> None:
    ml = mixlist(tmp_path, {"gray-list": {"to-add": ["MatMulV2", "Add"]}, "white-list": {"to-add": ["Add"]}})
    assert ml.list_kind("MatMulV2", "white") == ("gray", "modify_mixlist: to-add gray-list")
    assert ml.adds["Add"] == "gray"
    assert len(ml.warnings) == 1 and "gray-list wins" in ml.warnings[0]


def test_mixlist_add_wins_over_remove_from_another_list(tmp_path: Path) -> None:
    ml = mixlist(tmp_path, {"black-list": {"to-add": ["Relu"]}, "white-list": {"to-remove": ["Relu"]}})
    assert ml.list_kind("Relu", "white") == ("black", "modify_mixlist: to-add black-list")


def test_mixlist_empty_object_changes_nothing(tmp_path: Path) -> None:
    ml = mixlist(tmp_path, {"white-list": {}})
    assert (ml.adds, ml.removes) == ({}, {})
    assert ml.list_kind("MatMulV2", "white") == ("white", "library")


def test_mixlist_unknown_op_type_is_a_warning_with_key_path(tmp_path: Path) -> None:
    ml = mixlist(tmp_path, {"white-list": {"to-add": ["Sqrt", "Sqrtt"]}}, known_op_types=KNOWN)
    assert ml.adds == {"Sqrt": "white", "Sqrtt": "white"}
    assert ml.warnings == [f"{ml.path}: key 'white-list.to-add[1]': unknown op type 'Sqrtt'; did you mean 'Sqrt'?"]


def test_mixlist_rejects_unknown_library_kind(tmp_path: Path) -> None:
    ml = mixlist(tmp_path, {})
    with pytest.raises(ValueError):
        ml.list_kind("Relu", "grey")


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"white-list": {"to-add": ["Sqrt",]}}', ":1:35: invalid JSON: "),
        ("[]", ": expected a JSON object at top level, got an array"),
        ('{"whitelist": {}}', ": key 'whitelist': unknown key; expected 'black-list', 'white-list' or 'gray-list'"),
        (
            '{"black-list": ["Log"]}',
            ": key 'black-list': expected an object with 'to-add' and/or 'to-remove', got an array",
        ),
        ('{"black-list": {"to-ad": []}}', ": key 'black-list.to-ad': unknown key; expected 'to-add' or 'to-remove'"),
        ('{"gray-list": {"to-add": "Relu"}}', ": key 'gray-list.to-add': expected an array of op types, got \"Relu\""),
        (
            '{"white-list": {"to-add": ["Sqrt", "Exp", 3]}}',
            ": key 'white-list.to-add[2]': expected a string op type, got 3",
        ),
        ('{"white-list": {"to-add": [""]}}', ": key 'white-list.to-add[0]': expected an op type"),
        ('{"white-list": {"to-add": [" Relu"]}}', ": key 'white-list.to-add[0]': expected an op type"),
        (
            '{"white-list": {"to-add": ["Relu"], "to-remove": ["Add", "Relu"]}}',
            ": 'Relu' is in both 'white-list.to-add[0]' and 'white-list.to-remove[1]'",
        ),
        ('{"white-list": {}, "white-list": {}}', ": invalid JSON: duplicate key 'white-list'"),
    ],
)
def test_mixlist_errors_name_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text, "ops.json")
    message = error_of(load_mixlist, path)
    assert message.startswith(path + expected)


def test_mixlist_bad_json_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "white-list": {\n    "to-add": [Sqrt]\n  }\n}\n', "ops.json")
    assert error_of(load_mixlist, path).startswith(f"{path}:3:16: invalid JSON: Expecting value")


@pytest.mark.parametrize("load", [load_mixlist, load_keep_dtype, load_customize_dtypes])
def test_missing_file_is_an_error(tmp_path: Path, load) -> None:
    path = str(tmp_path / "nope.cfg")
    assert error_of(load, path) == f"{path}: cannot read file: No such file or directory"


@pytest.mark.parametrize("load", [load_mixlist, load_keep_dtype, load_customize_dtypes])
def test_non_utf8_file_is_an_error(tmp_path: Path, load) -> None:
    path = tmp_path / "bin.cfg"
    path.write_bytes(b"\xff\xfe\x00conv1")
    assert error_of(load, str(path)).startswith(f"{path}: cannot read file: 'utf-8' codec can't decode")


# ------------------------------------------------------------------------------------------------ keep_dtype


def test_keep_dtype_reads_names_and_op_types(tmp_path: Path) -> None:
    path = write(tmp_path, "# keep these\n\nconv1\n  resnet/fc/MatMul  \nOpType::MatMulV2\n   # indented comment\n")
    kd = load_keep_dtype(path)
    assert kd.names == {"conv1", "resnet/fc/MatMul"}
    assert kd.op_types == {"MatMulV2"}
    assert (kd.path, kd.warnings) == (path, [])


def test_keep_dtype_matches_by_name_or_type(tmp_path: Path) -> None:
    kd = load_keep_dtype(write(tmp_path, "conv1\nOpType::MatMulV2\n"))
    assert kd.matches("conv1", "Conv2D")
    assert kd.matches("fc", "MatMulV2")
    assert kd.matches(None, "MatMulV2")
    assert not kd.matches(None, "Conv2D")
    assert not kd.matches("conv2", "Conv2D")
    assert not kd.matches("MatMulV2", "Add")  # an op name is not an op type


def test_keep_dtype_unknown_op_type_warns_with_line(tmp_path: Path) -> None:
    path = write(tmp_path, "conv1\nOpType::MatMulV3\n")
    kd = load_keep_dtype(path, known_op_types=KNOWN)
    assert kd.op_types == {"MatMulV3"}
    assert kd.warnings == [f"{path}:2: unknown op type 'MatMulV3'; did you mean 'MatMulV2'?"]


def test_keep_dtype_unknown_op_name_is_not_checked_here(tmp_path: Path) -> None:
    kd = load_keep_dtype(write(tmp_path, "no_such_op\n"), known_op_types=KNOWN)
    assert kd.warnings == []


@pytest.mark.parametrize("entry", ["OpType::", "conv 1", "OpType::Mat Mul", "foo::bar", "OpType::a::b", "::conv1"])
def test_keep_dtype_bad_entry_is_an_error_with_line(tmp_path: Path, entry: str) -> None:
    path = write(tmp_path, f"# header\nconv1\n{entry}\n")
    assert error_of(load_keep_dtype, path) == (f"{path}:3: expected an op name or OpType::<type>, got '{entry}'")


# ------------------------------------------------------------------------------------------------ customize_dtypes


def test_customize_dtypes_cann_documented_form(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "# CANN form\n"
        "conv1::InputDtype:float16,float16,OutputDtype:float\n"
        "\n"
        "OpType::MatMulV2:InputDtype:float16,float16,OutputDtype:float16\n",
    )
    cd = load_customize_dtypes(path)
    assert cd.by_name == {"conv1": KernelDtypes(("f16", "f16"), ("f32",), 2)}
    assert cd.by_type == {"MatMulV2": KernelDtypes(("f16", "f16"), ("f16",), 4)}
    assert (cd.path, cd.warnings) == (path, [])


def test_customize_dtypes_semicolon_form_and_mlir_names(tmp_path: Path) -> None:
    cd = load_customize_dtypes(write(tmp_path, "resnet/fc/MatMul::InputDtype:f16, bf16; OutputDtype:f32\n"))
    assert cd.by_name["resnet/fc/MatMul"] == KernelDtypes(("f16", "bf16"), ("f32",), 1)


def test_customize_dtypes_output_before_input_is_accepted(tmp_path: Path) -> None:
    cd = load_customize_dtypes(write(tmp_path, "OpType::Cast:OutputDtype:int32;InputDtype:bool\n"))
    assert cd.by_type["Cast"] == KernelDtypes(("i1",), ("i32",), 1)


def test_customize_dtypes_lookup_name_beats_type(tmp_path: Path) -> None:
    cd = load_customize_dtypes(
        write(
            tmp_path,
            "OpType::MatMulV2:InputDtype:float16,float16,OutputDtype:float16\n"
            "fc1::InputDtype:float,float,OutputDtype:float\n",
        )
    )
    assert cd.lookup("fc1", "MatMulV2") == KernelDtypes(("f32", "f32"), ("f32",), 2)
    assert cd.lookup("fc2", "MatMulV2") == KernelDtypes(("f16", "f16"), ("f16",), 1)
    assert cd.lookup(None, "MatMulV2") == KernelDtypes(("f16", "f16"), ("f16",), 1)
    assert cd.lookup("fc1", "Add") == KernelDtypes(("f32", "f32"), ("f32",), 2)
    assert cd.lookup("conv1", "Conv2D") is None


def test_customize_dtypes_unknown_op_type_warns_with_line(tmp_path: Path) -> None:
    path = write(tmp_path, "\nOpType::Conv3D:InputDtype:float16,OutputDtype:float16\n")
    cd = load_customize_dtypes(path, known_op_types=KNOWN)
    assert "Conv3D" in cd.by_type
    assert cd.warnings == [f"{path}:2: unknown op type 'Conv3D'; did you mean 'Conv2D'?"]


@pytest.mark.parametrize(
    "line, expected",
    [
        (
            "conv1:InputDtype:float16,OutputDtype:float16",
            ":2: expected '<op name>::InputDtype:<dtypes>,OutputDtype:<dtypes>' or 'OpType::<type>:InputDtype:",
        ),
        (
            "conv 1::InputDtype:float16,OutputDtype:float16",
            ":2: expected an op name or OpType::<type> before the dtypes, got 'conv 1'",
        ),
        (
            "OpType:::InputDtype:float16,OutputDtype:float16",
            ":2: expected an op name or OpType::<type> before the dtypes, got 'OpType::'",
        ),
        ("OpType::MatMulV2", ":2: expected '<op name>::InputDtype"),
        (
            "conv1::Inputs:float16,OutputDtype:float16",
            ":2:8: expected InputDtype:<dtypes> or OutputDtype:<dtypes>, got 'Inputs:float16'",
        ),
        (
            "conv1::float16,OutputDtype:float16",
            ":2:8: expected InputDtype:<dtypes> or OutputDtype:<dtypes>, got 'float16'",
        ),
        ("conv1::InputDtype:float16;InputDtype:float16,OutputDtype:float16", ":2:27: InputDtype given twice"),
        ("conv1::OutputDtype:float16", ":2: missing InputDtype:<dtypes>"),
        ("OpType::Add:InputDtype:float16,float16", ":2: missing OutputDtype:<dtypes>"),
        (
            "conv1::InputDtype:float16,flaot16,OutputDtype:float16",
            ":2:27: expected a dtype (one of float16, float, float32, bfloat16, double, int8, int16, int32, int64, "
            "uint8, bool), got 'flaot16'",
        ),
        ("conv1::InputDtype:fp16,OutputDtype:float16", ":2:19: expected a dtype (one of "),
        ("conv1::InputDtype:float16,,OutputDtype:float16", ":2:27: expected a dtype (one of "),
        ("conv1::InputDtype:,OutputDtype:float16", ":2:19: expected a dtype (one of "),
    ],
)
def test_customize_dtypes_errors_name_file_line_and_column(tmp_path: Path, line: str, expected: str) -> None:
    path = write(tmp_path, f"# header\n{line}\n")
    assert error_of(load_customize_dtypes, path).startswith(path + expected)


@pytest.mark.parametrize(
    "first, second, label",
    [
        ("conv1::InputDtype:float16,OutputDtype:float16", "conv1::InputDtype:float,OutputDtype:float", "conv1"),
        (
            "OpType::Add:InputDtype:float16,float16,OutputDtype:float16",
            "OpType::Add:InputDtype:float,float,OutputDtype:float",
            "OpType::Add",
        ),
    ],
)
def test_customize_dtypes_duplicate_entry_names_both_lines(tmp_path: Path, first: str, second: str, label: str) -> None:
    path = write(tmp_path, f"{first}\n# other\n{second}\n")
    assert error_of(load_customize_dtypes, path) == f"{path}:3: '{label}' is already given on line 1"


def test_customize_dtypes_same_key_as_name_and_type_is_not_a_duplicate(tmp_path: Path) -> None:
    cd = load_customize_dtypes(
        write(tmp_path, "Add::InputDtype:float16,OutputDtype:float16\nOpType::Add:InputDtype:float,OutputDtype:float\n")
    )
    assert cd.by_name["Add"].inputs == ("f16",) and cd.by_type["Add"].inputs == ("f32",)


def test_customize_dtypes_error_column_counts_indentation(tmp_path: Path) -> None:
    path = write(tmp_path, "    conv1::InputDtype:float16,OutputDtype:half\n")
    assert error_of(load_customize_dtypes, path).startswith(f"{path}:1:43: expected a dtype (one of ")


# ---------------------------------------------------------------------------------------------------- robustness


def test_line_numbers_count_newlines_only(tmp_path: Path) -> None:
    """A form feed, vertical tab or U+2028 inside a line does not shift the line numbers."""
    path = write(tmp_path, "relu1 \f\nrelu2\u2028\nrelu3\v\nfc 2\n")
    with pytest.raises(AscendError, match=r":4: expected an op name or OpType::<type>, got 'fc 2'$"):
        load_keep_dtype(path)
    path = write(
        tmp_path, "a::InputDtype:float16,OutputDtype:float16\f\n\u2028b::InputDtype:float16,OutputDtype:flaot16\n"
    )
    with pytest.raises(AscendError, match=r":2:\d+: expected a dtype .* got 'flaot16'$"):
        load_customize_dtypes(path)


def test_invisible_characters_are_refused_and_shown_escaped(tmp_path: Path) -> None:
    path = write(tmp_path, "relu\x001\n")
    with pytest.raises(AscendError) as info:
        load_keep_dtype(path)
    assert str(info.value).endswith("got 'relu\\x001'") and str(info.value).isprintable()
    path = write(tmp_path, "fc\u200b1::InputDtype:float16,OutputDtype:float16\n")
    with pytest.raises(AscendError) as info:
        load_customize_dtypes(path)
    assert "fc\\u200b1" in str(info.value)


def test_byte_order_mark_is_accepted_in_every_file(tmp_path: Path) -> None:
    assert load_keep_dtype(write(tmp_path, "\ufeffrelu1\n")).names == {"relu1"}
    assert (
        "relu1"
        in load_customize_dtypes(write(tmp_path, "\ufeffrelu1::InputDtype:float16,OutputDtype:float16\n")).by_name
    )
    assert load_mixlist(write(tmp_path, '\ufeff{"black-list": {"to-add": ["Relu"]}}')).adds == {"Relu": "black"}


def test_deeply_nested_json_is_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, '{"white-list": {"to-add": ' + "[" * 5000 + "]" * 5000 + "}}")
    with pytest.raises(AscendError, match=r": invalid JSON: nested too deeply$"):
        load_mixlist(path)


def test_unknown_op_type_hints_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the first HINTS_PER_FILE unknown op types get a (costly) 'did you mean' search: linear time."""
    import difflib

    from ascend_mp import config

    calls = []
    real = difflib.get_close_matches

    def counting(*args: object, **kwargs: object) -> list[str]:
        calls.append(args[0])
        return real(*args, **kwargs)  # pyright: ignore[reportArgumentType]

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    path = write(tmp_path, json.dumps({"white-list": {"to-add": ["Reluu"] + [f"Op{i}" for i in range(1000)]}}))
    mixlist = load_mixlist(path, KNOWN)
    assert len(mixlist.warnings) == 1001
    assert len(calls) == config.HINTS_PER_FILE
    assert "did you mean 'Relu'?" in mixlist.warnings[0] and "did you mean" not in mixlist.warnings[-1]
