"""The operator library: the CANN table loader, the built-in tables and their provenance."""

import json
from pathlib import Path

import pytest

from ascend_mp.dialects.ascend import OPS_BY_TYPE, Kernel, ListKind
from ascend_mp.errors import AscendError
from ascend_mp.opinfo import SOCS, builtin_library, derive, load_library, read_table

DATA = Path(derive.__file__).parent / "data"


def test_real_table_loads_all_613_ops(real_table: Path) -> None:
    table = read_table(real_table)
    assert len(table) == 613
    assert table["MatMulV2"].list_kind is ListKind.WHITE
    assert table["Log"].list_kind is ListKind.BLACK
    assert table["Relu"].list_kind is ListKind.GRAY
    assert table["Conv2D"].dynamic_format and not table["Conv2D"].has_dtypes


def test_builtin_tables_are_derived_from_the_real_table(real_table: Path) -> None:
    """The shipped JSON equals what derive.py makes of CANN's table: the facts are CANN's."""
    derived = derive.derive_all(json.loads(real_table.read_text()))
    for name, table in derived.items():
        assert (DATA / name).read_text() == derive.dump(table), (
            f"{name} is stale: rerun python -m ascend_mp.opinfo.derive"
        )


def test_builtin_facts_match_cann(real_table: Path) -> None:
    real = json.loads(real_table.read_text())
    lib = builtin_library("ascend910")
    # precision_reduce -> list kind for every dialect op CANN lists
    for op, info in lib.ops.items():
        flag = real.get(op, {}).get("precision_reduce", {}).get("flag")
        want = {"true": ListKind.WHITE, "false": ListKind.BLACK, None: ListKind.GRAY}[flag]
        assert info.list_kind is want, op
    # columns read straight from the real table
    assert lib.ops["MatMulV2"].kernels[:3] == (
        Kernel(("f16", "f16", "f16"), ("f16",)),
        Kernel(("f16", "f16", "f32"), ("f32",)),
        Kernel(("f32", "f32", "f32"), ("f32",)),
    )
    assert lib.ops["Conv2DBackpropFilter"].kernels == (Kernel(("f16", "f16"), ("f32",)),)
    assert [k.inputs for k in lib.ops["MaxPool"].kernels if k.engine == "aicore"] == [("f16",)]


def test_every_dialect_op_has_an_entry_and_a_list_kind() -> None:
    for soc in SOCS:
        lib = builtin_library(soc)
        assert set(lib.ops) == set(OPS_BY_TYPE)
        for op, info in lib.ops.items():
            assert info.kernels, f"{soc}: {op} has no kernel"
            assert isinstance(info.list_kind, ListKind)
            arity = len(OPS_BY_TYPE[op].get_irdl_definition().operands)
            assert all(len(k.inputs) == arity for k in info.kernels), op


def test_dynamic_format_ops_state_their_dtypes() -> None:
    lib = builtin_library("ascend910")
    assert {k.inputs for k in lib.ops["Conv2D"].kernels} == {("f16", "f16", "f16")}
    assert {k.inputs[0] for k in lib.ops["Add"].kernels} >= {"f16", "f32"}
    assert Kernel(("f16", "f16"), ("f32",)) in lib.ops["BatchMatMul"].kernels


def test_ascend910b_has_bf16_twins() -> None:
    lib = builtin_library("ascend910b")
    assert Kernel(("bf16", "bf16", "bf16"), ("bf16",)) in lib.ops["MatMulV2"].kernels
    assert Kernel(("f32",), ("bf16",)) in lib.ops["Cast"].kernels
    assert not any("bf16" in k.inputs for k in builtin_library("ascend910").ops["MatMulV2"].kernels)


