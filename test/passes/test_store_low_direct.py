"""The precision pass stores a weight low without building the casts it would erase again.

`precision_rewrite` retypes a Const whose every use the plan casts to one lower float dtype and converts its
payload (`apply_plan(store_low=True)` + `store_low_weights(retyped=...)`). The reference is the other way to
the same module: the plan applied with a cast at every such use (`apply_plan`), then `store_low_weights`
narrowing the Consts used only through those casts. Both must give the same printed module (blobs included)
and the same report, on constants that are and are not stored low; and the blobs themselves are checked
against the MLIR blob format built with `struct` (not with the code under test).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from zoo_util import SOURCE, ZooModel

from ascend_mp.ir import isolated_store, parse_module, print_module
from ascend_mp.passes.precision import PrecisionPlan, apply_plan, decide_precision, load_config, precision_rewrite
from ascend_mp.passes.store_weights import store_low_weights
from ascend_mp.resources import resource_array, storage, store_blob


def _blob(values: list[float], fmt: str) -> str:
    """MLIR's blob text: 0x, the alignment (the element size) as a little-endian uint32, the element bytes."""
    size = struct.calcsize(fmt)
    return "0x" + struct.pack("<I", size).hex() + b"".join(struct.pack("<" + fmt, v) for v in values).hex()


W = [0.1 * i - 0.7 for i in range(16)]
RESOURCES = f"""
{{-#
  dialect_resources: {{
    builtin: {{
      w: "{_blob(W, "f")}",
      b: "{_blob(W[::-1], "f")}",
      u: "{_blob([v * 3 for v in W], "f")}",
      r: "{_blob([v + 1 for v in W], "f")}",
      h: "{_blob(W, "e")}",
      big: "{_blob([70000.0 * (i - 8) for i in range(16)], "f")}"
    }}
  }}
#-}}
"""

GRAPH = (
    """func.func @f(%x: tensor<4x4xf32>, %p: tensor<4x4xf16>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf16>, tensor<4x4xf32>) {
  %w = ascend.Const dense_resource<w> : tensor<4x4xf32> {name = "w"}
  %s = ascend.Const dense<0.25> : tensor<4x4xf32> {name = "s"}
  %l = ascend.Const dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0], [11.0, 12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0, 20.0]]> : tensor<4x5xf32> {name = "lit"}
  %b = ascend.Const dense_resource<b> : tensor<4x4xf32> {name = "b"}
  %u = ascend.Const dense_resource<u> : tensor<4x4xf32> {name = "u"}
  %r = ascend.Const dense_resource<r> : tensor<4x4xf32> {name = "r"}
  %h = ascend.Const dense_resource<h> : tensor<4x4xf16> {name = "h"}
  %g = ascend.Const dense_resource<big> : tensor<4x4xf32> {name = "big"}
  %m1 = ascend.MatMulV2 %x, %w {name = "m1"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = ascend.MatMulV2 %m1, %w {name = "m2"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m3 = ascend.MatMulV2 %m2, %s {name = "m3"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m6 = ascend.MatMulV2 %m3, %l {name = "m6"} : (tensor<4x4xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %m4 = ascend.MatMulV2 %m3, %b {name = "m4"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = ascend.Add %m4, %b {name = "black", list = #ascend.list<black>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = ascend.Cast %u {name = "user"} : (tensor<4x4xf32>) -> tensor<4x4xf16>
  %m5 = ascend.MatMulV2 %x, %u {name = "m5"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %k = ascend.Add %c, %h {name = "addh"} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
  %m7 = ascend.MatMulV2 %x, %g {name = "m7"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = ascend.Add %m5, %m7 {name = "sum"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %a, %e, %r, %k, %m2 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf16>, tensor<4x4xf32>
}
"""
    + RESOURCES
)
"""w: two fp16 uses (stored low); s: a splat literal, lit: a literal too large to stay one (a blob named after the
op); b: an fp16 and an fp32 use (kept, cast); u: read by a user cast too (kept); r: returned (kept); h: already
fp16; big: overflows fp16 (inf, as the cast would give)."""

MODES = (
    "allow_mix_precision",
    "force_fp16",
    "allow_fp32_to_fp16",
    "force_fp32",
    "allow_mix_precision_bf16",
    "allow_fp32_to_bf16",
    "cube_fp16in_fp32out",
)


def _direct(text: str, mode: str) -> tuple[str, dict[str, Any], PrecisionPlan]:
    with isolated_store():
        module = parse_module(text)
        plan = precision_rewrite(module, load_config(mode=mode))
        return print_module(module), plan.report().to_json(), plan


