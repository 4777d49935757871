"""Real torch exports: import, every precision mode, fp32 numerics vs onnxruntime.

Two sets:
* the committed fixtures (test/fixtures/onnx: MLP and LeNet-5 from both exporters, with
  onnxruntime's outputs saved beside them by models/make_fixtures.py): always run;
* the zoo (resnet18/50, mobilenet_v2, efficientnet_b0, vgg11, vit, bert_eager, bert_sdpa,
  gpt2, lstm, gru from both exporters; test/zoo_util.py): the exports of `make models`
  (models/out) where present, else the committed skeletons redrawn (the same graphs, weights
  drawn from the exports' statistics), so CI runs it too. vgg11 and resnet50 only with
  ASCEND_MP_ZOO_LARGE=1 (test/zoo_util.py says why).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx_util import rel_err
from zoo_util import ZooModel, session, zoo, zoo_param

from ascend_mp.errors import AscendError
from ascend_mp.frontend import import_onnx
from ascend_mp.interpreter.runner import Program
from ascend_mp.ir import isolated_store, make_context
from ascend_mp.modes import V1_MODES

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "test" / "fixtures" / "onnx"
TOL = 1e-5
ZOO_TOL = {"resnet50": 3e-5}
"""resnet50's fp32 logits: onnxruntime itself is 1.35e-5 (mean of 8 inputs; 1.1e-5 on the saved one)
from a float64 evaluation of the same graph, and its own ORT_ENABLE_ALL and ORT_DISABLE_ALL outputs
differ by 1.7e-5; ours is 1.85e-5 from float64, so the two differ by 2.1e-5 on average, 2.5e-5 at most
(measured; README "resnet50 and the 1e-5 goal")."""


def _fixture_cases() -> list[tuple[str, str]]:
    return [(name, exporter) for name in ("mlp", "lenet") for exporter in ("dynamo", "legacy")]


@pytest.mark.parametrize("name,exporter", _fixture_cases())
def test_fixture_matches_onnxruntime(name: str, exporter: str) -> None:
    refs = np.load(FIXTURES / f"{name}.npz")
    module = import_onnx(str(FIXTURES / f"{name}.{exporter}.onnx"))
    (y,) = Program.from_module(module).run("main", refs["input"])
    assert rel_err(y, refs[exporter]) <= TOL
    assert not any(op.name in ("ascend.Cast",) for op in module.walk())


@pytest.mark.parametrize("name,exporter", _fixture_cases())
@pytest.mark.parametrize("mode", V1_MODES)
def test_fixture_compiles_under_every_mode(name: str, exporter: str, mode: str) -> None:
    from ascend_mp.passes import PASSES

    refs = np.load(FIXTURES / f"{name}.npz")
    module = import_onnx(str(FIXTURES / f"{name}.{exporter}.onnx"))
    precision = PASSES["ascend-precision"]()(mode=mode)  # pyright: ignore[reportCallIssue]
    if mode == "must_keep_origin_dtype" and name == "lenet":
        with pytest.raises(
            AscendError, match="Conv2D '.*' .*no kernel for its original dtype float32 under must_keep_origin_dtype"
        ):
            precision.apply(make_context(), module)
        return
    precision.apply(make_context(), module)
    (y,) = Program.from_module(module).run("main", refs["input"])
    assert rel_err(y, refs[exporter]) < 2e-2


ZOO_MODELS = zoo()


@pytest.fixture(autouse=True)
def _fresh_store() -> Iterator[None]:
    """Each test's weights leave the process-wide blob store when it ends: otherwise every model's fp32, fp16 and
    bf16 weights (hex text, twice their bytes, and a numpy copy) stay until pytest exits."""
    with isolated_store():
        yield


@pytest.mark.parametrize("model", [zoo_param(m) for m in ZOO_MODELS])
def test_zoo_model(model: ZooModel) -> None:
    from ascend_mp.passes import PASSES

    name, path = model.name, model.path()
    ort = session(path)
    feed = model.inputs(ort)
    module = import_onnx(str(path))
    (y,) = Program.from_module(module).run("main", *feed.values())
    ref = ort.run(None, feed)[0]
    err = rel_err(y, ref)
    assert err <= ZOO_TOL.get(name, TOL), f"{path.name}: relative error {err:.3g}"
    has_conv = any(op.name == "ascend.Conv2D" for op in module.walk())
    for mode in V1_MODES:
        compiled = module.clone()
        precision = PASSES["ascend-precision"]()(mode=mode)  # pyright: ignore[reportCallIssue]
        if mode == "must_keep_origin_dtype" and has_conv:
            with pytest.raises(AscendError, match="Conv2D .*no kernel for its original dtype float32"):
                precision.apply(make_context(), compiled)
            continue
        precision.apply(make_context(), compiled)
        if mode == "allow_mix_precision" or (mode == "force_fp16" and name in SEQUENCE_TOL):
            (low,) = Program.from_module(compiled).run("main", *feed.values())
            bound = SEQUENCE_TOL.get(name, 0.1)
            assert np.isfinite(low).all() and rel_err(low, ref) < bound, f"{path.name} {mode}: {rel_err(low, ref):.3g}"


SEQUENCE_TOL = {"vit": 5e-3, "bert_eager": 5e-3, "bert_sdpa": 5e-3, "gpt2": 5e-3, "lstm": 5e-3, "gru": 5e-3}
"""fp16 bound for the sequence models (measured 3.9e-5 .. 1.5e-3 under allow_mix_precision and force_fp16)."""


def _integer_types(module: Any) -> dict[tuple[str, int], str]:
    """(op name, result index) -> dtype of every integer/bool-typed op result, plus the arguments."""
    from ascend_mp.dtypes import tensor_dtype

    out: dict[tuple[str, int], str] = {}
    for op in module.walk():
        if op.name == "func.func":
            for i, arg in enumerate(op.body.blocks[0].args):
                d = tensor_dtype(arg.type)
                if d is not None and not d.startswith(("f", "bf")):
                    out[("@arg", i)] = d
            continue
        name = op.properties.get("name") or op.attributes.get("name")
        for i, r in enumerate(op.results):
            d = tensor_dtype(r.type)
            if name is not None and d is not None and not d.startswith(("f", "bf")):
                out[(f"{op.name} {name}", i)] = d
    return out


INTEGER_MODELS = [m for m in ZOO_MODELS if m.name in ("bert_eager", "bert_sdpa", "gpt2")]


@pytest.mark.parametrize("model", INTEGER_MODELS, ids=lambda m: m.stem)
def test_integer_and_bool_values_keep_their_type(model: ZooModel) -> None:
    """Token ids, masks and positions: no precision mode changes an integer/bool value's type."""
    from ascend_mp.passes import PASSES

    module = import_onnx(str(model.path()))
    before = _integer_types(module)
    assert {"i64", "i1"} <= set(before.values()), "the model should carry int64 ids and bool masks"
    for mode in V1_MODES:
        compiled = module.clone()
        PASSES["ascend-precision"]()(mode=mode).apply(make_context(), compiled)  # pyright: ignore[reportCallIssue]
        after = _integer_types(compiled)
        changed = {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v}
        assert not changed, f"{mode}: {changed}"
