"""Export the CNN model zoo to ONNX with both torch exporters (`make models`).

    python models/export.py                      # every model, into models/out/
    python models/export.py lenet resnet18 --out DIR --exporters legacy

Random weights (seeded); BatchNorm running statistics are set from a random batch
(cumulative average, momentum=None), so activations keep a sensible scale. Each model
is written as `<name>.<exporter>.onnx` (exporter `dynamo` = `torch.onnx.export(...,
dynamo=True)`, opset 18; `legacy` = the TorchScript exporter, opset 17), with
`<name>.inputs.npz` holding a seeded input under the ONNX input name.

torchvision from the package index is a CUDA build: beside a CPU torch its import
fails at `torchvision::nms` because the operator schemas live in its CUDA extension;
declaring the two missing schemas first (`torch.library`) lets the pure-Python model
definitions import.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

MODELS = ("mlp", "lenet", "resnet18", "mobilenet_v2", "efficientnet_b0", "resnet50", "vgg11")
EXPORTERS = ("dynamo", "legacy")
OPSETS = {"dynamo": 18, "legacy": 17}


def _torchvision():
    try:
        import torchvision
    except RuntimeError:  # CUDA torchvision beside CPU torch: declare the schemas its extension would
        lib = torch.library.Library("torchvision", "DEF")  # noqa: F841 - must stay alive
        lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        globals()["_LIB"] = lib
        for name in [m for m in sys.modules if m.startswith("torchvision")]:
            del sys.modules[name]
        import torchvision
    return torchvision


class LeNet5(nn.Module):
    """LeNet-5 on 1x28x28 (padded first convolution, average pooling, tanh)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.Tanh(), nn.AvgPool2d(2),
            nn.Conv2d(6, 16, 5), nn.Tanh(), nn.AvgPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.Tanh(), nn.Linear(120, 84), nn.Tanh(), nn.Linear(84, 10),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def build(name: str) -> tuple[nn.Module, tuple[int, ...]]:
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)), (1, 1, 28, 28)
    if name == "lenet":
        return LeNet5(), (1, 1, 28, 28)
    tv = _torchvision()
    factory: Callable[..., nn.Module] = getattr(tv.models, name)
    return factory(weights=None), (1, 3, 224, 224)


def calibrate(model: nn.Module, shape: tuple[int, ...], seed: int) -> None:
    """Set BatchNorm running statistics from one random batch (cumulative average)."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        model(torch.randn((8, *shape[1:]), generator=g))


def export(name: str, out: str, exporters: list[str], seed: int = 0) -> None:
    torch.manual_seed(seed)
    model, shape = build(name)
    calibrate(model, shape, seed)
    model.eval()
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    np.savez(os.path.join(out, f"{name}.inputs.npz"), input=x.numpy())
    for exporter in exporters:
        path = os.path.join(out, f"{name}.{exporter}.onnx")
        start = time.perf_counter()
        kwargs: dict[str, object] = {"input_names": ["input"], "output_names": ["logits"], "opset_version": OPSETS[exporter]}
        if exporter == "dynamo":
            torch.onnx.export(model, (x,), path, dynamo=True, external_data=False, **kwargs)  # pyright: ignore[reportArgumentType]
        else:
            torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)  # pyright: ignore[reportArgumentType]
        print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB in {time.perf_counter() - start:.1f} s", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", default=list(MODELS), choices=MODELS)
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    p.add_argument("--exporters", nargs="+", default=list(EXPORTERS), choices=EXPORTERS)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for name in args.models:
        export(name, args.out, args.exporters)


if __name__ == "__main__":
    main()