def _through_casts(text: str, mode: str) -> tuple[str, dict[str, Any]]:
    with isolated_store():
        module = parse_module(text)
        plan = decide_precision(module, load_config(mode=mode))
        apply_plan(module, plan)
        plan.stored = store_low_weights(module, plan.inserted, plan.consts)
        return print_module(module), plan.report().to_json()


@pytest.mark.parametrize("mode", MODES)
def test_storing_directly_gives_the_module_and_report_of_casting_then_storing(mode: str) -> None:
    text, report, _ = _direct(GRAPH, mode)
    assert (text, report) == _through_casts(GRAPH, mode)


def test_the_graph_exercises_both_ways() -> None:
    """Under allow_mix_precision w, s, lit and big are retyped (no cast built) and b, u, r, h are not; the casts the
    report counts include the four that were never built, and the weights shrink by those four's halves."""
    text, report, plan = _direct(GRAPH, "allow_mix_precision")
    names = sorted(op.properties["name"].data for op, _ in plan.retyped_consts)  # pyright: ignore[reportAttributeAccessIssue]
    assert names == ["big", "lit", "s", "w"]
    totals = report["totals"]
    assert totals["constants_stored_low"] == 4
    assert totals["weight_bytes_before"] - totals["weight_bytes_after"] == (16 + 16 + 20 + 16) * 2
    assert totals["casts_inserted"] == len(plan.inserted) + 4
    assert "ascend.Cast %b" in text and "ascend.Cast %u" in text  # kept constants are still cast
    assert 'dense<2.500000e-01> : tensor<4x4xf16> {name = "s"}' in text
    assert "lit_f16" in text and "w_f16" in text
    stored = plan.stored
    assert stored is not None and stored.converted == (16 + 16 + 20 + 16) * 4 and stored.seconds >= 0


def test_a_taken_handle_gets_a_fresh_one_as_before() -> None:
    """When `w_f16` already names other bytes (handles are process-wide), the blob goes under a fresh handle
    (`w_f16_0`), as storing through the casts does, and the text names it as it was asked for: `w_f16`, unique
    within the module printed (the same module prints the same text, whatever ran before in the process)."""

    def run(direct: bool) -> str:
        with isolated_store():
            storage().parse_resource(storage().declare_resource("w_f16"), _blob([1.0] * 16, "e"))
            module = parse_module(GRAPH)
            if direct:
                precision_rewrite(module, load_config(mode="allow_mix_precision"))
            else:
                plan = decide_precision(module, load_config(mode="allow_mix_precision"))
                apply_plan(module, plan)
                store_low_weights(module, plan.inserted, plan.consts)
            return print_module(module)

    text = run(True)
    assert "dense_resource<w_f16>" in text and "w_f16_0" not in text
    assert "0x02000000003c003c" not in text  # not the other bytes that hold the handle `w_f16` (1.0 in f16)
    assert text == run(False)


def test_stored_blobs_are_the_rounded_values() -> None:
    """The f16 blob of w is the fp32 values rounded to nearest even (struct's 'e' packs them so), and big's
    overflow is inf."""
    text, _, plan = _direct(GRAPH, "allow_mix_precision")
    assert f'w_f16: "{_blob([struct.unpack("<f", struct.pack("<f", v))[0] for v in W], "e")}"' in text
    inf, minus_inf = struct.pack("<H", 0x7C00).hex(), struct.pack("<H", 0xFC00).hex()
    expected = "0x02000000" + "".join("0000" if i == 8 else inf if i > 8 else minus_inf for i in range(16))
    assert f'big_f16: "{expected}"' in text  # beyond 65504 in magnitude: inf, as the cast gives


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "int64", "bool", "uint16"])
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3)])
def test_store_blob_writes_mlir_blob_format(dtype: str, shape: tuple[int, ...]) -> None:
    from xdsl.dialects.builtin import TensorType

    from ascend_mp.dtypes import NUMPY, element_type

    name = next(k for k, v in NUMPY.items() if v == np.dtype(dtype))
    rng = np.random.default_rng(len(shape))
    array = (rng.standard_normal(shape) * 100).astype(dtype)
    type_ = TensorType(element_type(name), list(shape))
    fmt = {
        "float16": "e",
        "float32": "f",
        "float64": "d",
        "int8": "b",
        "int32": "i",
        "int64": "q",
        "bool": "?",
        "uint16": "H",
    }[dtype]
    with isolated_store():
        handle = store_blob("t", array, type_)
        expected = _blob(array.reshape(-1).tolist(), fmt)
        assert storage().lookup(handle) == expected
        from xdsl.dialects.builtin import DenseResourceAttr

        back = resource_array(DenseResourceAttr.from_params(handle, type_))
        assert back.tobytes() == array.tobytes() and back.shape == shape


