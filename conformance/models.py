"""Small hand-written models for the conformance harnesses, in the graph description of `conformance/graphs.py`:
the shapes of a real network's blocks (4-D convolutions, 3-D attention) that the random 2-D graphs do not reach.

* `mlp`: linear -> gelu -> linear -> log_softmax;
* `conv_block`: Conv2D (with bias) -> BatchNorm (BNInfer, fp32 statistics) -> Relu -> MaxPool -> Reshape -> MatMulV2
  + BiasAdd (a classifier head);
* `attention`: one self-attention head pair as `torch.onnx.export` writes BERT / GPT-2 / ViT: linear projections,
  Reshape + Transpose into heads, BatchMatMulV2 for the scores with a 0-d fp32 scale, SoftmaxV2, BatchMatMulV2 with
  the values, back to tokens, an output linear and the residual Add;
* `linear3d`: linears over a 3-d input as the ONNX frontend imports them (MatMul + Add of the bias).
"""

from __future__ import annotations

from conformance.graphs import Graph, Node


def _arg(name: str, *shape: int) -> Node:
    return Node(name, "arg", [], shape)


def mlp() -> Graph:
    return Graph(
        "mlp",
        [
            _arg("x", 8, 16),
            _arg("w1", 16, 32),
            _arg("b1", 32),
            _arg("w2", 32, 10),
            _arg("b2", 10),
            Node("fc1", "MatMulV2", ["x", "w1"], (8, 32)),
            Node("fc1_bias", "BiasAdd", ["fc1", "b1"], (8, 32)),
            Node("act", "Gelu", ["fc1_bias"], (8, 32)),
            Node("fc2", "MatMulV2", ["act", "w2"], (8, 10)),
            Node("fc2_bias", "BiasAdd", ["fc2", "b2"], (8, 10)),
            Node("logp", "LogSoftmaxV2", ["fc2_bias"], (8, 10)),
        ],
        ["logp"],
    )


def conv_block() -> Graph:
    stats = [_arg(f"bn_{s}", 4) for s in ("scale", "offset", "mean", "var")]
    return Graph(
        "conv_block",
        [
            _arg("x", 2, 3, 8, 8),
            _arg("w", 4, 3, 3, 3),
            _arg("b", 4),
            *stats,
            _arg("wf", 64, 10),
            _arg("bf", 10),
            Node("conv", "Conv2D", ["x", "w", "b"], (2, 4, 8, 8), {"strides": (1, 1, 1, 1), "pads": (1, 1, 1, 1)}),
            Node("bn", "BNInfer", ["conv", *(s.name for s in stats)], (2, 4, 8, 8)),
            Node("relu", "Relu", ["bn"], (2, 4, 8, 8)),
            Node("pool", "MaxPool", ["relu"], (2, 4, 4, 4), {"ksize": (1, 1, 2, 2), "strides": (1, 1, 2, 2)}),
            Node("flat", "Reshape", ["pool"], (2, 64)),
            Node("fc", "MatMulV2", ["flat", "wf"], (2, 10)),
            Node("fc_bias", "BiasAdd", ["fc", "bf"], (2, 10)),
        ],
        ["fc_bias"],
    )


def attention() -> Graph:
    s, h, heads = 4, 16, 2
    d = h // heads
    nodes = [
        _arg("x", s, h),
        _arg(
            "scale",
        ),
        _arg("wo", h, h),
        _arg("bo", h),
    ]
    for p in ("q", "k", "v"):
        nodes += [
            _arg(f"w{p}", h, h),
            _arg(f"b{p}", h),
            Node(f"{p}_proj", "MatMulV2", ["x", f"w{p}"], (s, h)),
            Node(f"{p}_bias", "BiasAdd", [f"{p}_proj", f"b{p}"], (s, h)),
            Node(f"{p}_heads", "Reshape", [f"{p}_bias"], (s, heads, d)),
            Node(f"{p}_t", "Transpose", [f"{p}_heads"], (heads, s, d), {"perm": (1, 0, 2)}),
        ]
    nodes += [
        Node("scores", "BatchMatMulV2", ["q_t", "k_t"], (heads, s, s), {"adj_x2": True}),
        Node("scaled", "Mul", ["scores", "scale"], (heads, s, s)),
        Node("probs", "SoftmaxV2", ["scaled"], (heads, s, s)),
        Node("context", "BatchMatMulV2", ["probs", "v_t"], (heads, s, d)),
        Node("context_t", "Transpose", ["context"], (s, heads, d), {"perm": (1, 0, 2)}),
        Node("merged", "Reshape", ["context_t"], (s, h)),
        Node("out_proj", "MatMulV2", ["merged", "wo"], (s, h)),
        Node("out_bias", "BiasAdd", ["out_proj", "bo"], (s, h)),
        Node("residual", "Add", ["out_bias", "x"], (s, h)),
    ]
    return Graph("attention", nodes, ["residual"])


