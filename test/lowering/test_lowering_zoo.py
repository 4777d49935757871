"""The zoo from `make models` (models/out, both exporters) imported, lowered by convert-ascend-to-linalg,
compiled by IREE for the CPU and run: fp32 against onnxruntime within the zoo tolerance, and under every
precision mode within twice the interpreter's own error against the float64 run of the imported graph.

Skipped when models/out is absent (CI). The image CNNs (exports over 10 MB: mobilenet_v2, efficientnet_b0,
resnet18, resnet50, vgg11) take 10-70 s per compile (about 25 minutes for all their modes on a 2-core
machine), so `make test` leaves them out unless ASCEND_MP_ZOO_LARGE=1; docs/usage/lowering.md lists the
figures of a full run."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lowering_util import ENVELOPE, FLOOR, interpret, iree_run, rel_err, with_mode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))  # the zoo's tolerances
from test_onnx_models import ZOO, ZOO_TOL, _feed, _session  # noqa: E402

from ascend_mp.errors import AscendError  # noqa: E402
from ascend_mp.frontend import import_onnx  # noqa: E402
from ascend_mp.modes import V1_MODES  # noqa: E402

LARGE = 10_000_000
"""Exports over this many bytes are the image CNNs: opt-in (ASCEND_MP_ZOO_LARGE=1)."""
FP32_TOL = 1e-5

Array = np.ndarray[Any, Any]


def _models() -> list[Any]:
    if not ZOO.is_dir():
        return []
    large = os.environ.get("ASCEND_MP_ZOO_LARGE") == "1"
    out = []
    for path in sorted(ZOO.glob("*.onnx")):
        marks = []
        if path.stat().st_size > LARGE and not large:
            marks.append(pytest.mark.skip(reason="an image CNN (minutes of iree-compile): set ASCEND_MP_ZOO_LARGE=1"))
        out.append(pytest.param(path, id=path.stem, marks=marks))
    return out


MODELS = _models()
NO_ZOO = pytest.mark.skipif(not MODELS, reason="no exported models in models/out (run `make models` to export the zoo)")


@NO_ZOO
@pytest.mark.parametrize("path", MODELS)
def test_zoo_fp32_matches_onnxruntime(path: Path) -> None:
    name = path.name.split(".")[0]
    session = _session(path)
    feed = _feed(path, session)
    want = session.run(None, feed)[0]
    (y,) = iree_run(import_onnx(str(path)), "main", *feed.values())[:1]
    err = rel_err(y, want)
    print(f"{path.stem} fp32: IREE vs onnxruntime {err:.3g}")  # the figures of docs/usage/lowering.md (pytest -s)
    assert err <= ZOO_TOL.get(name, FP32_TOL), f"{path.name}: IREE fp32 vs onnxruntime {err:.3g}"


@NO_ZOO
@pytest.mark.parametrize("path", [p for p in MODELS if ".dynamo." in str(p.values[0])])
def test_zoo_modes_within_interpreter_envelope(path: Path) -> None:
    """Every precision mode (one exporter: the two exports lower to the same arithmetic)."""
    session = _session(path)
    feed = list(_feed(path, session).values())
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
        print(f"{path.stem} {mode}: IREE {e_iree:.3g} interpreter {e_interp:.3g} vs float64")
        if not e_iree <= ENVELOPE * e_interp + FLOOR:
            bad.append(f"{mode}: IREE {e_iree:.3g} vs interpreter {e_interp:.3g}")
    assert not bad, f"{path.name}: {bad}"
