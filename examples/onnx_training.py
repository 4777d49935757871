"""Train an ONNX classifier on digits in fp32 and under allow_mix_precision, export it, check it in onnxruntime.

    python examples/onnx_training.py              # 3 seeds x 2 modes, 15 epochs (a few minutes)
    python examples/onnx_training.py --quick      # 1 seed, 3 epochs

The model is built here with onnx.helper, as an exporter would write it: Conv 3x3 (16) ->
BatchNormalization -> Relu -> MaxPool 2x2 -> depthwise Conv 3x3 (pads 1) -> Conv 1x1 (32) ->
BatchNormalization -> Relu -> GlobalAveragePool -> Flatten -> Gemm (transB) -> logits, He-normal
weights from the seed. It trains through `ascend_mp.train.onnx_model.OnnxModel` (what
`ascend-train --model FILE.onnx --data FILE.npz` does) with Adam, is written back with
`save_onnx`, and onnxruntime runs the result on the validation set: its accuracy, and the largest
difference between its logits and the interpreter's fp32 `@predict`, are printed.
Needs the `onnx` and `onnxruntime` packages.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from ascend_mp.interpreter import Program
from ascend_mp.train import TrainConfig, load_digits, train
from ascend_mp.train.onnx_model import OnnxModel


def digits_cnn(seed: int) -> object:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    r = np.random.default_rng(seed)

    def he(*shape: int) -> np.ndarray:
        fan_in = int(np.prod(shape[1:]))
        return r.normal(0, np.sqrt(2 / fan_in), shape).astype(np.float32)

    def bn(c: int, prefix: str) -> dict[str, np.ndarray]:
        f = np.float32
        return {
            f"{prefix}_scale": np.ones(c, f),
            f"{prefix}_bias": np.zeros(c, f),
            f"{prefix}_mean": np.zeros(c, f),
            f"{prefix}_var": np.ones(c, f),
        }

    inits = {"c1_w": he(16, 1, 3, 3), **bn(16, "bn1"), "dw_w": he(16, 1, 3, 3), "pw_w": he(32, 16, 1, 1), **bn(32, "bn2"),
             "fc_w": (r.normal(0, np.sqrt(1 / 32), (10, 32))).astype(np.float32), "fc_b": np.zeros(10, np.float32)}  # fmt: skip
    nodes = [
        helper.make_node("Conv", ["image", "c1_w"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node(
            "BatchNormalization", ["c1", "bn1_scale", "bn1_bias", "bn1_mean", "bn1_var"], ["b1"], name="bn1"
        ),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "dw_w"], ["d1"], name="depthwise", group=16, pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["d1", "pw_w"], ["c2"], name="pointwise"),
        helper.make_node(
            "BatchNormalization", ["c2", "bn2_scale", "bn2_bias", "bn2_mean", "bn2_var"], ["b2"], name="bn2"
        ),
        helper.make_node("Relu", ["b2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "digits_cnn", [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], [numpy_helper.from_array(a, n) for n, a in inits.items()],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def onnxruntime_logits(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as rt

    session = rt.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"image": x})[0]  # pyright: ignore[reportReturnType]  # the model's one output is a dense tensor


def run(seed: int, mode: str | None, epochs: int, folder: Path) -> dict[str, float]:
    import onnx

    data = load_digits(image=True)
    path = folder / f"digits_cnn_{seed}.onnx"
    onnx.save(digits_cnn(seed), path)  # pyright: ignore[reportArgumentType]  # digits_cnn returns a ModelProto (typed object: this module imports onnx only when run)
    batch = 32
    model = OnnxModel(path, batch=batch, example_shape=(1, 8, 8))
    cfg = TrainConfig(
        precision_mode=mode,
        loss_scale="dynamic" if mode else "none",
        optimizer="adam",
        lr=0.003,
        epochs=epochs,
        batch=batch,
        seed=seed,
    )
    result = train(cfg, progress=False, model=model, data=data)  # pyright: ignore[reportArgumentType]  # train takes an OnnxModel as well; its signature names only Sequential
    trained = folder / f"trained_{seed}_{mode or 'fp32'}.onnx"
    model.save_onnx(result.params, trained)
    n = len(data.x_test) // batch * batch
    theirs = onnxruntime_logits(trained, data.x_test[:n])
    predict = Program.from_module(model.forward_module(batch))
    ours = np.concatenate(
        [predict.run("predict", *result.params, data.x_test[i : i + batch])[0] for i in range(0, n, batch)]
    )
    return {
        "accuracy": result.test_accuracy,
        "onnxruntime_accuracy": float(np.mean(theirs.argmax(1) == data.y_test[:n])),
        "max_logit_difference": float(np.abs(theirs - ours).max()),
        "step_ms": 1000 * result.step_seconds,
        "precision": result.precision,  # pyright: ignore[reportReturnType]  # a label among the floats; the caller reads it only to print
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])  # pyright: ignore[reportOptionalMemberAccess]  # this module has a docstring
    p.add_argument("--quick", action="store_true", help="one seed, 3 epochs")
    p.add_argument("--epochs", type=int, default=15)
    args = p.parse_args()
    seeds, epochs = ((0,), 3) if args.quick else ((0, 1, 2), args.epochs)
    rows: dict[str, list[dict[str, float]]] = {"fp32": [], "allow_mix_precision + dynamic": []}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            for label, mode in (("fp32", None), ("allow_mix_precision + dynamic", "allow_mix_precision")):
                r = run(seed, mode, epochs, Path(tmp))
                rows[label].append(r)
                print(f"seed {seed} {label:<30} {r['precision']}: accuracy {100 * r['accuracy']:.2f}% "
                      f"(onnxruntime on the exported model: {100 * r['onnxruntime_accuracy']:.2f}%, "
                      f"max |logit difference| {r['max_logit_difference']:.2e}), step {r['step_ms']:.1f} ms", flush=True)  # fmt: skip
    means = {
        label: {
            k: float(np.mean([r[k] for r in rs]))
            for k in ("accuracy", "onnxruntime_accuracy", "max_logit_difference", "step_ms")
        }
        for label, rs in rows.items()
    }
    print(json.dumps({"seeds": list(seeds), "epochs": epochs, "mean": means}, indent=1))


if __name__ == "__main__":
    main()
