"""Export the model zoo (CNNs, transformers, RNNs) to ONNX with both torch exporters (`make models`).

    python models/export.py                      # every model, into models/out/
    python models/export.py lenet resnet18 --out DIR --exporters legacy

Random weights (seeded); BatchNorm running statistics are set from a random batch
(cumulative average, momentum=None), so activations keep a sensible scale. Each model
is written as `<name>.<exporter>.onnx` (exporter `dynamo` = `torch.onnx.export(...,
dynamo=True)`, opset 18; `legacy` = the TorchScript exporter, opset 17), with
`<name>.inputs.npz` holding a seeded input under the ONNX input name.

The sequence models (random init, nothing downloaded): `vit` (written here: 8x8 patch
conv + 2 pre-norm encoder layers on 3x32x32), `bert_eager` / `bert_sdpa` (transformers
BertModel, hidden 128, 2 layers, 2 heads, both attention implementations), `gpt2`
(GPT2Model, n_embd 128, 2 layers, 2 heads), `lstm` / `gru` (one layer, 16 -> 32, Linear on
the last step). BERT and GPT-2 take `input_ids` and `attention_mask` (int64, batch 2 x 16,
the second sequence padded by 5) and return the last hidden state.

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

CNNS = ("mlp", "lenet", "resnet18", "mobilenet_v2", "efficientnet_b0", "resnet50", "vgg11")
SEQUENCE = ("vit", "bert_eager", "bert_sdpa", "gpt2", "lstm", "gru")
MODELS = CNNS + SEQUENCE
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
            nn.Conv2d(1, 6, 5, padding=2),
            nn.Tanh(),
            nn.AvgPool2d(2),
            nn.Conv2d(6, 16, 5),
            nn.Tanh(),
            nn.AvgPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(16 * 5 * 5, 120),
            nn.Tanh(),
            nn.Linear(120, 84),
            nn.Tanh(),
            nn.Linear(84, 10),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class ViT(nn.Module):
    """A small vision transformer on 3x32x32: 8x8 patch conv, class token, 2 pre-norm encoder layers."""

    def __init__(
        self, dim: int = 64, depth: int = 2, heads: int = 4, patch: int = 8, size: int = 32, classes: int = 10
    ) -> None:
        super().__init__()
        self.heads = heads
        self.patch = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, dim) * 0.02)
        self.blocks = nn.ModuleList(ViTBlock(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, 0]))


class ViTBlock(nn.Module):
    """Pre-norm encoder layer written out: qkv projection, scaled dot-product softmax, GELU MLP."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) * (d // self.heads) ** -0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, n, d))
        return x + self.mlp(self.norm2(x))


class Recurrent(nn.Module):
    """A sequence classifier: one LSTM or GRU layer (batch_first) and a Linear on the last step."""

    def __init__(self, kind: str, features: int = 16, hidden: int = 32, classes: int = 10) -> None:
        super().__init__()
        self.rnn = (nn.LSTM if kind == "lstm" else nn.GRU)(features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.rnn(x)
        return self.head(y[:, -1])


class HuggingFace(nn.Module):
    """A transformers model called with (input_ids, attention_mask), returning the last hidden state."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


SEQ_LEN, VOCAB = 16, 1000


def build_sequence(name: str) -> tuple[nn.Module, dict[str, np.ndarray]]:
    """A sequence model and its seeded inputs, keyed by ONNX input name."""
    g = torch.Generator().manual_seed(0)
    if name == "vit":
        return ViT(), {"input": torch.randn((1, 3, 32, 32), generator=g).numpy()}
    if name in ("lstm", "gru"):
        return Recurrent(name), {"input": torch.randn((2, SEQ_LEN, 16), generator=g).numpy()}
    ids = torch.randint(0, VOCAB, (2, SEQ_LEN), generator=g).numpy()
    mask = np.ones((2, SEQ_LEN), np.int64)
    mask[1, SEQ_LEN - 5 :] = 0  # a padded second sequence
    if name.startswith("bert"):
        from transformers import BertConfig, BertModel

        cfg = BertConfig(
            vocab_size=VOCAB,
            hidden_size=128,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=256,
            attn_implementation=name.split("_")[1],
        )
        model: nn.Module = BertModel(cfg, add_pooling_layer=False)
    else:
        from transformers import GPT2Config, GPT2Model

        cfg = GPT2Config(vocab_size=VOCAB, n_embd=128, n_layer=2, n_head=2, n_positions=64, attn_implementation="eager")
        model = GPT2Model(cfg)
    model.config.use_cache = False
    return HuggingFace(model), {"input_ids": ids, "attention_mask": mask}


def export_sequence(name: str, out: str, exporters: list[str], seed: int = 0) -> None:
    torch.manual_seed(seed)
    model, inputs = build_sequence(name)
    model.eval()
    np.savez(os.path.join(out, f"{name}.inputs.npz"), **inputs)
    args = tuple(torch.from_numpy(a) for a in inputs.values())
    for exporter in exporters:
        path = os.path.join(out, f"{name}.{exporter}.onnx")
        start = time.perf_counter()
        kwargs: dict[str, object] = {
            "input_names": list(inputs),
            "output_names": ["output"],
            "opset_version": OPSETS[exporter],
        }
        with torch.no_grad():
            if exporter == "dynamo":
                torch.onnx.export(model, args, path, dynamo=True, external_data=False, **kwargs)  # pyright: ignore[reportArgumentType]
            else:
                torch.onnx.export(model, args, path, dynamo=False, **kwargs)  # pyright: ignore[reportArgumentType]
        print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB in {time.perf_counter() - start:.1f} s", flush=True)


def build(name: str) -> tuple[nn.Module, tuple[int, ...]]:
    if name == "mlp":
        return nn.Sequential(
            nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)
        ), (1, 1, 28, 28)
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
        kwargs: dict[str, object] = {
            "input_names": ["input"],
            "output_names": ["logits"],
            "opset_version": OPSETS[exporter],
        }
        if exporter == "dynamo":
            torch.onnx.export(model, (x,), path, dynamo=True, external_data=False, **kwargs)  # pyright: ignore[reportArgumentType]
        else:
            torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)  # pyright: ignore[reportArgumentType]
        print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB in {time.perf_counter() - start:.1f} s", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # checked below: argparse's `choices` with nargs="*" rejects the empty list on this Python
    p.add_argument("models", nargs="*", help=f"default: all ({', '.join(MODELS)})")
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    p.add_argument("--exporters", nargs="+", default=list(EXPORTERS), choices=EXPORTERS)
    args = p.parse_args()
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        p.error(f"unknown model {unknown[0]!r} (choose from {', '.join(MODELS)})")
    args.models = args.models or list(MODELS)
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for name in args.models:
        (export_sequence if name in SEQUENCE else export)(name, args.out, args.exporters)


if __name__ == "__main__":
    main()
