"""Real architectures trained in fp32 and in mixed precision with dynamic loss scaling: a
ResNet-style CNN with BatchNorm and a small transformer encoder classifier, both ONNX models
made here with onnx.helper and trained through `OnnxModel` (the path `ascend-train --model
x.onnx` takes), on digits and on the breast-cancer set (`ascend_mp.train.data`).

    python benchmarks/train_archs.py [--seeds 0 1 2] [--epochs N] [--only cnn-digits ...]

prints each run's test accuracy per seed, the means and the fp32 - mixed gap in points (the
target: within 0.5 points, mean of 3 seeds). `bench_archs` is `make bench`'s `archs` section:
step time and training activations, mixed / fp32, on both architectures (batch 32), and the
transformer's step against PyTorch CPU eager (1 thread) when the torch venv exists.
`bench_torch_exports` is the `train-torch` section: the torch-exported CNN and transformer
(test/train/data, `models/train_exports.py`) trained by the `ascend-train` command, fp32 vs mixed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

F32 = np.float32
TORCH_PYTHON = Path.home() / ".cache" / "ascend-mp" / "venvs" / "torch" / "bin" / "python"
"""The torch venv `make conformance` / `make models` make; the PyTorch comparison runs there."""


def _finish(nodes: list[Any], inputs: list[Any], inits: dict[str, np.ndarray], name: str) -> onnx.ModelProto:
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", None])]
    init = [numpy_helper.from_array(np.asarray(a), n) for n, a in inits.items()]
    model = helper.make_model(
        helper.make_graph(nodes, name, inputs, outs, init), opset_imports=[helper.make_opsetid("", 17)]
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _he(r: np.random.Generator, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    return r.normal(0, math.sqrt(2.0 / fan_in), shape).astype(F32)


def resnet_cnn(channels: int = 1, size: int = 8, classes: int = 10, width: int = 16, seed: int = 0) -> onnx.ModelProto:
    """image [N, C, H, W] -> Conv 3x3 (width) -> BN -> Relu -> residual block (Conv -> BN -> Relu ->
    Conv -> BN, + skip, Relu) -> strided Conv 3x3 /2 (2 width) -> BN -> Relu -> GlobalAveragePool
    -> Flatten -> Gemm -> logits."""
    r = np.random.default_rng(seed)
    inits: dict[str, np.ndarray] = {}
    nodes: list[Any] = []

    def conv_bn(x: str, out: str, cin: int, cout: int, stride: int = 1, relu: bool = True) -> str:
        inits[f"{out}_w"] = _he(r, (cout, cin, 3, 3), 9 * cin)
        for k, v in (("scale", 1.0), ("bias", 0.0), ("mean", 0.0), ("var", 1.0)):
            inits[f"{out}_{k}"] = np.full(cout, v, F32)
        nodes.append(helper.make_node("Conv", [x, f"{out}_w"], [f"{out}_c"], name=f"{out}_conv", pads=[1, 1, 1, 1],
                                      strides=[stride, stride]))  # fmt: skip
        bn = [f"{out}_c", *(f"{out}_{k}" for k in ("scale", "bias", "mean", "var"))]
        nodes.append(helper.make_node("BatchNormalization", bn, [f"{out}_b"], name=f"{out}_bn", momentum=0.9))
        if not relu:
            return f"{out}_b"
        nodes.append(helper.make_node("Relu", [f"{out}_b"], [out], name=f"{out}_relu"))
        return out

    h = conv_bn("image", "stem", channels, width)
    b = conv_bn(h, "block_a", width, width)
    b = conv_bn(b, "block_b", width, width, relu=False)
    nodes.append(helper.make_node("Add", [h, b], ["res"], name="residual"))
    nodes.append(helper.make_node("Relu", ["res"], ["res_r"], name="residual_relu"))
    d = conv_bn("res_r", "down", width, 2 * width, stride=2)
    nodes.append(helper.make_node("GlobalAveragePool", [d], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    inits["fc_w"] = (r.normal(0, 1 / math.sqrt(2 * width), (classes, 2 * width))).astype(F32)
    inits["fc_b"] = np.zeros(classes, F32)
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1))
    x = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", channels, size, size])
    return _finish(nodes, [x], inits, "resnet_cnn")


def transformer(
    tokens: int = 8, features: int = 8, classes: int = 10, dim: int = 32, heads: int = 2, seed: int = 0
) -> onnx.ModelProto:
    """x [N, tokens * features] -> Reshape [N, T, F] -> token embedding (MatMul [F, dim]) + learnt
    position embedding -> one pre-norm encoder block (LayerNorm -> multi-head self-attention with
    scaled dot products and Softmax -> output projection -> + residual; LayerNorm -> MLP dim-2dim-dim
    with GELU (Erf form) -> + residual) -> LayerNorm -> mean over tokens -> Gemm -> logits."""
    r = np.random.default_rng(seed)
    dh = dim // heads
    inits: dict[str, np.ndarray] = {
        "in_shape": np.array([0, tokens, features], np.int64),
        "split_heads": np.array([0, tokens, heads, dh], np.int64),
        "merge_heads": np.array([0, tokens, dim], np.int64),
        "w_embed": r.normal(0, 1 / math.sqrt(features), (features, dim)).astype(F32),
        "pos": r.normal(0, 0.1, (tokens, dim)).astype(F32),
    }
    # the scalar constants are Constant nodes, as exporters write them: as initializers they would
    # be trained (float initializers are the parameters), which no transformer does
    constants = {"scale": 1 / math.sqrt(dh), "rsqrt2": 1 / math.sqrt(2), "one": 1.0, "half": 0.5}
    for n in ("ln1", "ln2", "ln3"):
        inits[f"{n}_g"], inits[f"{n}_b"] = np.ones(dim, F32), np.zeros(dim, F32)
    for n in ("wq", "wk", "wv", "wo"):
        inits[n] = r.normal(0, 1 / math.sqrt(dim), (dim, dim)).astype(F32)
    inits["w1"] = r.normal(0, 1 / math.sqrt(dim), (dim, 2 * dim)).astype(F32)
    inits["b1"] = np.zeros(2 * dim, F32)
    inits["w2"] = r.normal(0, 1 / math.sqrt(2 * dim), (2 * dim, dim)).astype(F32)
    inits["b2"] = np.zeros(dim, F32)
    inits["fc_w"] = r.normal(0, 1 / math.sqrt(dim), (dim, classes)).astype(F32)
    inits["fc_b"] = np.zeros(classes, F32)
    n = helper.make_node
    nodes = [
        *(
            n("Constant", [], [k], name=k, value=numpy_helper.from_array(np.array(v, F32)))
            for k, v in constants.items()
        ),
        n("Reshape", ["x", "in_shape"], ["t"], name="tokens"),
        n("MatMul", ["t", "w_embed"], ["e"], name="embed"),
        n("Add", ["e", "pos"], ["h0"], name="position"),
        n("LayerNormalization", ["h0", "ln1_g", "ln1_b"], ["a0"], name="ln1", axis=-1),
    ]
    for p in ("q", "k", "v"):
        nodes += [
            n("MatMul", ["a0", f"w{p}"], [f"{p}_"], name=f"proj_{p}"),
            n("Reshape", [f"{p}_", "split_heads"], [f"{p}_s"], name=f"split_{p}"),
            n("Transpose", [f"{p}_s"], [f"{p}_h"], name=f"heads_{p}", perm=[0, 2, 1, 3] if p != "k" else [0, 2, 3, 1]),
        ]
    nodes += [
        n("MatMul", ["q_h", "k_h"], ["qk"], name="scores"),
        n("Mul", ["qk", "scale"], ["scores_s"], name="scale_scores"),
        n("Softmax", ["scores_s"], ["attn"], name="softmax", axis=-1),
        n("MatMul", ["attn", "v_h"], ["ctx_h"], name="context"),
        n("Transpose", ["ctx_h"], ["ctx_t"], name="merge_t", perm=[0, 2, 1, 3]),
        n("Reshape", ["ctx_t", "merge_heads"], ["ctx"], name="merge"),
        n("MatMul", ["ctx", "wo"], ["o"], name="out_proj"),
        n("Add", ["h0", "o"], ["h1"], name="residual1"),
        n("LayerNormalization", ["h1", "ln2_g", "ln2_b"], ["a1"], name="ln2", axis=-1),
        n("MatMul", ["a1", "w1"], ["m1"], name="mlp1"),
        n("Add", ["m1", "b1"], ["m1b"], name="mlp1_bias"),
        n("Mul", ["m1b", "rsqrt2"], ["g_s"], name="gelu_scale"),
        n("Erf", ["g_s"], ["g_e"], name="gelu_erf"),
        n("Add", ["g_e", "one"], ["g_e1"], name="gelu_add"),
        n("Mul", ["m1b", "half"], ["g_h"], name="gelu_half"),
        n("Mul", ["g_h", "g_e1"], ["g"], name="gelu"),
        n("MatMul", ["g", "w2"], ["m2"], name="mlp2"),
        n("Add", ["m2", "b2"], ["m2b"], name="mlp2_bias"),
        n("Add", ["h1", "m2b"], ["h2"], name="residual2"),
        n("LayerNormalization", ["h2", "ln3_g", "ln3_b"], ["a2"], name="ln3", axis=-1),
        n("ReduceMean", ["a2"], ["pooled"], name="pool", axes=[1], keepdims=0),
        n("Gemm", ["pooled", "fc_w", "fc_b"], ["logits"], name="fc"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", tokens * features])
    return _finish(nodes, [x], inits, "transformer")


# --------------------------------------------------------------------------------------
# The runs: (architecture, data set) -> model maker, data, training settings
# --------------------------------------------------------------------------------------


def _digits(image: bool) -> Any:
    from ascend_mp.train.data import load_digits

    return load_digits(image=image)


def _cancer() -> Any:
    from ascend_mp.train.data import load_breast_cancer

    return load_breast_cancer()


RUNS: dict[str, tuple[Callable[[int], onnx.ModelProto], Callable[[], Any], dict[str, Any]]] = {
    "cnn-digits": (lambda s: resnet_cnn(seed=s), lambda: _digits(True), {"epochs": 10, "lr": 0.05}),
    "transformer-digits": (lambda s: transformer(seed=s), lambda: _digits(False), {"epochs": 30, "lr": 0.05}),
    "transformer-breast_cancer": (
        lambda s: transformer(tokens=30, features=1, classes=2, dim=16, seed=s),
        _cancer,
        {"epochs": 30, "lr": 0.02},
    ),
}
"""Each run's model (weights seeded), data and settings (momentum SGD, batch 32)."""


