"""Runs inside the PyTorch venv (the CPU wheel): build each described graph as torch ops under CUDA autocast and
print the dtype every op computes in (JSON on stdout).

How CUDA autocast runs without CUDA. The CPU wheel compiles `aten/src/ATen/autocast_mode.cpp` whole: its
`AutocastCUDA` kernels (lower_precision_fp, fp32 and promote casts) are registered in the dispatcher like on a CUDA
build (`torch._C._dispatch_dump("aten::mm")` lists an `AutocastCUDA` kernel; an op on no list shows the
`AutocastCUDA` fallthrough). Two things keep them from running on a CPU machine, and both are side-stepped without
touching a list:

* tensors: the dispatcher enters `AutocastCUDA` only for tensors whose key set holds the CUDA backend. Under
  `FakeTensorMode` a factory call with `device="cuda"` makes a fake tensor (meta storage) whose dispatch keys are a
  CUDA tensor's (`_make_subclass(..., device_for_backend_keys=cuda)`: how `torch.compile` traces autocast regions).
  Autocast sits above the Python key, so each op meets the real `AutocastCUDA` kernel first, which casts its inputs
  (`_to_copy`) and redispatches; the fake tensor's meta kernels then compute the result dtype (type promotion
  included), as the CUDA kernels do.
* the switch: `torch.autocast("cuda")` disables itself when `torch.cuda.is_available()` is false (a warning, then
  `_enabled = False`). The harness re-enables that one instance before `__enter__`, which then sets the same
  thread-local state (`set_autocast_enabled("cuda")`, `set_autocast_dtype`) as on a GPU machine.

A self-check refuses to answer unless `mm` on fp32 inputs comes out in the low dtype and `softmax` on low inputs in
fp32. Every op's aten calls are recorded below autocast (a `TorchDispatchMode`) with whether the dispatcher holds an
`AutocastCUDA` kernel for them, for the disagreement report.

What each dialect op is in torch (the harness's reading of an export):
`MatMulV2` mm, `BatchMatMulV2` matmul, `BiasAdd` (or `Add` of a 1-d parameter) the bias of linear (`addmm`) or
conv2d when its other input is the only use of a `MatMulV2` / `BatchMatMulV2` / `Conv2D`, directly or through one
`Reshape` (how Gemm, Conv and a linear over a 3-d input come out of `torch.onnx.export`; `linears`), otherwise
`x + bias`; `Square`
`torch.square` (a composite: autocast sees `pow`); the rest the torch op of the same name; `arg` an fp32 parameter.

Input (stdin, JSON): {"dtype": "f16"|"bf16", "graphs": [graph...]} (`conformance/graphs.py`). Output:
{"torch": version, "graphs": {name: {node: dtype}}, "aten": {name: {node: ["aten.mm.default*", ...]}}} where `*`
marks an aten op with an `AutocastCUDA` kernel.
"""

from __future__ import annotations

import json
import sys
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

DTYPES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}
TORCH_DTYPES = {
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f32": torch.float32,
    "f64": torch.float64,
    "i1": torch.bool,
    "i32": torch.int32,
    "i64": torch.int64,
}
UNARY = {
    "Relu": torch.relu,
    "Sigmoid": torch.sigmoid,
    "Tanh": torch.tanh,
    "Exp": torch.exp,
    "Log": torch.log,
    "Sqrt": torch.sqrt,
    "Rsqrt": torch.rsqrt,
    "Square": torch.square,
    "Neg": torch.neg,
    "Floor": torch.floor,
    "Erf": torch.erf,
    "Gelu": F.gelu,
}
BINARY = {
    "Add": torch.add,
    "Sub": torch.sub,
    "Mul": torch.mul,
    "RealDiv": torch.div,
    "Maximum": torch.maximum,
    "Minimum": torch.minimum,
    "Pow": torch.pow,
}
FUSES_BIAS = ("MatMulV2", "BatchMatMulV2", "Conv2D")
_HAS_AUTOCAST: dict[str, bool] = {}