def linear3d() -> Graph:
    """nn.Linear over a 3-d input as the ONNX frontend imports torch's MatMul + Add: Reshape -> MatMulV2 ->
    Reshape -> Add of the bias, and as BatchMatMulV2 (3-d x 2-d) + Add; then the residual Add and a plain
    `x @ w + y` whose MatMulV2 result is used twice (not a linear)."""
    return Graph(
        "linear3d",
        [
            _arg("x", 2, 4, 16),
            _arg("w1", 16, 16),
            _arg("b1", 16),
            _arg("w2", 16, 16),
            _arg("b2", 16),
            Node("flat", "Reshape", ["x"], (8, 16)),
            Node("mm1", "MatMulV2", ["flat", "w1"], (8, 16)),
            Node("unflat", "Reshape", ["mm1"], (2, 4, 16)),
            Node("lin1", "Add", ["unflat", "b1"], (2, 4, 16)),
            Node("residual", "Add", ["lin1", "x"], (2, 4, 16)),
            Node("mm2", "BatchMatMulV2", ["residual", "w2"], (2, 4, 16)),
            Node("lin2", "Add", ["b2", "mm2"], (2, 4, 16)),
            Node("act", "Gelu", ["lin2"], (2, 4, 16)),
            Node("mm3", "BatchMatMulV2", ["act", "w2"], (2, 4, 16)),
            Node("plain", "Add", ["mm3", "b2"], (2, 4, 16)),
            Node("also", "Relu", ["mm3"], (2, 4, 16)),
        ],
        ["plain", "also"],
    )


MODELS = (mlp, conv_block, attention, linear3d)


def ms_conv_block() -> Graph:
    """MindSpore's conv block, its ops named as MindSpore writes full names (the cells are name scopes the
    mindspore policy reads): nn.Conv2d (with bias) -> nn.BatchNorm2d (inference) -> nn.ReLU -> a Reshape outside
    any cell -> nn.Dense. `mindspore_side.py` builds it from these cells."""
    stats = [_arg(f"bn_{s}", 4) for s in ("scale", "offset", "mean", "var")]
    conv, bn, relu, fc = "Default/conv-Conv2d", "Default/bn-BatchNorm2d", "Default/relu-ReLU", "Default/fc-Dense"
    return Graph(
        "ms_conv_block",
        [
            _arg("x", 2, 3, 8, 8),
            _arg("w", 4, 3, 3, 3),
            _arg("b", 4),
            *stats,
            _arg("wf", 10, 256),
            _arg("bf", 10),
            Node(
                f"{conv}/Conv2D-op0",
                "Conv2D",
                ["x", "w"],
                (2, 4, 8, 8),
                {"strides": (1, 1, 1, 1), "pads": (1, 1, 1, 1)},
            ),
            Node(f"{conv}/BiasAdd-op1", "BiasAdd", [f"{conv}/Conv2D-op0", "b"], (2, 4, 8, 8)),
            Node(f"{bn}/BatchNorm-op2", "BNInfer", [f"{conv}/BiasAdd-op1", *(s.name for s in stats)], (2, 4, 8, 8)),
            Node(f"{relu}/ReLU-op3", "Relu", [f"{bn}/BatchNorm-op2"], (2, 4, 8, 8)),
            Node("Default/Reshape-op4", "Reshape", [f"{relu}/ReLU-op3"], (2, 256)),
            Node(f"{fc}/MatMul-op5", "MatMulV2", ["Default/Reshape-op4", "wf"], (2, 10), {"transpose_x2": True}),
            Node(f"{fc}/BiasAdd-op6", "BiasAdd", [f"{fc}/MatMul-op5", "bf"], (2, 10)),
        ],
        [f"{fc}/BiasAdd-op6"],
    )


MS_MODELS = (ms_conv_block,)