def train_once(
    name: str, seed: int, mixed: bool, epochs: int | None = None, subset: int | None = None, tmp: Path | None = None
) -> Any:
    """One training run of `name` with `seed` (the weights' and the shuffle's), fp32 or mixed."""
    import tempfile

    from ascend_mp.train import TrainConfig, train
    from ascend_mp.train.data import Dataset
    from ascend_mp.train.onnx_model import OnnxModel

    make, load, settings = RUNS[name]
    data = load()
    if subset is not None:
        data = Dataset(data.x_train[:subset], data.y_train[:subset], data.x_test, data.y_test, data.num_classes)
    with tempfile.TemporaryDirectory() as d:
        path = Path(tmp or d) / f"{name}-{seed}.onnx"
        onnx.save(make(seed), path)
        model = OnnxModel(path, batch=32, example_shape=data.x_train.shape[1:])
        cfg = TrainConfig(
            precision_mode="allow_mix_precision" if mixed else None,
            loss_scale="dynamic" if mixed else "none",
            epochs=epochs or settings["epochs"],
            batch=32,
            lr=settings["lr"],
            seed=seed,
        )
        return train(cfg, progress=False, data=data, model=model)  # pyright: ignore[reportArgumentType]  # an OnnxModel stands in for a Sequential


def compare(name: str, seeds: tuple[int, ...], epochs: int | None = None, subset: int | None = None) -> dict[str, Any]:
    """fp32 and mixed test accuracies per seed (fractions), their means and the gap in points."""
    runs = {
        label: [train_once(name, s, label == "mixed", epochs, subset) for s in seeds] for label in ("fp32", "mixed")
    }
    acc = {label: [r.test_accuracy for r in rs] for label, rs in runs.items()}
    means = {label: float(np.mean(a)) for label, a in acc.items()}
    return {
        "run": name,
        "seeds": list(seeds),
        "epochs": epochs or RUNS[name][2]["epochs"],
        "test_examples": None,
        "accuracy": acc,
        "mean": means,
        "gap_pt": 100 * (means["fp32"] - means["mixed"]),
        "skipped_steps": [r.skipped for r in runs["mixed"]],
        "final_scale": [r.final_scale for r in runs["mixed"]],
        "precision": runs["mixed"][0].precision,
    }


