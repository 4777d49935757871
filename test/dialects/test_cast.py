"""`ascend.Cast` canonicalization (dialects/ascend/cast.py): registered on the op, used by xDSL's `canonicalize`."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.passes import PassPipeline
from xdsl.transforms.canonicalize import CanonicalizePass

from ascend_mp.dialects.ascend import CastOp, ConstOp
from ascend_mp.dtypes import tensor_dtype
from ascend_mp.interpreter import Program
from ascend_mp.ir import make_context, parse_module

CASTS = """func.func @f(%x: tensor<4xf16>, %b: tensor<4xbf16>, %y: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xbf16>) {
  %w = ascend.Cast %x : (tensor<4xf16>) -> tensor<4xf32>
  %n = ascend.Cast %w : (tensor<4xf32>) -> tensor<4xf16>
  %bw = ascend.Cast %b : (tensor<4xbf16>) -> tensor<4xf32>
  %bn = ascend.Cast %bw : (tensor<4xf32>) -> tensor<4xbf16>
  %h = ascend.Cast %y : (tensor<4xf32>) -> tensor<4xf16>
  %back = ascend.Cast %h : (tensor<4xf16>) -> tensor<4xf32>
  %c = ascend.Const dense<[1.0, 0.1, 65504.0, 70000.0]> : tensor<4xf32>
  %ch = ascend.Cast %c : (tensor<4xf32>) -> tensor<4xf16>
  %id = ascend.Cast %y : (tensor<4xf32>) -> tensor<4xf32>
  %cb = ascend.Cast %c : (tensor<4xf32>) -> tensor<4xbf16>
  func.return %n, %bn, %back, %ch, %id, %cb : tensor<4xf16>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xbf16>
}
"""


def _canonicalize(text: str) -> object:
    module = parse_module(text)
    PassPipeline((CanonicalizePass(),)).apply(make_context(), module)
    module.verify()
    return module


def test_identity_round_trips_and_constants_fold_and_lossy_trips_stay() -> None:
    module = _canonicalize(CASTS)
    casts = [op for op in module.walk() if isinstance(op, CastOp)]  # type: ignore[attr-defined]
    # only f32 -> f16 -> f32 is left (it rounds)
    assert [(tensor_dtype(c.x.type), tensor_dtype(c.y.type)) for c in casts] == [("f32", "f16"), ("f16", "f32")]
    ret = list(module.walk())[-1]  # type: ignore[attr-defined]
    fn_args = ret.parent_block().args
    assert ret.operands[0] is fn_args[0] and ret.operands[1] is fn_args[1] and ret.operands[4] is fn_args[2]
    consts = [op for op in module.walk() if isinstance(op, ConstOp)]  # type: ignore[attr-defined]
    by_dtype = {tensor_dtype(c.y.type): np.array(c.value.get_values(), dtype=np.float64) for c in consts}
    source = np.array([1.0, 0.1, 65504.0, 70000.0], dtype=np.float32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(by_dtype["f16"], source.astype(np.float16).astype(np.float64))
    np.testing.assert_array_equal(by_dtype["bf16"], source.astype(ml_dtypes.bfloat16).astype(np.float64))
    assert np.isinf(by_dtype["f16"][3]) and by_dtype["f16"][1] == float(np.float16(0.1))


def test_canonicalize_keeps_what_the_program_computes() -> None:
    rng = np.random.default_rng(0)
    args = [
        rng.standard_normal(4).astype(np.float16),
        rng.standard_normal(4).astype(ml_dtypes.bfloat16),
        (rng.standard_normal(4) * 1000).astype(np.float32),
    ]
    before = Program.from_module(parse_module(CASTS)).run("f", *args)
    after = Program.from_module(_canonicalize(CASTS)).run("f", *args)  # type: ignore[arg-type]
    for a, b in zip(before, after):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


BLOB = """func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {
  %w = ascend.Const dense_resource<w> : tensor<4xf32> {name = "w"}
  %h = ascend.Cast %w : (tensor<4xf32>) -> tensor<4xf16>
  %y = ascend.Add %x, %h : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f000000400000003f000040c0"
    }
  }
#-}
"""


def test_a_cast_of_a_weight_blob_stays_a_cast() -> None:
    module = _canonicalize(BLOB)
    casts = [op for op in module.walk() if isinstance(op, CastOp)]  # type: ignore[attr-defined]
    assert [(tensor_dtype(c.x.type), tensor_dtype(c.y.type)) for c in casts] == [("f32", "f16")]
    x = np.array([1, 2, 3, 4], dtype=np.float16)
    (y,) = Program.from_module(module).run("main", x)  # type: ignore[arg-type]
    np.testing.assert_array_equal(y, x + np.array([1.0, 2.0, 0.5, -3.0], dtype=np.float16))
