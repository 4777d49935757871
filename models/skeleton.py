"""Skeletons of the zoo's exports: the graphs of `make models` without their weights, small enough to commit.

    python models/skeleton.py                    # models/out -> models/zoo (`make models` runs it)
    python models/skeleton.py --src DIR --dst DIR

A skeleton (`<name>.<exporter>.onnx` in models/zoo) is the export itself (graph, opset, inputs,
outputs, node attributes; every integer tensor, every 1-D tensor such as a bias or a BatchNorm parameter,
every float tensor of at most `KEEP` elements and every tensor with a non-finite element, byte for
byte) with two things left out. The nodes' metadata and doc strings (the dynamo exporter's stack traces,
which name the exporting machine's files; the importer reads none of them). And each larger float
tensor of two or more dimensions, an initializer or a `Constant`'s value: it keeps its name, type and
shape, and in `raw_data` float32 [rows, 4] statistics, per row of its first axis (per tensor when the
rows are shorter than `ROW`): mean, standard deviation, minimum, maximum; a Conv's weight then also
float32 [channels, 2], the mean and standard deviation of each of the Conv's output channels on the
model's inputs. `MARK` and a JSON record (`rows`, `out`: the channel count) in its `doc_string` mark it.
`<name>.inputs.npz` holds the model's inputs: an array of at most `KEEP_INPUT` bytes exactly, a larger
float array as `<input>__stats`, `<input>__shape` and `<input>__dtype`.

`materialise` draws every marked tensor again, per row with the recorded mean and standard deviation:
uniform where the row's range is that of a uniform sample (torch's default init), else normal; clipped
to [min, max]; from a generator seeded by the tensor's name, so the same skeleton always gives the same
model. Then `calibrate` gives each Conv's output channels the export's mean and std again (onnxruntime).
The redrawn model runs the same graph on weights of the same scale and spread as the export's (torch's
random init), not the same weights: checks against onnxruntime and the float64 interpreter hold for
any weights, so the zoo tests run on the skeletons where the exports are absent (CI, which has no
torch). Needs numpy, onnx and onnxruntime (the test extra), not torch.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

Array = np.ndarray[Any, Any]

KEEP = 256
"""Float tensors of at most this many elements are kept exactly (biases of small layers, scales, masks)."""
ROW = 16
"""Statistics per row of the first axis when a row has at least this many elements, else per tensor."""
KEEP_INPUT = 65536
"""Input arrays of at most this many bytes are kept exactly (token ids, masks, sequences); larger: statistics."""
MARK = "ascend-mp skeleton: "
"""`doc_string` prefix of a tensor whose `raw_data` holds statistics (a JSON record after it)."""
SEED = 0
UNIFORM = 3.6
"""A row whose range is at most this many standard deviations is redrawn uniform (a uniform sample spans 2*sqrt(3)
= 3.46 of them; a normal sample of more than ten elements spans more)."""
FLOATS = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16}


def _rows(shape: tuple[int, ...]) -> int:
    n = int(np.prod(shape))
    return shape[0] if len(shape) >= 2 and shape[0] > 0 and n // shape[0] >= ROW else 1


def stats(a: Array) -> Array:
    """float32 [rows, 4]: mean, std, min, max of each row of `a` (see `_rows`)."""
    r = np.asarray(a, np.float64).reshape(_rows(a.shape), -1)
    return np.stack([r.mean(1), r.std(1), r.min(1), r.max(1)], 1).astype(np.float32)


def redraw(s: Array, shape: tuple[int, ...], dtype: np.dtype[Any], key: str) -> Array:
    """An array of `shape` drawn row by row from statistics `s`, seeded by `key`: uniform with the row's mean and
    std where the row's range is that of a uniform sample (torch's default init), else normal; clipped to the
    row's [min, max]."""
    rng = np.random.default_rng([SEED, zlib.crc32(key.encode())])
    s64 = s.astype(np.float64)
    mean, std, lo, hi = (s64[:, i : i + 1] for i in range(4))
    rows = s64.shape[0]
    a = rng.standard_normal((rows, int(np.prod(shape)) // rows))
    flat = (hi - lo)[:, 0] <= UNIFORM * std[:, 0]
    if flat.any():
        a[flat] = rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), (int(flat.sum()), a.shape[1]))
    return np.clip(a * std + mean, lo, hi).astype(dtype).reshape(shape)