FIXTURES = Path(__file__).parents[1] / "fixtures" / "onnx"


def _zoo(name: str) -> Path:
    """A legacy export: the committed fixture (MLP, LeNet-5) or the zoo's (test/zoo_util.py)."""
    path = FIXTURES / f"{name}.legacy.onnx"
    return path if path.exists() else ZooModel(name, "legacy", SOURCE).path()


@pytest.mark.parametrize("model", ["lenet", "bert_sdpa"])
@pytest.mark.parametrize("mode", ["allow_mix_precision", "force_fp16", "allow_mix_precision_bf16"])
def test_imported_models_store_the_same_weights_directly(model: str, mode: str) -> None:
    from ascend_mp.frontend.onnx_import import import_onnx

    path = _zoo(model)

    def run(direct: bool) -> tuple[str, str]:
        with isolated_store():
            module = import_onnx(str(path))
            if direct:
                plan = precision_rewrite(module, load_config(mode=mode))
                assert len(plan.retyped_consts) == plan.weights[2]  # every constant stored low went the direct way
            else:
                plan = decide_precision(module, load_config(mode=mode))
                apply_plan(module, plan)
                plan.stored = store_low_weights(module, plan.inserted, plan.consts)
            return print_module(module), json.dumps(plan.report().to_json())

    direct = run(True)
    assert direct == run(False)
    if not mode.endswith("bf16"):  # (ascend910 has no bf16 MatMul kernel: BERT keeps its weights under bf16)
        assert json.loads(direct[1])["totals"]["constants_stored_low"] > 0


def test_stored_blob_is_a_snapshot() -> None:
    """A blob is made from the array as it was when stored (its text is made later, lazily): writing to the
    caller's array afterwards changes neither the text nor the array read back; the same bytes share a handle."""
    from xdsl.dialects.builtin import DenseResourceAttr, TensorType, f32

    type_ = TensorType(f32, [2, 3])
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = "0x04000000" + array.tobytes().hex()
    with isolated_store():
        handle = store_blob("snap", array, type_)
        array[0, 0] = 42.0
        assert storage().lookup(handle) == expected
        back = resource_array(DenseResourceAttr.from_params(handle, type_))
        np.testing.assert_array_equal(back, np.arange(6, dtype=np.float32).reshape(2, 3))
        assert store_blob("snap", np.arange(6, dtype=np.float32).reshape(2, 3), type_) == handle
        assert store_blob("snap", array, type_) != handle


def test_lazy_blobs_read_as_parsed_ones() -> None:
    """Lazily made blobs give, through every public read of the store (lookup, build_resources, what the printer
    writes), what parsed texts give; each text is made once, on the first read; a parsed text equal to a lazy blob's
    placeholder is taken as itself; the store saved and restored around an isolated one keeps its lazy blobs."""
    from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface

    from ascend_mp.blob_names import LazyBlob, put_lazy_blob, raw_blob

    blobs = {"w": "0x0400000000003c00", "b": "0x0200000000"}
    made: list[str] = []

    def maker(text: str) -> LazyBlob:
        return LazyBlob(len(text), lambda: made.append(text) or text)

    reference = OpAsmDialectInterface()
    for handle, blob in blobs.items():
        reference.declare_resource(handle)
        reference.parse_resource(handle, blob)
    with isolated_store():
        store = storage()
        for handle, blob in blobs.items():
            assert store.declare_resource(handle) == handle
            put_lazy_blob(store, handle, maker(blob))
        assert [len(raw_blob(store, h) or "") for h in blobs] == [len(b) for b in blobs.values()] and made == []
        with isolated_store():
            storage().declare_resource("w")
            storage().parse_resource("w", "0xlazy")  # the placeholder's text, parsed: itself
            assert storage().lookup("w") == "0xlazy"
        for handle in ("w", "b", "missing"):
            assert store.lookup(handle) == reference.lookup(handle)
        assert store.build_resources(["w", "b", "missing"]) == reference.build_resources(["w", "b", "missing"])
        assert sorted(made) == sorted(blobs.values())  # each made once