# --------------------------------------------------------------------------------------
# make bench: step time, activations, PyTorch
# --------------------------------------------------------------------------------------


def _step(name: str, mixed: bool, tmp: Path) -> tuple[Any, list[Any]]:
    """(compiled, train_step arguments) of `name` at batch 32 on a batch of its data."""
    from ascend_mp.passes.loss_scale import initial_state
    from ascend_mp.train import TrainConfig, compile_training
    from ascend_mp.train.onnx_model import OnnxModel

    make, load, settings = RUNS[name]
    data = load()
    path = tmp / f"{name}.onnx"
    onnx.save(make(0), path)
    model = OnnxModel(path, batch=32, example_shape=data.x_train.shape[1:])
    cfg = TrainConfig(
        precision_mode="allow_mix_precision" if mixed else None,
        loss_scale="dynamic" if mixed else "none",
        batch=32,
        lr=settings["lr"],
    )
    compiled = compile_training(cfg, model)  # pyright: ignore[reportArgumentType]  # an OnnxModel stands in for a Sequential
    state = initial_state(compiled.step_fn, model.init_params())
    x, y = data.x_train[:32], data.onehot(data.y_train[:32])
    return compiled, [*state.args(), x, y, state.loss_scale, state.good_steps, state.step]


TORCH_STEP = r"""
import math, sys, time, torch
torch.set_num_threads(1)
torch.manual_seed(0)
T, F, D, H, C, B = 8, 8, 32, 2, 10, 32
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(F, D, bias=False); self.pos = torch.nn.Parameter(torch.zeros(T, D))
        self.ln1, self.ln2, self.ln3 = (torch.nn.LayerNorm(D) for _ in range(3))
        self.q, self.k, self.v, self.o = (torch.nn.Linear(D, D, bias=False) for _ in range(4))
        self.m1, self.m2 = torch.nn.Linear(D, 2 * D), torch.nn.Linear(2 * D, D); self.fc = torch.nn.Linear(D, C)
    def forward(self, x):
        h0 = self.embed(x.view(B, T, F)) + self.pos
        a = self.ln1(h0)
        q, k, v = (f(a).view(B, T, H, D // H).transpose(1, 2) for f in (self.q, self.k, self.v))
        attn = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D // H), -1)
        h1 = h0 + self.o((attn @ v).transpose(1, 2).reshape(B, T, D))
        h2 = h1 + self.m2(torch.nn.functional.gelu(self.m1(self.ln2(h1))))
        return self.fc(self.ln3(h2).mean(1))
model = Block(); opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x, y = torch.randn(B, T * F), torch.randint(0, C, (B,))
def step():
    opt.zero_grad(); loss = torch.nn.functional.cross_entropy(model(x), y); loss.backward(); opt.step()
for _ in range(20): step()
times = []
for _ in range(int(sys.argv[1])):
    t = time.process_time(); [step() for _ in range(10)]; times.append((time.process_time() - t) / 10)
times.sort(); print(times[len(times) // 2])
"""


