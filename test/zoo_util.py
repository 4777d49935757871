"""The model zoo the tests run: the torch exports of `make models` (models/out) where they are, else the committed
skeletons (models/zoo: the same graphs, each large weight kept as statistics) redrawn into build/zoo by
models/skeleton.py, so CI, which has no torch, runs the zoo too (docs/usage/models.md).

ASCEND_MP_ZOO=skeletons uses the skeletons even where models/out holds exports; ASCEND_MP_ZOO_LARGE=1 adds the
models `make test` leaves out for their cost (`OPT_IN`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from models.skeleton import materialise

ROOT = Path(__file__).resolve().parents[1]
EXPORTS = ROOT / "models" / "out"
SKELETONS = ROOT / "models" / "zoo"
CACHE = ROOT / "build" / "zoo"


def _source() -> Path:
    if os.environ.get("ASCEND_MP_ZOO") != "skeletons" and any(EXPORTS.glob("*.onnx")):
        return EXPORTS
    return SKELETONS


SOURCE = _source()
REDRAWN = SOURCE == SKELETONS
"""True where the zoo's weights (and the image models' inputs) are redrawn from recorded statistics."""
LARGE = os.environ.get("ASCEND_MP_ZOO_LARGE") == "1"
OPT_IN = {
    "vgg11": "vgg11: 130M weights (0.5 GB; one iree-compile of it takes a minute and 6.5 GB with the test's own)",
    "resnet50": "resnet50: resnet18's operators at 4x the compute (10-40 s per test), left out of make test's time",
}
"""Models every zoo test leaves out unless ASCEND_MP_ZOO_LARGE=1, and why."""


@dataclass(frozen=True)
class ZooModel:
    """One export of the zoo: `<name>.<exporter>.onnx`."""

    name: str
    exporter: str
    source: Path

    @property
    def stem(self) -> str:
        return f"{self.name}.{self.exporter}"

    def path(self) -> Path:
        """The `.onnx` to run: the export itself, or the skeleton redrawn (once per skeleton) into build/zoo."""
        path = self.source / f"{self.stem}.onnx"
        return materialise(path, CACHE) if self.source == SKELETONS else path

    def inputs(self, session: Any) -> dict[str, np.ndarray[Any, Any]]:
        """The model's seeded inputs keyed by ONNX input name, in the order of `session`'s inputs."""
        saved = np.load(self.path().with_name(f"{self.name}.inputs.npz"))
        return {i.name: saved[i.name] for i in session.get_inputs()}


def zoo() -> list[ZooModel]:
    """Every export of the zoo, sorted by file name."""
    out = []
    for path in sorted(SOURCE.glob("*.onnx")):
        name, exporter = path.name.split(".")[:2]
        out.append(ZooModel(name, exporter, SOURCE))
    return out


def zoo_param(model: ZooModel, reason: str | None = None) -> Any:
    """`model` as a pytest parameter, skipped (saying why and how to run it) when it is opt-in (`OPT_IN`, or
    `reason` where a test leaves it out for its own cost) and ASCEND_MP_ZOO_LARGE=1 is not set."""
    why = OPT_IN.get(model.name, reason)
    marks = [pytest.mark.zoo_large] if why else []  # `make test-zoo` runs these (`-m zoo_large`), CI after make test
    if why and not LARGE:
        marks.append(pytest.mark.skip(reason=f"{why}: set ASCEND_MP_ZOO_LARGE=1 (make test-zoo)"))
    return pytest.param(model, id=model.stem, marks=marks)


def session(path: Path) -> Any:
    """A single-threaded CPU onnxruntime session."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
