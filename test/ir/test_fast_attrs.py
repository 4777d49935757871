"""Attributes the passes rebuild from verified parts without xDSL's parameter verification
(`with_dtype`, `blob_attr`) equal the ones xDSL's verifying constructors build, hash alike, print
alike and pass the verifier."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseResourceAttr,
    Float32Type,
    NoneAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute

from ascend_mp.dtypes import element_type, with_dtype
from ascend_mp.resources import blob_attr

SHAPES = [(), (1,), (64, 3, 7, 7), (DYNAMIC_INDEX, 128), (0, 5)]
ENCODINGS: list[Attribute] = [NoneAttr(), StringAttr("enc")]


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "i32", "i1"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_with_dtype_equals_the_verifying_constructor(dtype: str, shape: tuple[int, ...], encoding: Attribute) -> None:
    source = TensorType(Float32Type(), shape, encoding)
    fast = with_dtype(source, dtype)
    reference = TensorType(element_type(dtype), shape, encoding)
    assert fast == reference
    assert hash(fast) == hash(reference)
    assert str(fast) == str(reference)
    assert fast.get_shape() == shape and fast.encoding == encoding
    fast.verify()


@pytest.mark.parametrize("handle", ["w_f16", "conv1.weight_f16", "_0", "a$b"])
@pytest.mark.parametrize("shape", SHAPES[:3])
def test_blob_attr_equals_from_params(handle: str, shape: tuple[int, ...]) -> None:
    type_ = TensorType(element_type("f16"), shape)
    fast = blob_attr(handle, type_)
    reference = DenseResourceAttr.from_params(handle, type_)
    assert fast == reference
    assert hash(fast) == hash(reference)
    assert str(fast) == str(reference)
    assert fast.resource_handle == StringAttr(handle)
    fast.verify()
    fast.resource_handle.verify()


@pytest.mark.parametrize(
    ("name", "handle"),
    [
        ("w", "w"),
        ("conv1_weight_f16", "conv1_weight_f16"),
        ("_0", "_0"),
        ("onnx::Conv_497", "onnx__Conv_497"),
        ("conv1.weight", "conv1.weight"),
        ("a$b", "a$b"),
        ("0w", "_0w"),
        ("", "blob"),
        ("é_w", "é_w"),
        ("x y/z", "x_y_z"),
    ],
)
def test_handle_for(name: str, handle: str) -> None:
    """A name that is already a bare identifier is its own handle (the fast path); others are made one."""
    from ascend_mp.resources import handle_for

    assert handle_for(name) == handle
    assert handle_for(handle) == handle  # idempotent