def has_autocast_cuda(func: object) -> bool:
    """Whether the dispatcher holds an AutocastCUDA kernel (not the fallthrough) for this aten overload."""
    name = str(func)  # aten.mm.default
    if name not in _HAS_AUTOCAST:
        ns, op, overload = (name.split(".") + [""])[:3]
        qualified = f"{ns}::{op}" + ("" if overload in ("", "default") else f".{overload}")
        try:
            dump = torch._C._dispatch_dump(qualified)
        except RuntimeError:
            dump = ""
        _HAS_AUTOCAST[name] = any(line.startswith("AutocastCUDA:") for line in dump.splitlines())
    return _HAS_AUTOCAST[name]


class Record(TorchDispatchMode):
    """The aten ops that reach the backend (below autocast), for the disagreement report."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
        name = str(func)
        if not name.startswith(("prim.", "aten._to_copy", "aten.empty")):
            self.ops.append(name + ("*" if has_autocast_cuda(func) else ""))
        return func(*args, **(kwargs or {}))


def cuda_autocast(low: torch.dtype) -> torch.autocast:
    ctx = torch.autocast("cuda", dtype=torch.float16)  # disables itself: no CUDA device (module docstring)
    ctx._enabled = True
    ctx.fast_dtype = low
    return ctx


def linears(nodes: list[dict]) -> dict[str, tuple[str, list[str]]]:
    """The linear / conv2d calls the graph stands for: bias node -> (head, [head, reshape?]): a BiasAdd, or an Add
    of a 1-d argument, whose other input is the only use of a MatMulV2 / BatchMatMulV2 / Conv2D, directly or through
    one Reshape (Gemm, Conv with a bias, and the MatMul + Add of a linear over a 3-d input, from torch.onnx.export)."""
    by_name = {n["name"]: n for n in nodes}
    users: dict[str, list[str]] = {n["name"]: [] for n in nodes}
    for n in nodes:
        for i in n["inputs"]:
            users[i].append(n["name"])
    found: dict[str, tuple[str, list[str]]] = {}
    for n in nodes:
        if n["op"] == "BiasAdd":
            x = n["inputs"][0]
        elif n["op"] == "Add":
            params = [i for i in n["inputs"] if by_name[i]["op"] == "arg" and len(by_name[i]["shape"]) == 1]
            others = [i for i in n["inputs"] if i not in params]
            if len(params) != 1 or len(others) != 1:
                continue
            x = others[0]
        else:
            continue
        chain = []
        if by_name[x]["op"] == "Reshape" and len(users[x]) == 1:
            chain.append(x)
            x = by_name[x]["inputs"][0]
        if by_name[x]["op"] in FUSES_BIAS and users[x] == [chain[0] if chain else n["name"]]:
            found[n["name"]] = (x, [x, *chain])
    return found


def build(g: dict, rec: Record) -> tuple[dict[str, str], dict[str, list[str]]]:
    nodes = g["nodes"]
    fused = linears(nodes)
    inside = {m for _, chain in fused.values() for m in chain}
    by_name = {n["name"]: n for n in nodes}
    values: dict[str, torch.Tensor] = {}
    dtypes: dict[str, str] = {}
    aten: dict[str, list[str]] = {}
    for n in nodes:
        op, name, props, shape = n["op"], n["name"], n["props"], n["shape"]
        ins = [values[i] for i in n["inputs"] if i in values]
        rec.ops = []
        if op in ("arg", "const"):  # a parameter or input (fp32 unless an integer input), a constant's values
            values[name] = torch.zeros(shape, dtype=TORCH_DTYPES[n.get("dtype", "f32")], device="cuda")
            continue
        if op in UNBUILT:  # not compared (run.py prints why): its value in the dtype the policy chose
            values[name] = torch.zeros(shape, dtype=TORCH_DTYPES[GIVEN[name]], device="cuda")
            continue
        if name in inside:  # computed by the linear / conv2d call at its bias
            continue
        if name in fused:
            head, chain = fused[name]
            h = by_name[head]
            bias = next(values[i] for i in n["inputs"] if i not in chain)
            t = _op(h["op"], [values[i] for i in h["inputs"]] + [bias], h["props"], shape)
            for m in chain:
                dtypes[m], aten[m] = DTYPES[t.dtype], list(rec.ops)
        elif op == "BiasAdd":
            x, b = ins
            t = x + (
                b.reshape([1, -1] + [1] * (x.dim() - 2))
                if x.dim() > 2 and props.get("data_format", "NCHW") == "NCHW"
                else b
            )
        else:
            t = _op(op, ins, props, shape, n.get("dtype", "f32"))
        values[name] = t
        dtypes[name] = DTYPES.get(t.dtype, str(t.dtype).removeprefix("torch."))
        aten[name] = list(rec.ops)
    return dtypes, aten


GIVEN: dict[str, str] = {}
"""The policy's dtype per node of a zoo model (`run.py --zoo`), used only for an op in UNBUILT."""
UNBUILT: dict[str, str] = {}
"""Ascend ops with no torch construction here, and why (none today: every zoo op has one)."""