def test_user_table_overrides_builtin(real_table: Path, tmp_path: Path) -> None:
    lib = load_library("ascend910", str(real_table))
    # dynamicFormat entries keep the built-in kernels but take CANN's list kind
    assert lib.ops["Conv2D"].kernels == builtin_library().ops["Conv2D"].kernels
    table = tmp_path / "t.json"
    table.write_text(
        json.dumps(
            {
                "Relu": {
                    "input0": {"name": "x", "dtype": "float"},
                    "output0": {"name": "y", "dtype": "float"},
                    "precision_reduce": {"flag": "false"},
                },
                "SomeOtherOp": {"input0": {"name": "x", "dtype": "float16"}},
            }
        )
    )
    lib = load_library("ascend910", str(table))
    assert lib.ops["Relu"].kernels == (Kernel(("f32",), ("f32",)),)
    assert lib.ops["Relu"].list_kind is ListKind.BLACK
    assert lib.ops["MatMulV2"] == builtin_library().ops["MatMulV2"]


def test_ai_cpu_kernels_survive_a_user_table(tmp_path: Path) -> None:
    table = tmp_path / "t.json"
    table.write_text(
        json.dumps(
            {"MaxPool": {"input0": {"name": "x", "dtype": "float16"}, "output0": {"name": "y", "dtype": "float16"}}}
        )
    )
    kernels = load_library("ascend910", str(table)).ops["MaxPool"].kernels
    assert Kernel(("f32",), ("f32",), "aicpu") in kernels


