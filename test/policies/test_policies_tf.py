"""The TensorFlow mixed-precision policy (ascend_mp/policies/tf.py): its lists as data, list edits from the
environment and the pass option, levels, preserved nodes, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from policies_util import _dtypes

from ascend_mp.errors import AscendError
from ascend_mp.ir import parse_module
from ascend_mp.passes.precision import load_config, run_precision

TF_SIMPLE = """func.func @simple(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %deny1 = ascend.Exp %input {name = "deny1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %deny1 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow1 = ascend.MatMulV2 %clr2, %clr2 {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.Relu %allow1 {name = "clr3"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %clr3 : tensor<32x32xf32>
}
"""


def test_tf_lists_from_the_environment_and_the_pass_option(monkeypatch: pytest.MonkeyPatch) -> None:
    base = _dtypes(run_precision(parse_module(TF_SIMPLE), policy="tf"))
    assert base == {"deny1": "f32", "clr2": "f16", "allow1": "f16", "clr3": "f16"}
    assert (
        run_precision(parse_module(TF_SIMPLE), policy="tf").by_name("clr3").reason
        == "tf: clear, connected to allow ops"
    )
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_CLEARLIST_REMOVE", "Relu")
    assert _dtypes(run_precision(parse_module(TF_SIMPLE), policy="tf")) == {
        "deny1": "f32",
        "clr2": "f32",
        "allow1": "f16",
        "clr3": "f32",
    }
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_INFERLIST_ADD", "Relu,Exp")  # Exp is still deny
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_REMOVE", "Exp")
    assert _dtypes(run_precision(parse_module(TF_SIMPLE), policy="tf"))["clr2"] == "f32"  # infer, not between allow ops
    monkeypatch.delenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_CLEARLIST_REMOVE")
    monkeypatch.delenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_INFERLIST_ADD")
    monkeypatch.delenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_REMOVE")
    got = run_precision(parse_module(TF_SIMPLE), policy="tf", tf_lists="ALLOWLIST_REMOVE=MatMul")
    assert set(_dtypes(got).values()) == {"f32"}  # no allow op: nothing to do
    got = run_precision(
        parse_module(TF_SIMPLE), policy="tf", tf_lists="ALLOWLIST_ADD=Exp;DENYLIST_REMOVE=Exp;CLEARLIST_REMOVE=Relu"
    )
    assert _dtypes(got) == {"deny1": "f16", "clr2": "f32", "allow1": "f16", "clr3": "f32"}


TF_DENY_CHAIN = """func.func @g(%x: tensor<2x8x8xf32>, %w: tensor<8x8xf32>) -> tensor<16x8xf32> {
  %bmm = ascend.BatchMatMul %x, %x {name = "bmm"} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %r = ascend.Relu %bmm {name = "r"} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = ascend.Reshape %r {name = "s"} : (tensor<2x8x8xf32>) -> tensor<16x8xf32>
  %t = ascend.Tanh %s {name = "t"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %mm = ascend.MatMulV2 %t, %w {name = "mm"} : (tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
  func.return %mm : tensor<16x8xf32>
}
"""


def test_tf_list_edits_change_one_list_and_an_op_on_two_lists_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """TF's UpdateList edits one list only; ValidateLists rejects an op left on two ("Op lists have conflicting
    entries"). So DENYLIST_ADD=BatchMatMul alone is an error (BatchMatMul is on the allow list). Moved properly
    (TF's BatchMatMul is CANN's BatchMatMul; TF's BatchMatMulV2 is CANN's BatchMatMulV2), deny propagates from it
    (Relu, Reshape, Tanh lie upstream of an infer op)."""
    base = _dtypes(run_precision(parse_module(TF_DENY_CHAIN), policy="tf"))
    assert base == {"bmm": "f16", "r": "f16", "s": "f16", "t": "f16", "mm": "f16"}  # between the allow ops
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD", "BatchMatMul")
    with pytest.raises(
        AscendError, match=r"'BatchMatMul' is on both the allow and the deny list.*ALLOWLIST_REMOVE=BatchMatMul"
    ) as e:
        run_precision(parse_module(TF_DENY_CHAIN), policy="tf")
    assert "\n" not in str(e.value)
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_REMOVE", "BatchMatMul")
    got = run_precision(parse_module(TF_DENY_CHAIN), policy="tf")
    assert _dtypes(got) == {"bmm": "f32", "r": "f32", "s": "f32", "t": "f32", "mm": "f16"}
    assert got.by_name("bmm").reason == "tf: deny"
    assert got.by_name("t").reason == "tf: infer, downstream of a deny op"
    # The same as a pass option, and a CANN op type reached from two lists (TF's MatMul on allow, MatMulV2 on deny).
    monkeypatch.delenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD")
    monkeypatch.delenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_REMOVE")
    option = run_precision(
        parse_module(TF_DENY_CHAIN),
        policy="tf",
        tf_lists="DENYLIST_ADD=BatchMatMul;ALLOWLIST_REMOVE=BatchMatMul,BatchMatMulV2",
    )
    assert _dtypes(option) == _dtypes(got)
    with pytest.raises(
        AscendError, match=r"CANN op type MatMulV2 \('MatMul' and 'MatMulV2'\) is on both the allow and the deny"
    ):
        run_precision(parse_module(TF_DENY_CHAIN), policy="tf", tf_lists="DENYLIST_ADD=MatMulV2")


def test_tf_list_edits_apply_in_tf_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """DenyList() runs UpdateList("DENYLIST") and then UpdateList("BLACKLIST"), each adding then removing: a
    BLACKLIST_ADD survives a DENYLIST_REMOVE of the same op (alphabetical order would drop it). TF's other
    TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_* variables are not list edits."""
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_BLACKLIST_ADD", "Relu")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_REMOVE", "Relu")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_CLEARLIST_REMOVE", "Relu")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_IGNORE_PERFORMANCE", "1")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LOG_PATH", "/tmp")
    got = run_precision(parse_module(TF_SIMPLE), policy="tf")
    assert got.by_name("clr3").reason == "tf: deny"
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD", "Relu")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_BLACKLIST_REMOVE", "Relu")  # after DENYLIST_ADD: gone
    assert run_precision(parse_module(TF_SIMPLE), policy="tf").by_name("clr3").reason == "tf: not on any list"


TF_FORCE = """func.func @f(%x: tensor<4x4xf32>, %lr: tensor<f32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<8xf32>) {
  %s = ascend.NPUAllocFloatStatus {name = "alloc"} : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s {name = "clear"} : (tensor<8xf32>) -> tensor<8xf32>
  %e = ascend.Exp %x {name = "exp"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %k = ascend.Const dense<2.0> : tensor<4x4xf32> {name = "k"}
  %m = ascend.Mul %e, %k {name = "mul"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = ascend.ApplyGradientDescent %w, %lr, %m {name = "sgd"} : (tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = ascend.NPUGetFloatStatus %c {name = "get"} : (tensor<8xf32>) -> tensor<8xf32>
  func.return %m, %u, %g : tensor<4x4xf32>, tensor<4x4xf32>, tensor<8xf32>
}
"""


def test_tf_unsafe_force_all_spares_what_tf_cannot_force(monkeypatch: pytest.MonkeyPatch) -> None:
    """UNSAFE_FORCE_ALL (TF's `CanForceFP16`): every fp32 op with an fp16 kernel goes fp16 (a deny op too) except
    constants, stateful ops (the float status register) and variable updates (an optimizer, whose variable TF
    takes by reference). Without an allow op TF does nothing, which forcing does not change here: Mul and Exp
    are forced even though no allow-list op is present."""
    default = run_precision(parse_module(TF_FORCE), policy="tf")
    assert {d.name: d.chosen.outputs[0] for d in default.ops if d.name} == {
        "alloc": "f32",
        "clear": "f32",
        "exp": "f32",
        "k": "f32",
        "mul": "f32",
        "sgd": "f32",
        "get": "f32",
    }
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL", "unsafe_force_all")
    forced = run_precision(parse_module(TF_FORCE), policy="tf")
    assert {d.name: d.chosen.outputs[0] for d in forced.ops if d.name} == {
        "alloc": "f32",
        "clear": "f32",
        "exp": "f16",
        "k": "f32",
        "mul": "f16",
        "sgd": "f32",
        "get": "f32",
    }
    assert forced.by_name("exp").reason == "tf: forced (UNSAFE_FORCE_ALL)"
    assert forced.by_name("sgd").reason == "tf: not on any list"


@pytest.mark.parametrize(
    ("level", "amp_dtype", "message"),
    [
        (
            "FAST",
            "fp16",
            "environment variable TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL: unknown level 'FAST'; "
            "expected TENSOR_CORES_ONLY, TREAT_INFER_AS_DENY, UNSAFE_FORCE_ALL or unset",
        ),
        (
            "UNSAFE_FORCE_ALL",
            "bf16",
            "environment variable TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL: UNSAFE_FORCE_ALL "
            "cannot be used with amp_dtype bf16 (TensorFlow refuses it when oneDNN is used)",
        ),
    ],
)
def test_tf_bad_level_is_a_one_line_error(
    monkeypatch: pytest.MonkeyPatch, level: str, amp_dtype: str, message: str
) -> None:
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL", level)
    with pytest.raises(AscendError) as e:
        run_precision(parse_module(TF_SIMPLE), policy="tf", amp_dtype=amp_dtype)
    assert str(e.value) == message


def test_tf_tensor_cores_only_leaves_the_bf16_lists_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """TENSOR_CORES_ONLY is read by TF's CUDA (fp16) lists only: the oneDNN (bf16) lists keep their infer, deny and
    clear ops; and the fp16 lists ignore edits of the lists it empties, as TF's getters return before editing
    (adding Exp, a deny op, to the clear list is then no conflict)."""
    bf16 = run_precision(parse_module(TF_SIMPLE), policy="tf", amp_dtype="bf16")
    fp16 = run_precision(parse_module(TF_SIMPLE), policy="tf")
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL", "TENSOR_CORES_ONLY")
    assert _dtypes(run_precision(parse_module(TF_SIMPLE), policy="tf", amp_dtype="bf16")) == _dtypes(bf16)
    monkeypatch.setenv("TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_CLEARLIST_ADD", "Exp")
    only = _dtypes(run_precision(parse_module(TF_SIMPLE), policy="tf"))
    assert only != _dtypes(fp16)
    assert only == {"deny1": "f32", "clr2": "f32", "allow1": "f16", "clr3": "f32"}


TF_PRESERVE_FETCHES = """func.func @preserve_fetches(%input: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) {
  %allow1 = ascend.MatMulV2 %input, %input {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr1 = ascend.Relu %allow1 {name = "clr1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %infer1 = ascend.Sqrt %clr1 {name = "infer1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny1 = ascend.Exp %infer1 {name = "deny1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %deny1 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow2 = ascend.MatMulV2 %clr2, %clr2 {name = "allow2"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.Relu %allow2 {name = "clr3"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny2 = ascend.Exp %clr3 {name = "deny2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr4 = ascend.Relu %deny2 {name = "clr4"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %allow1, %clr2, %clr3, %clr4 : tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>
}
"""


def test_tf_keep_dtype_file_entries_are_preserved_nodes(tmp_path: Path) -> None:
    """TF's PreserveFetches (fetch = allow1, clr2, clr3) with the fetches in a keep_dtype file: TF expects only
    allow2 in fp16; the preserved allow1 paints nothing (clr1 stays fp32), as with the `keep_dtype` mark."""
    keep = tmp_path / "keep.txt"
    keep.write_text("allow1\nclr2\nclr3\n")
    plain = _dtypes(run_precision(parse_module(TF_PRESERVE_FETCHES), policy="tf"))
    assert plain["clr1"] == "f16" and plain["allow1"] == "f16"
    got = run_precision(parse_module(TF_PRESERVE_FETCHES), policy="tf", keep_dtype=str(keep))
    assert [n for n, d in _dtypes(got).items() if d != "f32"] == ["allow2"]
    assert got.by_name("allow1").reason == "keep_dtype"
    assert got.by_name("clr1").reason == "tf: clear, not connected to allow ops"
    marked = TF_PRESERVE_FETCHES
    for n in ("allow1", "clr2", "clr3"):
        marked = marked.replace(f'{{name = "{n}"}}', f'{{name = "{n}", keep_dtype}}')
    assert _dtypes(run_precision(parse_module(marked), policy="tf")) == _dtypes(got)
    # By op type: every Relu is preserved; deny still propagates through a preserved op (TF's pass 2).
    keep.write_text("OpType::Relu\n")
    got = run_precision(parse_module(TF_SIMPLE), policy="tf", keep_dtype=str(keep))
    assert _dtypes(got) == {"deny1": "f32", "clr2": "f32", "allow1": "f16", "clr3": "f32"}


@pytest.mark.parametrize(
    ("env", "option", "message"),
    [
        (
            {"TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_ADDD": "MatMul"},
            None,
            "environment variable TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_ALLOWLIST_ADDD: unknown list edit",
        ),
        (
            {"TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD": "Relu,NoSuchOp"},
            None,
            "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_DENYLIST_ADD: unknown op 'NoSuchOp'",
        ),
        ({}, "ALLOWLIST=MatMul", "tf_lists entry 1 'ALLOWLIST=MatMul': expected"),
        ({}, "CLEARLIST_ADD=Relu;GREENLIST_ADD=Relu", "tf_lists entry 2 'GREENLIST_ADD=Relu'"),
    ],
)
def test_bad_tf_list_edits_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], option: str | None, message: str
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(AscendError, match=message.replace("(", r"\(")) as e:
        load_config(policy="tf", tf_lists=option)
    assert "\n" not in str(e.value)


def test_tf_lists_are_data_and_every_entry_names_a_known_mapping() -> None:
    from ascend_mp.dialects.ascend import OPS_BY_TYPE
    from ascend_mp.policies.tf import load_data

    data = load_data()
    for low, lists in data["lists"].items():
        assert set(lists) == {"allow", "infer", "deny", "clear"}, low
        for kind, names in lists.items():
            for name in names:
                assert name in data["cann"], (low, kind, name)
    for name, types in data["cann"].items():
        assert all(t in OPS_BY_TYPE for t in types), (name, types)
    # the lists as TF 2.x has them for fp16 (spot checks against auto_mixed_precision_lists.h)
    fp16 = data["lists"]["fp16"]
    assert {"MatMul", "Conv2D", "BatchMatMulV2"} <= set(fp16["allow"])
    assert {"Exp", "Mean", "Sum", "Pow", "SoftmaxCrossEntropyWithLogits"} <= set(fp16["deny"])
    assert "Mean" in data["lists"]["bf16"]["infer"] and "Mean" not in data["lists"]["bf16"]["deny"]


def test_tf_cast_on_a_list_is_painted_like_any_op() -> None:
    """With Cast added to the clear list, a user's Cast to fp32 next to an allow op is painted allow and
    retargeted to fp16, although one of its consumers is not allow."""
    text = """func.func @g(%x: tensor<4x4xi32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %c = ascend.Cast %x {name = "cst"} : (tensor<4x4xi32>) -> tensor<4x4xf32>
  %m = ascend.MatMulV2 %c, %c {name = "mm"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = ascend.Exp %c {name = "e"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %m, %e : tensor<4x4xf32>, tensor<4x4xf32>
}
"""
    plain = run_precision(parse_module(text), policy="tf")
    assert plain.by_name("cst").chosen.outputs == ("f32",)  # Exp (deny) also reads it
    listed = run_precision(parse_module(text), policy="tf", tf_lists="CLEARLIST_ADD=Cast")
    assert listed.by_name("cst").chosen.outputs == ("f16",) and listed.by_name("e").chosen.outputs == ("f32",)