def contiguous(t: torch.Tensor, shape: list[int] | None = None) -> torch.Tensor:
    """`t.contiguous()` (a copy in `t`'s dtype, no autocast kernel), reshaped to `shape` if given: made fresh,
    since the fake tensor of a permuted CUDA tensor cannot be copied on the CPU wheel (its meta clone asks for a
    CUDA device), and the ops after a transpose (log_softmax's decomposition, a reshape) copy it."""
    return torch.empty(t.shape if shape is None else shape, dtype=t.dtype, device="cuda")


def _check_slice(props: dict) -> None:
    """StridedSliceD over the leading axes only (begin / end masks; the zoo has no ellipsis, new-axis or shrink)."""
    if props.get("ellipsis_mask") or props.get("new_axis_mask") or props.get("shrink_axis_mask"):
        raise SystemExit("torch_side: StridedSliceD with ellipsis, new-axis or shrink masks not built")


def _op(op: str, ins: list[torch.Tensor], props: dict, shape: list[int], dtype: str = "f32") -> torch.Tensor:
    if op in UNARY:
        return UNARY[op](ins[0])
    if op in BINARY:
        return BINARY[op](ins[0], ins[1])
    if op == "LeakyRelu":
        return F.leaky_relu(ins[0], props["negative_slope"])
    if op == "SoftmaxV2":
        return torch.softmax(ins[0], props.get("axes", [-1])[0])
    if op == "LogSoftmaxV2":
        return torch.log_softmax(ins[0], props.get("axes", [-1])[0])
    if op == "MatMulV2":
        a = ins[0].t() if props.get("transpose_x1") else ins[0]
        b = ins[1].t() if props.get("transpose_x2") else ins[1]
        if len(ins) == 3:  # with its bias: linear (addmm), reshaped to the bias node's shape
            return contiguous(torch.addmm(ins[2], a, b), shape)
        return torch.mm(a, b)
    if op == "BatchMatMulV2" and len(ins) == 3:  # linear over the leading dimensions (a 2-d weight)
        w = ins[1] if props.get("adj_x2") else contiguous(ins[1].transpose(-1, -2))
        return contiguous(F.linear(ins[0], w, ins[2]), shape)
    if op == "BatchMatMulV2":
        a = ins[0].transpose(-1, -2) if props.get("adj_x1") else ins[0]
        b = ins[1].transpose(-1, -2) if props.get("adj_x2") else ins[1]
        return torch.matmul(a, b)
    if op in ("Conv2D", "DepthwiseConv2D"):
        w, groups = ins[1], props.get("groups", 1)
        if op == "DepthwiseConv2D":  # the dialect's filter is HWCN (C channels x multiplier): torch's (C*M, 1, H, W)
            kh, kw, c, m = w.shape
            w, groups = contiguous(w, [c * m, 1, kh, kw]), c
        return F.conv2d(
            ins[0],
            w,
            ins[2] if len(ins) == 3 else None,
            stride=tuple(props["strides"][2:]),
            padding=tuple(props["pads"][::2]),
            dilation=tuple(props.get("dilations", [1, 1, 1, 1])[2:]),
            groups=groups,
        )
    if op == "Relu6":
        return F.relu6(ins[0])
    if op == "AvgPool":
        if props.get("padding", "VALID") != "VALID":
            raise SystemExit(f"torch_side: AvgPool padding {props['padding']} not built")
        return F.avg_pool2d(ins[0], tuple(props["ksize"][2:]), tuple(props["strides"][2:]))
    if op == "MaxPoolV3":
        return F.max_pool2d(
            ins[0],
            tuple(props["ksize"][2:]),
            tuple(props["strides"][2:]),
            padding=tuple(props.get("pads", [0, 0, 0, 0])[::2]),
            ceil_mode=bool(props.get("ceil_mode", False)),
        )
    if op == "LayerNorm":
        x, scale, offset = ins
        return F.layer_norm(x, tuple(x.shape[props["begin_norm_axis"] :]), scale, offset, props.get("epsilon", 1e-5))
    if op == "GatherV2D":
        x, idx = ins
        if props["axis"] == 0 and x.dim() == 2:  # nn.Embedding
            return F.embedding(idx, x)
        return contiguous(torch.index_select(x, props["axis"], idx.reshape(-1)), shape)
    if op == "StridedSliceD":
        # a view (aten::slice has the AutocastCUDA fallthrough: its input's dtype); slicing a fake CUDA tensor asks
        # the CPU wheel for a CUDA device, so the view's value is made fresh (`contiguous`) after the shape check
        _check_slice(props)
        return contiguous(ins[0], shape)
    if op == "ConcatV2D":
        return torch.cat(ins, props["concat_dim"])
    if op in ("SelectV2", "Select"):
        return torch.where(ins[0], ins[1], ins[2])
    if op == "Cast":
        return ins[0].to(TORCH_DTYPES[dtype])
    if op == "BroadcastToD":
        return contiguous(ins[0].expand(props["shape"]))
    if op == "LogicalAnd":
        return torch.logical_and(ins[0], ins[1])
    if op == "LogicalNot":
        return torch.logical_not(ins[0])
    if op == "Equal":
        return torch.eq(ins[0], ins[1])
    if op == "BNInfer":
        x, scale, offset, mean, var = ins
        return F.batch_norm(x, mean, var, scale, offset, training=False, eps=props.get("epsilon", 1e-5))
    if op == "MaxPool":
        return F.max_pool2d(ins[0], tuple(props["ksize"][2:]), tuple(props["strides"][2:]))
    if op == "Reshape":
        return ins[0].reshape(shape)
    if op == "Transpose":
        return contiguous(ins[0].permute(*props["perm"]))
    if op == "ReduceSum":
        return torch.sum(ins[0], dim=tuple(props["axes"]), keepdim=bool(props["keep_dims"]))
    if op == "ReduceMean":
        return torch.mean(ins[0], dim=tuple(props["axes"]), keepdim=bool(props["keep_dims"]))
    if op == "ReduceMax":
        return torch.amax(ins[0], dim=tuple(props["axes"]), keepdim=bool(props["keep_dims"]))
    raise SystemExit(f"torch_side: no torch construction for ascend op {op}")


