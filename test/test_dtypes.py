"""The dtype records (`ascend_mp.dtypes`): complete for what the dialect, the operator library and the passes
use, and consistent with what numpy, ml_dtypes, ONNX and xDSL say of each dtype, not with the records
themselves."""

from __future__ import annotations

import ast
import json
import re
from itertools import product
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper
from xdsl.dialects.builtin import IntegerType, Signedness

from ascend_mp import dtypes
from ascend_mp.dtypes import BY_CANN, BY_NAME, DTYPES, FLOATS
from ascend_mp.modes import V1_MODES, V2_MODES
from ascend_mp.opinfo import OTHER_CANN_DTYPES

ROOT = Path(__file__).resolve().parents[1]
LIBRARY_SOURCES = [p for d in ("ascend_mp", "dialects", "passes") for p in sorted((ROOT / d).rglob("*.py"))]
DTYPE_LITERAL = re.compile(r"(bf|f|ui|si|i)\d+")


def _finfo(d: dtypes.DType) -> ml_dtypes.finfo:
    return ml_dtypes.finfo(d.numpy)


# ------------------------------------------------------------------------------------------------ complete


def test_every_dtype_literal_in_the_library_has_a_record() -> None:
    found: dict[str, str] = {}
    for path in LIBRARY_SOURCES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and DTYPE_LITERAL.fullmatch(node.value):
                found.setdefault(node.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    assert {"f16", "bf16", "f32", "i1", "i32"} <= set(found)  # the scan sees the sources
    assert {n: at for n, at in found.items() if n not in BY_NAME} == {}


def test_every_dtype_of_the_builtin_operator_tables_has_a_record_or_is_declared_unmodelled() -> None:
    names: set[str] = set()
    for path in sorted((ROOT / "ascend_mp" / "opinfo" / "data").glob("*.json")):
        for entry in json.loads(path.read_text()).values():
            for port in entry.values() if isinstance(entry, dict) else ():
                if isinstance(port, dict) and isinstance(port.get("dtype"), str):
                    names.update(n.strip() for n in port["dtype"].split(","))
    assert {"float16", "float", "bfloat16", "int32"} <= names
    assert sorted(n for n in names if n not in BY_CANN and n not in OTHER_CANN_DTYPES) == []
    assert set(BY_CANN).isdisjoint(OTHER_CANN_DTYPES)  # a modelled name is not also declared unmodelled


def test_every_builtin_kernel_dtype_has_a_record() -> None:
    from ascend_mp.opinfo import SOCS, builtin_library

    used = {
        d
        for soc in SOCS
        for info in builtin_library(soc).ops.values()
        for k in info.kernels
        for d in (*k.inputs, *k.outputs)
    }
    assert {"f16", "bf16", "f32"} <= used
    assert sorted(used - set(BY_NAME)) == []


# ------------------------------------------------------------------------------------------------ consistent


@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.name)
def test_width_kind_and_signedness_agree_with_numpy_and_ml_dtypes(d: dtypes.DType) -> None:
    assert d.numpy.itemsize == d.itemsize
    if d.is_float:
        info = _finfo(d)
        assert (info.bits, info.nmant, info.nexp) == (d.bits, d.mantissa, d.exponent)
        assert info.min < 0 and d.signed
    elif d.kind == "bool":
        assert d.numpy == np.dtype(np.bool_) and d.bits == 1 and not d.signed
    else:
        info = np.iinfo(d.numpy)
        assert info.bits == d.bits
        assert (info.min < 0) == d.signed == (d.kind == "int")


@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.name)
def test_the_xdsl_element_type_prints_as_the_name_and_has_the_width(d: dtypes.DType) -> None:
    assert str(d.element) == d.name  # MLIR's spelling of the element type
    if isinstance(d.element, IntegerType):
        assert d.element.width.data == d.bits and not d.is_float
        assert (d.element.signedness.data == Signedness.UNSIGNED) == (d.kind == "uint")
    else:
        assert d.element.bitwidth == d.bits and d.is_float  # pyright: ignore[reportAttributeAccessIssue]


@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.name)
def test_the_onnx_type_is_the_same_numpy_dtype(d: dtypes.DType) -> None:
    assert np.dtype(helper.tensor_dtype_to_np_dtype(getattr(onnx.TensorProto, d.onnx))) == d.numpy


def test_lookups_round_trip() -> None:
    for d in DTYPES:
        assert BY_CANN[d.cann] is d and all(BY_CANN[a] is d for a in d.cann_aliases)
        assert dtypes.CANN_NAMES[dtypes.TO_CANN[d.name]] == d.name
        assert dtypes.dtype_name(d.element) == d.name and dtypes.element_type(d.name) == d.element
        assert dtypes.by_numpy(d.numpy) is d and dtypes.NUMPY[d.name] == d.numpy
    assert len({d.name for d in DTYPES}) == len({d.numpy for d in DTYPES}) == len(DTYPES)
    assert BY_CANN["float"] is dtypes.F32 and "float17" not in BY_CANN
    assert dtypes.by_numpy(np.complex64) is None


