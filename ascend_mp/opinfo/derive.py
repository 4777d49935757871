"""Derives the built-in tables in `data/` from CANN's real `aic-ascend910-ops-info.json`.

    python -m ascend_mp.opinfo.derive [path/to/aic-ascend910-ops-info.json]

Without a path it reads :data:`CANN_TABLE`, the copy of CANN's 613-op table kept in the
repository (`ascend_mp/opinfo/data/cann/`; not installed with the package).

The facts of every dialect op (its inputs' and outputs' dtype columns,
`precision_reduce`, `dynamicFormat`) are copied from the real table for the
inputs and outputs the dialect models. What the real table does not state is
stated here, as data, in :data:`STATED`: the dtype columns of `dynamicFormat`
ops (Conv2D fp16 only, as CANN's guide says; cube ops with fp16-in/fp32-out
columns; elementwise ops fp16 and fp32; Select like SelectV2; the attribute (`D`) forms of
data-movement ops like their tensor-operand twins) and the ops CANN keeps
outside the AI Core table (`Const`). The AI CPU table (:data:`AICPU`) lists fp32 fallback kernels.

`ascend910b` is `ascend910` with a bfloat16 twin of every float16 column (the
910B's vector and cube units take bf16 wherever they take fp16). A test re-derives
the tables and compares them with the shipped files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ascend_mp.dialects.ascend import OPS_BY_TYPE, cann_inputs, cann_outputs

CANN_TABLE = Path(__file__).parent / "data" / "cann" / "aic-ascend910-ops-info.json"
"""CANN's real AI Core table for the Ascend 910 (613 ops), as CANN ships it: the source of the built-in tables."""

F16_F32 = "float16,float"
STATED: dict[str, dict[str, str]] = {
    # op: {port name: dtype columns}; used where the real table gives no dtypes.
    "Const": {"y": "float16,float,bfloat16,int32,int64,int8,uint8,bool"},
    "BatchMatMul": {"x1": "float16,float16,float", "x2": "float16,float16,float", "y": "float16,float,float"},
    "BatchMatMulV2": {
        "x1": "float16,float16,float",
        "x2": "float16,float16,float",
        "bias": "float16,float,float",
        "y": "float16,float,float",
    },
    "Conv2D": {"x": "float16", "filter": "float16", "bias": "float16", "y": "float16"},
    "BiasAdd": {"x": "float16,float,int32", "bias": "float16,float,int32", "y": "float16,float,int32"},
    "Add": {"x1": "float16,float,int32", "x2": "float16,float,int32", "y": "float16,float,int32"},
    "Mul": {"x1": "float16,float,int32", "x2": "float16,float,int32", "y": "float16,float,int32"},
    "RealDiv": {"x1": F16_F32, "x2": F16_F32, "y": F16_F32},
    "SoftmaxV2": {"x": F16_F32, "y": F16_F32},
    "BNTrainingReduce": {"x": F16_F32, "sum": "float,float", "square_sum": "float,float"},
    "BNTrainingUpdateGrad": {
        "grads": F16_F32,
        "x": F16_F32,
        "batch_mean": "float,float",
        "batch_variance": "float,float",
        "diff_scale": "float,float",
        "diff_offset": "float,float",
    },
    "BNTrainingReduceGrad": {
        "grads": F16_F32,
        "x": F16_F32,
        "diff_scale": "float,float",
        "diff_offset": "float,float",
        "scale": "float,float",
        "batch_mean": "float,float",
        "batch_variance": "float,float",
        "y": F16_F32,
    },
    "LayerNorm": {p: F16_F32 for p in ("x", "gamma", "beta", "y", "mean", "variance")},
    "ConcatV2D": {
        "input_values": "float16,float,int32,int64,int8,uint8,bool",
        "output_data": "float16,float,int32,int64,int8,uint8,bool",
    },
    "MaxPoolGrad": {"x1": "float16", "x2": "float16", "grad": "float16", "y": "float16"},
    # The attribute (D) forms of data-movement ops: the columns of their tensor-operand twins
    # (GatherV2, StridedSlice, Tile; BroadcastToD states its own).
    "GatherV2D": {
        "x": "float16,float,int8,uint8,int32,int64,float16,float,int8,uint8,int32,int64",
        "indices": "int32,int32,int32,int32,int32,int32,int64,int64,int64,int64,int64,int64",
        "y": "float16,float,int8,uint8,int32,int64,float16,float,int8,uint8,int32,int64",
    },
    "StridedSliceD": {p: "float16,float,int32,uint8,bool,int8" for p in ("x", "y")},
    "TileD": {p: "float16,float,int32,bool" for p in ("x", "y")},
    "UnsortedSegmentSumD": {
        "x": "float16,float,int32,float16,float,int32",
        "segment_ids": "int32,int32,int32,int64,int64,int64",
        "y": "float16,float,int32,float16,float,int32",
    },
    # Select's columns are SelectV2's (condition bool; then/else/result one dtype).
    "Select": {
        "condition": "bool,bool,bool,bool,bool",
        **{p: "float16,float,int32,int8,uint8" for p in ("x1", "x2", "y")},
    },
}