def self_check(low: torch.dtype) -> None:
    with FakeTensorMode(), cuda_autocast(low):
        a = torch.empty(4, 4, device="cuda")
        mm, sm = torch.mm(a, a), torch.softmax(a.to(low), -1)
    if (mm.dtype, sm.dtype) != (low, torch.float32):
        raise SystemExit(f"torch_side: CUDA autocast is not in effect (mm -> {mm.dtype}, softmax -> {sm.dtype})")
    if not has_autocast_cuda(torch.ops.aten.mm.default):
        raise SystemExit("torch_side: this torch build registers no AutocastCUDA kernel for aten::mm")


def main() -> None:
    request = json.load(sys.stdin)
    low = {"f16": torch.float16, "bf16": torch.bfloat16}[request["dtype"]]
    GIVEN.update(request.get("given", {}))
    self_check(low)
    out: dict[str, dict[str, str]] = {}
    aten: dict[str, dict[str, list[str]]] = {}
    for g in request["graphs"]:
        with FakeTensorMode(), cuda_autocast(low), Record() as rec:
            out[g["name"]], aten[g["name"]] = build(g, rec)
    json.dump({"torch": torch.__version__, "graphs": out, "aten": aten, "not_built": UNBUILT}, sys.stdout)


if __name__ == "__main__":
    main()
