"""Write the small real exports committed as test fixtures (test/fixtures/onnx, under 5 MB in total).

    python models/make_fixtures.py      # needs the `models` extra (torch, onnxscript)

MLP and LeNet-5 from both torch exporters (export.py), with `<name>.npz` holding the
seeded input (`input`) and onnxruntime's CPU fp32 outputs for each export
(`<exporter>`), so `make test` checks real exports on any machine without torch.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from export import EXPORTERS, export  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "onnx")


def main() -> None:
    import onnxruntime as ort

    os.makedirs(OUT, exist_ok=True)
    for name in ("mlp", "lenet"):
        export(name, OUT, list(EXPORTERS))
        inputs = os.path.join(OUT, f"{name}.inputs.npz")
        x = np.load(inputs)["input"]
        os.remove(inputs)
        refs: dict[str, np.ndarray] = {"input": x}
        for exporter in EXPORTERS:
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            session = ort.InferenceSession(
                os.path.join(OUT, f"{name}.{exporter}.onnx"), options, providers=["CPUExecutionProvider"]
            )
            refs[exporter] = session.run(None, {session.get_inputs()[0].name: x})[0]
        np.savez(os.path.join(OUT, f"{name}.npz"), **refs)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"{OUT}: {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
