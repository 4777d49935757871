"""The zoo (test/zoo_util.py: the exports of `make models` where present, else the committed skeletons with their
weights redrawn, as in CI; both exporters) imported, lowered by convert-ascend-to-linalg, compiled by IREE for the
CPU and run: fp32 against onnxruntime within the zoo tolerance, and under every precision mode within twice the
interpreter's own error against the float64 run of the imported graph.

`make test` runs what fits its time (docs/usage/lowering.md has the figures): fp32 for every export but the
`FP32_OPT_IN` ones, every mode for every model but the `MODES_OPT_IN` ones, neither for zoo_util.OPT_IN's (vgg11,
resnet50); ASCEND_MP_ZOO_LARGE=1 runs them all."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lowering_util import ENVELOPE, FLOOR, interpret, iree_run, rel_err, with_mode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))  # the zoo's tolerances
from test_onnx_models import ZOO_MODELS, ZOO_TOL  # noqa: E402
from zoo_util import REDRAWN, ZooModel, session, zoo_param  # noqa: E402

from ascend_mp.errors import AscendError  # noqa: E402
from ascend_mp.frontend import import_onnx  # noqa: E402
from ascend_mp.ir import isolated_store  # noqa: E402
from ascend_mp.modes import V1_MODES  # noqa: E402

FP32_TOL = 1e-5


@pytest.fixture(autouse=True)
def _fresh_store() -> Iterator[None]:
    """Each test's weights leave the process-wide blob store when it ends: otherwise every model's fp32, fp16 and
    bf16 weights (hex text, twice their bytes, and a numpy copy) stay until pytest exits."""
    with isolated_store():
        yield


_BUDGET = "make test's time (its image CNNs through IREE: resnet18, and mobilenet_v2 in fp32)"
FP32_OPT_IN = {"efficientnet_b0": f"efficientnet_b0: two 25-45 s iree-compiles, left out of {_BUDGET}"}
"""Models whose fp32 compiles `make test` leaves out (beside zoo_util.OPT_IN: vgg11, resnet50), and why
(docs/usage/lowering.md)."""
MODES_OPT_IN = {
    "efficientnet_b0": f"efficientnet_b0: five 25-45 s iree-compiles for its modes, left out of {_BUDGET}",
    "mobilenet_v2": f"mobilenet_v2: five 15-30 s iree-compiles for its modes, left out of {_BUDGET}",
}
"""Models whose every-mode compiles `make test` leaves out, and why."""

Array = np.ndarray[Any, Any]
WHICH = " (redrawn)" if REDRAWN else ""


@pytest.mark.parametrize("model", [zoo_param(m, FP32_OPT_IN.get(m.name)) for m in ZOO_MODELS])
def test_zoo_fp32_matches_onnxruntime(model: ZooModel) -> None:
    path = model.path()
    ort = session(path)
    feed = model.inputs(ort)
    want = ort.run(None, feed)[0]
    (y,) = iree_run(import_onnx(str(path)), "main", *feed.values())[:1]
    err = rel_err(y, want)
    print(
        f"{model.stem}{WHICH} fp32: IREE vs onnxruntime {err:.3g}"
    )  # the figures of docs/usage/lowering.md (pytest -s)
    assert err <= ZOO_TOL.get(model.name, FP32_TOL), f"{path.name}: IREE fp32 vs onnxruntime {err:.3g}"


@pytest.mark.parametrize(
    "model", [zoo_param(m, MODES_OPT_IN.get(m.name)) for m in ZOO_MODELS if m.exporter == "dynamo"]
)
def test_zoo_modes_within_interpreter_envelope(model: ZooModel) -> None:
    """Every precision mode (one exporter: the two exports lower to the same arithmetic)."""
    path = model.path()
    feed = list(model.inputs(session(path)).values())
    module = import_onnx(str(path))
    (ref,) = interpret(module, "main", *feed, reference=True)[:1]
    bad = []
    for mode in V1_MODES:
        try:
            decided = with_mode(module, mode)
        except AscendError as e:  # the mode has no program for this model (as the interpreter's zoo test expects)
            assert "no kernel for its original dtype" in str(e) or "no bf16 kernel" in str(e), f"{mode}: {e}"
            continue
        ours = iree_run(decided, "main", *feed)[0]
        theirs = interpret(decided, "main", *feed)[0]
        e_iree, e_interp = rel_err(ours, ref), rel_err(theirs, ref)
        print(f"{model.stem}{WHICH} {mode}: IREE {e_iree:.3g} interpreter {e_interp:.3g} vs float64")
        if not e_iree <= ENVELOPE * e_interp + FLOOR:
            bad.append(f"{mode}: IREE {e_iree:.3g} vs interpreter {e_interp:.3g}")
    assert not bad, f"{path.name}: {bad}"