MALFORMED = [
    ("[1, 2]", "expected a JSON object"),
    ('{"Relu": 3}', "op 'Relu', key 'Relu': expected an object"),
    ('{"Relu": {"input0": "x"}}', "op 'Relu', key 'input0': expected an object"),
    ('{"Relu": {"input0": {"dtype": "float"}}}', "op 'Relu', key 'input0.name': expected a non-empty string"),
    (
        '{"Relu": {"input0": {"name": "x", "dtype": 5}}}',
        "op 'Relu', key 'input0.dtype': expected a comma-separated string",
    ),
    (
        '{"Relu": {"input0": {"name": "x", "dtype": "float,float16"}, "output0": {"name": "y", "dtype": "float"}}}',
        "op 'Relu', key 'output0.dtype': has 1 dtype columns, but 'input0.dtype' has 2",
    ),
    (
        '{"Relu": {"precision_reduce": {"flag": "yes"}}}',
        "op 'Relu', key 'precision_reduce.flag': expected \"true\" or \"false\"",
    ),
    (
        '{"Relu": {"input0": {"name": "features", "dtype": "float"}, "output0": {"name": "y", "dtype": "float"}}}',
        "op 'Relu': no input named 'x'",
    ),
    ('{"Relu": ', "invalid JSON"),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_malformed_tables_give_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(AscendError) as info:
        load_library("ascend910", str(path))
    error = str(info.value)
    assert "\n" not in error
    assert error.startswith(str(path))
    assert message in error


def test_missing_table_and_unknown_soc() -> None:
    with pytest.raises(AscendError, match=r"nope.json: cannot read op-info table"):
        load_library("ascend910", "nope.json")
    with pytest.raises(AscendError, match="unknown soc_version 'ascend310'.*accepted: .*Ascend910B1.*ascend910b"):
        load_library("ascend310")


# --------------------------------------------------------------------------------------
# Robustness and CANN fidelity of the loader
# --------------------------------------------------------------------------------------

RELU16 = {"Relu": {"input0": {"name": "x", "dtype": "float16"}, "output0": {"name": "y", "dtype": "float16"}}}
RELU32 = {"Relu": {"input0": {"name": "x", "dtype": "float"}, "output0": {"name": "y", "dtype": "float"}}}


def test_op_info_folder_is_one_library(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(RELU16))
    (tmp_path / "b.json").write_text(
        json.dumps({"Exp": {"input0": {"name": "x", "dtype": "float"}, "output0": {"name": "y", "dtype": "float"}}})
    )
    (tmp_path / "c.json").write_text(json.dumps(RELU16))  # the same entry twice is no conflict
    (tmp_path / "notes.txt").write_text("not a table")
    lib = load_library("ascend910", str(tmp_path))
    assert [k for k in lib.ops["Relu"].kernels if k.engine == "aicore"] == [Kernel(("f16",), ("f16",), "aicore")]
    assert [k for k in lib.ops["Exp"].kernels if k.engine == "aicore"] == [Kernel(("f32",), ("f32",), "aicore")]


def test_op_info_folder_conflict_names_both_files(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(RELU16))
    (tmp_path / "b.json").write_text(json.dumps(RELU32))
    with pytest.raises(
        AscendError, match=rf"^{tmp_path}/b.json: op 'Relu' conflicts with its entry in {tmp_path}/a.json$"
    ):
        read_table(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(AscendError, match="no .json op-info table in this folder"):
        read_table(empty)


def test_duplicate_port_names_and_misspelled_dtypes_are_errors(tmp_path: Path) -> None:
    dup = tmp_path / "dup.json"
    dup.write_text(
        json.dumps(
            {
                "Add": {
                    "input0": {"name": "x1", "dtype": "float"},
                    "input1": {"name": "x1", "dtype": "float"},
                    "output0": {"name": "y", "dtype": "float"},
                }
            }
        )
    )
    with pytest.raises(AscendError, match=r"op 'Add', key 'input1.name': input name 'x1' is also the name of 'input0'"):
        load_library("ascend910", str(dup))
    typo = tmp_path / "typo.json"
    typo.write_text(
        json.dumps(
            {
                "Relu": {
                    "input0": {"name": "x", "dtype": "float16,flaot16"},
                    "output0": {"name": "y", "dtype": "float16,float16"},
                }
            }
        )
    )
    with pytest.raises(
        AscendError, match=r"op 'Relu', key 'input0.dtype': unknown dtype 'flaot16' \(did you mean 'float16'\?\)"
    ):
        load_library("ascend910", str(typo))
    real = tmp_path / "real.json"  # a CANN dtype the project does not model is skipped, not an error
    real.write_text(
        json.dumps(
            {
                "Relu": {
                    "input0": {"name": "x", "dtype": "float16,int4"},
                    "output0": {"name": "y", "dtype": "float16,int4"},
                }
            }
        )
    )
    assert [k for k in load_library("ascend910", str(real)).ops["Relu"].kernels if k.engine == "aicore"] == [
        Kernel(("f16",), ("f16",), "aicore")
    ]
    other = tmp_path / "other.json"  # problems in ops the dialect does not model do not matter
    other.write_text(
        json.dumps(
            {"CTCLossV2Grad": {"input0": {"name": "a", "dtype": "log"}, "input1": {"name": "a", "dtype": "float"}}}
        )
    )
    load_library("ascend910", str(other))


def test_op_info_bom_and_deep_json(tmp_path: Path) -> None:
    bom = tmp_path / "bom.json"
    bom.write_text("\ufeff" + json.dumps(RELU16), encoding="utf-8")
    assert "Relu" in read_table(bom)
    deep = tmp_path / "deep.json"
    deep.write_text('{"Relu": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}")
    with pytest.raises(AscendError, match=r"deep.json: invalid JSON: nested too deeply$"):
        read_table(deep)


def test_cann_soc_version_names() -> None:
    from ascend_mp.opinfo import SOC_VERSIONS, canonical_soc

    assert canonical_soc("Ascend910A") == canonical_soc("Ascend910ProB") == "ascend910"
    assert canonical_soc("Ascend910B1") == canonical_soc("Ascend910B4") == "ascend910b"
    assert set(SOC_VERSIONS.values()) == set(SOCS)
    assert builtin_library("Ascend910B2") is builtin_library("ascend910b")
    with pytest.raises(AscendError, match=r"unknown soc_version 'Ascend910C'.*accepted: Ascend910, "):
        canonical_soc("Ascend910C")