def torch_step_seconds(rounds: int) -> float | None:
    """PyTorch CPU eager (1 thread): median seconds of one training step of the same transformer
    (batch 32, SGD with momentum), or None without the torch venv."""
    if not TORCH_PYTHON.exists():
        return None
    out = subprocess.run([str(TORCH_PYTHON), "-c", TORCH_STEP, str(rounds)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def bench_archs(quick: bool, report: Callable[[Any], None], Row: Any) -> None:
    """`make bench --only archs`: mixed / fp32 step time and activations on the ResNet-style CNN and
    the transformer (batch 32); the transformer's step against PyTorch eager."""
    import tempfile

    from ascend_mp.train.trainer import donating_program
    from benchmarks.run import interleaved, median_ratio, timed

    reps, rounds = (3, 5) if quick else (5, 15)
    print("archs: ResNet-style CNN (BatchNorm) and transformer encoder, batch 32, momentum; fp32 vs mixed + dynamic")
    with tempfile.TemporaryDirectory() as d:
        step_seconds: dict[str, float] = {}
        for name, label in (("cnn-digits", "ResNet-style CNN"), ("transformer-digits", "transformer")):
            steps = {m: _step(name, m == "mixed", Path(d)) for m in ("fp32", "mixed")}
            times = interleaved(
                {m: timed(lambda c=c, a=a: c.program.run("train_step", *a), reps) for m, (c, a) in steps.items()},
                rounds,
            )
            step_seconds[name] = float(np.median(times["mixed"]))
            fp32_ms, mixed_ms = 1000 * np.median(times["fp32"]), 1000 * np.median(times["mixed"])
            report(Row(f"{label} training step: mixed / fp32 time", median_ratio(times["mixed"], times["fp32"]), "x",
                       1.3, note=f"({fp32_ms:.1f} -> {mixed_ms:.1f} ms)"))  # fmt: skip
            peaks = {}
            for m, (c, a) in steps.items():
                program = donating_program(c)
                program.run("train_step", *[np.array(v, copy=True) for v in a], track_memory=True)
                peaks[m] = program.peak_activation_bytes
            report(Row(f"{label} training step: mixed / fp32 activations", peaks["mixed"] / peaks["fp32"], "x", 0.55,
                       note=f"({peaks['fp32']} -> {peaks['mixed']} bytes)"))  # fmt: skip
        eager = torch_step_seconds(5 if quick else 11)
        if eager is None:
            print("  transformer step vs PyTorch eager: skipped: no torch venv (make conformance)")
        else:
            ratio = step_seconds["transformer-digits"] / eager
            report(Row("transformer training step: interpreter (mixed) / PyTorch eager (1 thread)", ratio, "x", 3.0,
                       note=f"({1000 * eager:.2f} ms in PyTorch)"))  # fmt: skip


# --------------------------------------------------------------------------------------
# make bench --only train-torch: the torch exports, through the ascend-train command line
# --------------------------------------------------------------------------------------

TORCH_EXPORTS = Path(__file__).resolve().parent.parent / "test" / "train" / "data"
"""`models/train_exports.py` writes them (with torch); committed, so this needs no torch."""
TORCH_RUNS = {"ResNet-style CNN": ("torch_resnet_cnn.onnx", (1, 8, 8)), "TransformerEncoderLayer": ("torch_transformer.onnx", (8, 8))}  # fmt: skip
"""label -> (file, example shape: a digit as a 1x8x8 image, or its 8 rows as 8 tokens)."""


def ascend_train_accuracy(model: Path, data: Path, val: Path, seed: int, mixed: bool, epochs: int) -> float:
    """`ascend-train --model model --data data --val val` with defaults but the epochs and seed:
    fp32 (`--precision_mode none --loss-scale none`) or allow_mix_precision with dynamic loss
    scaling; the test accuracy (%) it reports."""
    import re

    mode = (
        ["--precision_mode", "allow_mix_precision"] if mixed else ["--precision_mode", "none", "--loss-scale", "none"]
    )
    cmd = [str(Path(sys.executable).parent / "ascend-train"), "--model", str(model), "--data", str(data), "--val", str(val),
           "--epochs", str(epochs), "--seed", str(seed), "-q", *mode]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(re.findall(r"test accuracy ([\d.]+)%", out)[-1])


def bench_torch_exports(quick: bool, report: Callable[[Any], None], Row: Any) -> None:
    """`make bench --only train-torch`: the torch-exported CNN and transformer trained on digits by
    `ascend-train --model x.onnx --data train.npz --val test.npz --epochs 10` (momentum 0.02,
    batch 32; the seed shuffles and draws the dropout masks, the weights are the exported ones),
    fp32 vs allow_mix_precision with dynamic loss scaling, mean of seeds 0, 1, 2 (seed 0, 2
    epochs with --quick): the gap's budget is 0.5 points."""
    import tempfile

    from ascend_mp.train.data import load_digits

    seeds, epochs = ((0,), 2) if quick else ((0, 1, 2), 10)
    digits = load_digits(image=True)
    print(
        f"train-torch: torch exports on digits via ascend-train, {epochs} epochs, seeds {list(seeds)}; fp32 vs mixed + dynamic"
    )
    with tempfile.TemporaryDirectory() as d:
        for label, (file, shape) in TORCH_RUNS.items():
            data, val = Path(d) / "train.npz", Path(d) / "val.npz"
            np.savez(data, x=digits.x_train.reshape(-1, *shape).astype(F32), y=digits.y_train)
            np.savez(val, x=digits.x_test.reshape(-1, *shape).astype(F32), y=digits.y_test)
            acc = {
                m: [ascend_train_accuracy(TORCH_EXPORTS / file, data, val, s, m == "mixed", epochs) for s in seeds]
                for m in ("fp32", "mixed")
            }
            per_seed = "; ".join(f"{m} {' '.join(f'{a:.2f}' for a in v)}" for m, v in acc.items())
            means = {m: float(np.mean(v)) for m, v in acc.items()}
            report(Row(f"torch {label} on digits: test accuracy, fp32", means["fp32"], "%", note=f"({per_seed})"))
            report(Row(f"torch {label} on digits: test accuracy, mixed", means["mixed"], "%"))
            report(
                Row(f"torch {label} on digits: |fp32 - mixed| accuracy", abs(means["fp32"] - means["mixed"]), "pt", 0.5)
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, help="override each run's epochs")
    parser.add_argument("--only", nargs="*", choices=list(RUNS), help="these runs only")
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args()
    results = []
    for name in args.only or RUNS:
        result = compare(name, tuple(args.seeds), args.epochs)
        results.append(result)
        acc = {k: " ".join(f"{100 * a:.2f}" for a in v) for k, v in result["accuracy"].items()}
        print(f"{name} ({result['epochs']} epochs, {result['precision']}): fp32 {acc['fp32']} (mean {100 * result['mean']['fp32']:.2f}); "
              f"mixed {acc['mixed']} (mean {100 * result['mean']['mixed']:.2f}); gap {result['gap_pt']:+.2f} pt; "
              f"skipped steps {result['skipped_steps']}, final scales {result['final_scale']}", flush=True)  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