AICPU: dict[str, dict[str, str]] = {
    # fp32 AI CPU kernels of ops whose AI Core kernels are fp16 only.
    "MaxPool": {"x": "float", "y": "float"},
    "MaxPoolGrad": {"x1": "float", "x2": "float", "grad": "float", "y": "float"},
    "AvgPool": {"x": "float", "y": "float"},
    "AvgPoolGrad": {"input_grad": "float", "out_grad": "float"},
}


def _entry(op: str, ports: dict[str, str], real: dict[str, Any] | None) -> dict[str, Any]:
    cls = OPS_BY_TYPE[op]
    entry: dict[str, Any] = {}
    for kind, names in (("input", cann_inputs(cls)), ("output", cann_outputs(cls))):
        for i, name in enumerate(n for n in names if n in ports):
            entry[f"{kind}{i}"] = {"name": name, "dtype": ports[name]}
    if real is not None:
        for key in ("precision_reduce", "dynamicFormat"):
            if key in real:
                entry[key] = real[key]
    return entry


def _real_ports(real: dict[str, Any]) -> dict[str, str]:
    return {
        v["name"]: v["dtype"]
        for k, v in real.items()
        if k.startswith(("input", "output")) and isinstance(v, dict) and "dtype" in v
    }


def derive_aic(real_table: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for op in OPS_BY_TYPE:
        real = real_table.get(op)
        ports = _real_ports(real) if real is not None else {}
        cls = OPS_BY_TYPE[op]
        if not any(n in ports for n in cann_inputs(cls) + cann_outputs(cls)):
            ports = STATED[op]
        out[op] = _entry(op, ports, real)
    return out


def derive_aicpu() -> dict[str, Any]:
    return {op: _entry(op, ports, None) for op, ports in AICPU.items()}


def bf16_twin(table: dict[str, Any]) -> dict[str, Any]:
    """Every column that holds float16 gets a twin with bfloat16 in its place."""
    out: dict[str, Any] = json.loads(json.dumps(table))
    for entry in out.values():
        ports = [v for k, v in entry.items() if k.startswith(("input", "output"))]
        columns = list(zip(*(p["dtype"].split(",") for p in ports)))
        twins = [tuple("bfloat16" if t == "float16" else t for t in col) for col in columns if "float16" in col]
        twins = [t for t in twins if t not in columns]
        for i, port in enumerate(ports):
            port["dtype"] = ",".join([c[i] for c in columns] + [t[i] for t in dict.fromkeys(twins)])
    return out


def derive_all(real_table: dict[str, Any]) -> dict[str, dict[str, Any]]:
    aic = derive_aic(real_table)
    return {
        "aic-ascend910-ops-info.json": aic,
        "aicpu-ascend910-ops-info.json": derive_aicpu(),
        "aic-ascend910b-ops-info.json": bf16_twin(aic),
        "aicpu-ascend910b-ops-info.json": derive_aicpu(),
    }


def dump(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1:
        sys.exit("usage: python -m ascend_mp.opinfo.derive [aic-ascend910-ops-info.json]")
    real = json.loads(Path(args[0] if args else CANN_TABLE).read_text())
    data = Path(__file__).parent / "data"
    for name, table in derive_all(real).items():
        (data / name).write_text(dump(table))
        print(f"wrote {data / name} ({len(table)} ops)")


if __name__ == "__main__":
    main()