def _tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """Every initializer and `Constant` value of `graph` and its subgraphs."""
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                yield attr.t
            elif attr.type == onnx.AttributeProto.GRAPH:
                yield from _tensors(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from _tensors(g)


def _nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for g in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else attr.graphs:
                yield from _nodes(g)


def _redrawn(t: onnx.TensorProto) -> bool:
    """Whether `t` is a weight the skeleton keeps as statistics: float, at least 2-D, over KEEP elements."""
    return (
        t.data_type in FLOATS
        and len(t.dims) >= 2
        and int(np.prod(t.dims)) > KEEP
        and t.data_location != onnx.TensorProto.EXTERNAL
    )


def _convs(model: onnx.ModelProto, weights: set[str]) -> list[onnx.NodeProto]:
    """The top-level Conv nodes whose weight is in `weights`, in graph (topological) order."""
    return [n for n in model.graph.node if n.op_type == "Conv" and len(n.input) > 1 and n.input[1] in weights]


def _channel_stats(model: onnx.ModelProto, inputs: dict[str, Array], names: list[str]) -> dict[str, Array]:
    """float32 [channels, 2]: mean and std over every axis but 1 of each value in `names`, run by onnxruntime."""
    import onnxruntime as ort

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    have = {o.name for o in probe.graph.output}
    probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(n) for n in names if n not in have)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3  # (onnxruntime warns of every overridable initializer)
    session = ort.InferenceSession(probe.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {i.name: inputs[i.name] for i in session.get_inputs()}
    out = {}
    for name, y in zip(names, session.run(names, feed)):
        axes = tuple(i for i in range(y.ndim) if i != 1)
        out[name] = np.stack([y.mean(axes), y.std(axes)], 1).astype(np.float32)
    return out


def skeletonize(model: onnx.ModelProto, inputs: dict[str, Array] | None = None) -> int:
    """Replace each large float tensor of `model` by its statistics and drop the nodes' metadata and doc strings,
    in place; the number of tensors replaced. With the model's `inputs`, a Conv's redrawn weight also records the
    mean and std of each of the Conv's output channels on them (what `calibrate` restores)."""
    for node in _nodes(model.graph):
        del node.metadata_props[:]
        node.doc_string = ""
    weights = {t.name for t in _tensors(model.graph) if _redrawn(t)}
    convs = _convs(model, weights)
    outputs = _channel_stats(model, inputs, [n.output[0] for n in convs]) if inputs is not None and convs else {}
    conv_out = {n.input[1]: outputs[n.output[0]] for n in convs if n.output[0] in outputs}
    count = 0
    for t in _tensors(model.graph):
        if not _redrawn(t):
            continue
        a = numpy_helper.to_array(t)
        if not np.isfinite(a).all():
            continue
        s = stats(a)
        name, dims, dtype = t.name, list(t.dims), t.data_type
        record: dict[str, int] = {"rows": int(s.shape[0])}
        out = conv_out.get(name)
        if out is not None:
            record["out"] = int(out.shape[0])
        t.Clear()
        t.name, t.data_type = name, dtype
        t.dims.extend(dims)
        t.raw_data = s.tobytes() + (out.tobytes() if out is not None else b"")
        t.doc_string = MARK + json.dumps(record)
        count += 1
    return count


def materialise_model(model: onnx.ModelProto, inputs: dict[str, Array] | None = None) -> int:
    """Redraw every marked tensor of `model` in place, then (given the model's `inputs`) `calibrate` its Convs;
    the number of tensors redrawn."""
    count = 0
    targets: dict[str, Array] = {}
    for i, t in enumerate(_tensors(model.graph)):
        if not t.doc_string.startswith(MARK):
            continue
        record = json.loads(t.doc_string[len(MARK) :])
        rows = record["rows"]
        data = np.frombuffer(t.raw_data, np.float32)
        s = data[: rows * 4].reshape(rows, 4)
        if "out" in record:
            targets[t.name] = data[rows * 4 :].reshape(record["out"], 2)
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
        a = redraw(s, tuple(t.dims), dtype, t.name or f"#{i}")
        t.raw_data = a.tobytes()
        t.doc_string = ""
        count += 1
    if inputs is not None and targets:
        calibrate(model, inputs, targets)
    return count


def calibrate(model: onnx.ModelProto, inputs: dict[str, Array], targets: dict[str, Array]) -> None:
    """Give each Conv whose weight is in `targets` (float32 [channels, 2]: the export's output mean and std per
    channel) those statistics again, Conv by Conv in graph order: scale each output channel's weights, then shift
    the channel by the Conv's bias or, without one, by the mean of the BatchNormalization it feeds.

    Redrawn weights alone leave a deep CNN's activations out of scale: the export's BatchNorm statistics (or,
    folded into the Conv by the legacy exporter, its per-channel scale and bias) were measured on the export's
    own weights, and the mismatch grows layer by layer (resnet50's logits grow from 2 to 1e5 and overflow fp16)."""
    import onnxruntime as ort

    init = {t.name: t for t in model.graph.initializer}
    convs = [n for n in _convs(model, set(targets)) if n.input[1] in init]
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    # one session: the tensors changed here become inputs (an initializer that is also a graph input is a default
    # the caller may override), the Convs' outputs become outputs
    changed: dict[str, Array] = {}
    plan = []
    for conv in convs:
        users = consumers.get(conv.output[0], [])
        if len(conv.input) > 2 and conv.input[2] in init:
            bias, bn_mean = conv.input[2], None
        elif len(users) == 1 and users[0].op_type == "BatchNormalization" and users[0].input[3] in init:
            bias, bn_mean = None, users[0].input[3]
        else:
            bias, bn_mean = None, None
        plan.append((conv, bias, bn_mean))
        for name in (conv.input[1], bias, bn_mean):
            if name is not None:
                changed[name] = numpy_helper.to_array(init[name])
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    have = {i.name for i in probe.graph.input}
    probe.graph.input.extend(
        onnx.helper.make_tensor_value_info(n, init[n].data_type, list(init[n].dims)) for n in changed if n not in have
    )
    have = {o.name for o in probe.graph.output}
    probe.graph.output.extend(
        onnx.helper.make_empty_tensor_value_info(c.output[0]) for c, _, _ in plan if c.output[0] not in have
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3  # (onnxruntime warns of every overridable initializer)
    session = ort.InferenceSession(probe.SerializeToString(), options, providers=["CPUExecutionProvider"])
    graph_inputs = {i.name for i in model.graph.input} - set(init)
    for conv, bias, bn_mean in plan:
        (y,) = session.run([conv.output[0]], {**{n: inputs[n] for n in graph_inputs}, **changed})
        axes = tuple(i for i in range(y.ndim) if i != 1)
        now = np.stack([y.mean(axes, dtype=np.float64), y.std(axes, dtype=np.float64)], 1)
        want = targets[conv.input[1]].astype(np.float64)
        k = np.where(now[:, 1] > 0, want[:, 1] / np.maximum(now[:, 1], 1e-30), 1.0)
        w = changed[conv.input[1]]
        changed[conv.input[1]] = (w * k.reshape(-1, *([1] * (w.ndim - 1)))).astype(w.dtype)
        shift = now[:, 0] * k - want[:, 0]  # how far the channel's mean is from the export's, after scaling
        if bias is not None:
            changed[bias] = (changed[bias] * k - shift).astype(changed[bias].dtype)
        elif bn_mean is not None:
            changed[bn_mean] = (changed[bn_mean] + shift).astype(changed[bn_mean].dtype)
    for name, a in changed.items():
        init[name].CopyFrom(numpy_helper.from_array(a, name))


def skeleton_inputs(arrays: dict[str, Array]) -> dict[str, Array]:
    out: dict[str, Array] = {}
    for name, a in arrays.items():
        if a.nbytes <= KEEP_INPUT or a.dtype.kind != "f":
            out[name] = a
        else:
            out[f"{name}__stats"] = stats(a)
            out[f"{name}__shape"] = np.asarray(a.shape, np.int64)
            out[f"{name}__dtype"] = np.asarray(str(a.dtype))
    return out


def materialise_inputs(saved: dict[str, Array]) -> dict[str, Array]:
    out: dict[str, Array] = {}
    for key, a in saved.items():
        if key.endswith("__stats"):
            name = key[: -len("__stats")]
            shape = tuple(int(d) for d in saved[f"{name}__shape"])
            out[name] = redraw(a, shape, np.dtype(str(saved[f"{name}__dtype"])), f"input:{name}")
        elif not key.endswith(("__shape", "__dtype")):
            out[key] = a
    return out


def materialise(skeleton: Path, cache: Path) -> Path:
    """The model of `skeleton` (a `.onnx` in models/zoo) redrawn into `cache` (once: the file's name carries a
    hash of the skeleton, its inputs and this file), with its `<name>.inputs.npz` beside it; the path of the `.onnx`."""
    data = skeleton.read_bytes()
    name = skeleton.name.split(".")[0]
    saved_inputs = skeleton.with_name(f"{name}.inputs.npz")
    digest = hashlib.sha256(data + saved_inputs.read_bytes() + Path(__file__).read_bytes()).hexdigest()[:16]
    out = cache / digest / skeleton.name
    inputs = out.with_name(f"{name}.inputs.npz")
    if out.exists() and inputs.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with np.load(saved_inputs) as saved:
        arrays = materialise_inputs(dict(saved))
    model = onnx.load_from_string(data)
    materialise_model(model, arrays)
    _atomic(out, model.SerializeToString())
    tmp = inputs.with_name(f"{inputs.name}.{os.getpid()}.tmp.npz")
    np.savez(tmp, **arrays)  # pyright: ignore[reportArgumentType]
    os.replace(tmp, inputs)
    return out


def _atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # a concurrent run reads a whole file or writes it again


def write(src: Path, dst: Path) -> None:
    """A skeleton of every export in `src` (and its inputs) into `dst`."""
    dst.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.glob("*.onnx")):
        model = onnx.load(str(path))
        with np.load(src / f"{path.name.split('.')[0]}.inputs.npz") as saved:
            n = skeletonize(model, dict(saved))
        _atomic(dst / path.name, model.SerializeToString())
        print(f"{dst / path.name}: {n} tensors as statistics, {(dst / path.name).stat().st_size / 1e3:.0f} kB")
    for path in sorted(src.glob("*.inputs.npz")):
        with np.load(path) as saved:
            np.savez(dst / path.name, **skeleton_inputs(dict(saved)))  # pyright: ignore[reportArgumentType]
    total = sum(f.stat().st_size for f in dst.iterdir())
    print(f"{dst}: {total / 1e6:.2f} MB")


def main() -> None:
    here = Path(__file__).resolve().parent
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", type=Path, default=here / "out", help="the exports (default models/out)")
    p.add_argument("--dst", type=Path, default=here / "zoo", help="where the skeletons go (default models/zoo)")
    args = p.parse_args()
    if not any(args.src.glob("*.onnx")):
        sys.exit(f"{args.src}: no exported models (run `make models`)")
    write(args.src, args.dst)


if __name__ == "__main__":
    main()