def test_cann_spellings_are_cann_s() -> None:
    # CANN names a dtype after numpy's name for it, except that f64 is `double` (`float64` accepted) and f32
    # is also `float`; bf16 is ml_dtypes' `bfloat16`.
    for d in DTYPES:
        spellings = {d.cann, *d.cann_aliases}
        assert d.numpy.name in spellings or (d.kind == "bool" and spellings == {"bool"})
    assert {"float", "double"} <= set(BY_CANN)


# ------------------------------------------------------------------------------------------------ the lattice


def _round_trip_exact(narrow: np.dtype, wide: np.dtype) -> bool:
    """Whether every value of `narrow` (all bit patterns of a 16-bit float; else extremes and a sample)
    survives narrow -> wide -> narrow."""
    if narrow.itemsize == 2:
        values = np.arange(2**16, dtype=np.uint16).view(narrow)
    else:
        info = ml_dtypes.finfo(narrow)
        sample = np.random.default_rng(0).standard_normal(1000) * 10.0 ** np.random.default_rng(1).integers(
            -30, 30, 1000
        )
        values = np.concatenate(
            [np.array([info.max, info.min, info.tiny, info.smallest_subnormal], narrow), sample.astype(narrow)]
        )
    with np.errstate(all="ignore"):
        back = values.astype(wide).astype(narrow)
        same = (back == values) | (np.isnan(values.astype(np.float64)) & np.isnan(back.astype(np.float64)))
    return bool(same.all())


def test_exact_widening_is_what_numpy_round_trips_show() -> None:
    measured = {(a.name, b.name) for a, b in product(FLOATS, FLOATS) if a != b and _round_trip_exact(a.numpy, b.numpy)}
    assert dtypes.EXACT_WIDENING == measured
    assert ("f16", "bf16") not in measured and ("bf16", "f16") not in measured


def test_rank_orders_exact_widening_and_f16_bf16_share_a_rank() -> None:
    for a, b in product(FLOATS, FLOATS):
        if (a.name, b.name) in dtypes.EXACT_WIDENING:
            assert a.rank < b.rank
    assert dtypes.F16.rank == dtypes.BF16.rank < dtypes.F32.rank < dtypes.F64.rank
    assert dtypes.LOW_FLOATS == ("f16", "bf16")
    assert all(BY_NAME[n].bits == 16 for n in dtypes.LOW_FLOATS)


def test_join_is_the_least_float_both_widen_into() -> None:
    def least_upper_bound(a: dtypes.DType, b: dtypes.DType) -> str:
        # from ml_dtypes' finfo alone: the narrowest float holding every value of both
        def holds(w: dtypes.DType, n: dtypes.DType) -> bool:
            return _finfo(n).nmant <= _finfo(w).nmant and _finfo(n).nexp <= _finfo(w).nexp

        return min((w for w in FLOATS if holds(w, a) and holds(w, b)), key=lambda w: _finfo(w).bits).name

    for a, b in product(FLOATS, FLOATS):
        assert dtypes.join(a.name, b.name) == least_upper_bound(a, b)
    assert dtypes.join("f16", "bf16") == "f32"
    assert dtypes.join("i32", "f16") == dtypes.join("f16", "i32") == "f16"  # a non-float never wins
    with pytest.raises(ValueError, match="two non-float"):
        dtypes.join("i32", "i64")


def test_the_low_dtype_of_each_mode() -> None:
    bf16 = {"allow_mix_precision_bf16", "allow_fp32_to_bf16", "mixed_bfloat16"}
    for mode in (*V1_MODES, *V2_MODES):
        assert dtypes.mode_low(mode) == ("bf16" if mode in bf16 else "f16"), mode


def test_reports_words() -> None:
    assert [dtypes.short(n) for n in ("f16", "bf16", "f32", "f64", "i32", "x")] == [
        "fp16",
        "bf16",
        "fp32",
        "fp64",
        "i32",
        "x",
    ]
    assert dtypes.cann_name("f32") == "float32" and dtypes.cann_name(None) is None and dtypes.cann_name("x") == "x"
    assert [dtypes.itemsize(n) for n in ("f16", "bf16", "f32", "i1", "i64")] == [2, 2, 4, 1, 8]


def test_numpy_is_not_imported_with_the_records() -> None:
    import subprocess
    import sys

    code = "import sys, ascend_mp.dtypes as d; d.F16, d.CANN_NAMES; print('numpy' in sys.modules, 'ml_dtypes' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["False", "False"]
