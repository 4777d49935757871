"""Export the two torch classifiers the training tests train (`make models`; needs torch).

    python models/train_exports.py [--out test/train/data]

writes `torch_resnet_cnn.onnx` and `torch_transformer.onnx` (the TorchScript exporter, opset 17,
batch dimension dynamic, weights from `torch.manual_seed(0)`), committed as test data, so the
tests and `make bench` train torch-exported models without torch:

- `torch_resnet_cnn`: digits images [N, 1, 8, 8] -> conv-BN-ReLU stem (16) -> one residual block
  (conv-BN-ReLU-conv-BN, + skip, ReLU) -> strided conv-BN-ReLU (32, /2) -> global average pool ->
  Linear -> 10 logits (exported in eval mode, without folding BatchNorm into the convolutions:
  BatchNormalization with running statistics, which training replaces by batch statistics);
- `torch_transformer`: digits [N, 8, 8], the 8 rows of a digit as 8 tokens -> Linear embedding
  (32) + learnt positions -> `nn.TransformerEncoderLayer` (2 heads, feed-forward 64, GELU,
  dropout 0.1, batch first) -> LayerNorm -> mean over tokens -> Linear -> 10 logits (exported in
  training mode so the Dropout nodes stay: `ascend-train` applies them in training only).

The files are byte-for-byte reproducible for one torch version; `test/train/test_torch_exports.py`
checks that the interpreter runs them as onnxruntime does and trains them.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import torch
from torch import nn

OUT = Path(__file__).resolve().parent.parent / "test" / "train" / "data"
OPSET = 17


class ResNetCNN(nn.Module):
    def __init__(self, width: int = 16, classes: int = 10) -> None:
        super().__init__()

        def conv_bn(cin: int, cout: int, stride: int = 1) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)]

        self.stem = nn.Sequential(*conv_bn(1, width), nn.ReLU())
        self.block = nn.Sequential(*conv_bn(width, width), nn.ReLU(), *conv_bn(width, width))
        self.down = nn.Sequential(*conv_bn(width, 2 * width, stride=2), nn.ReLU())
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        h = self.stem(image)
        h = torch.relu(h + self.block(h))
        return self.fc(self.down(h).mean(dim=(2, 3)))


class Transformer(nn.Module):
    def __init__(self, tokens: int = 8, features: int = 8, dim: int = 32, classes: int = 10) -> None:
        super().__init__()
        self.embed = nn.Linear(features, dim)
        self.pos = nn.Parameter(0.1 * torch.randn(tokens, dim))
        self.encoder = nn.TransformerEncoderLayer(dim, 2, 2 * dim, dropout=0.1, activation="gelu", batch_first=True)
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.norm(self.encoder(self.embed(x) + self.pos)).mean(dim=1))


def export(model: nn.Module, name: str, example: torch.Tensor, out: Path, training: bool) -> Path:
    path = out / f"{name}.onnx"
    # the top module in training mode: the exporter then merges initializers only where they are one
    # tensor (in eval mode it merges equal values: every BatchNorm's ones and zeros would become one
    # parameter, tied to the running statistics); BatchNorm itself in eval mode (inference BatchNormalization)
    model.train()
    for m in model.modules():
        if m is not model and (not training or isinstance(m, nn.BatchNorm2d)):
            m.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy exporter's deprecation and training-mode notes
        torch.onnx.export(
            model,
            (example,),
            str(path),
            input_names=["x"],
            output_names=["logits"],
            dynamic_axes={"x": {0: "N"}, "logits": {0: "N"}},
            opset_version=OPSET,
            training=torch.onnx.TrainingMode.PRESERVE,  # EVAL would fold BatchNorm into the convolutions
            dynamo=False,
        )
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    cnn = ResNetCNN()
    transformer = Transformer()
    for model, name, example, training in (
        (cnn, "torch_resnet_cnn", torch.randn(2, 1, 8, 8), False),
        (transformer, "torch_transformer", torch.randn(2, 8, 8), True),
    ):
        path = export(model, name, example, args.out, training)
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
