"""Differential conformance: a framework policy of `ascend-precision` against the framework itself.

    python conformance/run.py tf|torch|mindspore [--graphs 500] [--seed 0] [--python PATH] [--dtype f16|bf16]
                                                 [--level TF_LEVEL] [--amp-level O1|O2|O3]
                                                 [--zoo all|NAME,... [--max-mb 1024]]

Builds seeded random graphs from the ops the framework shares with the dialect (and, for torch, the small models
of `conformance/models.py`), decides them with the policy, builds the same graphs in the framework (in its own
venv: `--python`, default the cached venv `make conformance` creates) and reads back the dtype every op computes
in: TensorFlow from grappler's auto_mixed_precision (`tf_side.py`), PyTorch from CUDA autocast's own dispatcher
kernels (`torch_side.py`), MindSpore from running the network amp rewrote (`mindspore_side.py`). Prints the
agreement rate and every disagreement with the op, its producers and consumers and both decisions; exits 1 when a
disagreement remains.

`--zoo` runs the exported models of `models/out` instead (`conformance/zoo.py`: imported with the ONNX frontend,
built op for op in the framework, one framework process per model): the agreement per model, each op left out
("not compared: <op> (<reason>)") and each disagreement. A difference whose policy reason names a missing Ascend
kernel (`: no fp32 kernel`) is printed as documented (docs/conformance.md) and does not fail the run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance import zoo  # noqa: E402
from conformance.graphs import KINDS, Graph, random_graph, to_module  # noqa: E402
from conformance.models import MODELS, MS_MODELS  # noqa: E402
from conformance.zoo import ZooModel  # noqa: E402

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("ASCEND_MP_CACHE", Path.home() / ".cache" / "ascend-mp"))
OPS = {"tf": tuple(KINDS), "torch": tuple(KINDS), "mindspore": tuple(k for k in KINDS if k != "LeakyRelu")}
"""The ops each framework's random graphs draw from (MindSpore 2.10 has no LeakyReLU primitive)."""
NAMES = {"tf": "TensorFlow", "torch": "PyTorch", "mindspore": "MindSpore"}


def ours(g: Graph, framework: str, low: str, level: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """The policy's dtype for every op of `g` (its first result's) and its reason; for tf the environment's
    TF_AUTO_MIXED_PRECISION_* variables apply. bf16 is decided on ascend910b, the SoC with bf16 kernels."""
    from ascend_mp.passes.precision import run_precision

    module = to_module(g)
    soc = "ascend910b" if low == "bf16" else "ascend910"
    report = run_precision(module, policy=framework, amp_dtype=low, soc=soc, level=level)
    named = [d for d in report.ops if d.name is not None]
    return {d.name: d.chosen.outputs[0] for d in named}, {d.name: d.reason for d in named}


def theirs(framework: str, graphs: list[Graph], python: str, request: dict[str, object]) -> dict[str, object]:
    """The framework side's reply (`<framework>_side.py` run by the framework venv's `python`)."""
    text = json.dumps({**request, "graphs": [g.to_json() for g in graphs]})
    side = HERE / f"{framework}_side.py"
    done = subprocess.run([python, str(side)], input=text, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{side.name} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def neighbours(g: Graph, name: str) -> str:
    ops = {n.name: n.op for n in g.nodes}
    node = next(n for n in g.nodes if n.name == name)
    ins = ", ".join(f"{ops[i]}" for i in node.inputs)
    outs = ", ".join(n.op for n in g.nodes if name in n.inputs)
    return f"<- [{ins}] -> [{outs or 'return'}]"


def zoo_ours(model: ZooModel, framework: str, low: str, level: str | None) -> tuple[dict[str, str], dict[str, str]]:
    """The policy's dtype and reason for every op of a zoo model (decided on the imported module itself)."""
    from ascend_mp.passes.precision import run_precision

    soc = "ascend910b" if low == "bf16" else "ascend910"
    report = run_precision(model.module, policy=framework, amp_dtype=low, soc=soc, level=level)
    named = [d for d in report.ops if d.name is not None]
    return {d.name: d.chosen.outputs[0] for d in named}, {d.name: d.reason for d in named}


KERNEL = re.compile(r": no (fp32|fp16|bf16) kernel")
"""A policy reason saying Ascend has no kernel in the framework's dtype (`keep_steps` / `low_steps`): the documented
difference of docs/conformance.md, counted apart from the disagreements."""


def run_zoo(fw: str, args: argparse.Namespace, python: str, request: dict[str, object]) -> tuple[int, int]:
    """Each zoo model (one at a time: one framework process per model), its agreement and disagreements printed;
    returns (agreeing or documented ops, compared ops) over all of them."""
    paths = zoo.files(tuple(args.zoo.split(",")) if args.zoo != "all" else None)
    level = args.amp_level if fw == "mindspore" else None
    agree_all, total_all = 0, 0
    for path in paths:
        if path.stat().st_size > args.max_mb * 2**20:
            print(f"  {fw} zoo {path.stem}: skipped, {path.stat().st_size >> 20} MB > --max-mb {args.max_mb}")
            continue
        model = zoo.load(path)
        g = model.graph
        mine, why = zoo_ours(model, fw, args.dtype, level)
        body = {**request, "given": mine}
        reply = theirs(fw, [g], python, body)
        painted: dict[str, str] = reply["graphs"][g.name]  # type: ignore[index]
        skipped: dict[str, str] = reply.get("not_built", {})  # type: ignore[assignment]
        aten: dict[str, list[str]] = reply.get("aten", {}).get(g.name, {})  # type: ignore[union-attr]
        total = agree = low_both = documented = 0
        left_out: Counter[str] = Counter()
        lines = []
        for n in g.nodes:
            if not zoo.compared(n):
                if n.op not in ("arg", "const"):
                    left_out[f"{n.op} ({n.dtype} result: no precision choice)"] += 1
                continue
            if n.op in skipped:
                left_out[f"{n.op} ({skipped[n.op]})"] += 1
                continue
            total += 1
            a, b = mine[n.name], painted[n.name]
            if a == b:
                agree += 1
                low_both += a != "f32"
                continue
            calls = aten.get(n.name)
            seen = f" [{' '.join(calls)}]" if calls else ""
            if KERNEL.search(why[n.name]):
                documented += 1
                lines.append(
                    f"    documented: {n.name} {n.op} '{n.label}' {neighbours(g, n.name)}: ours {a} ({why[n.name]}), "
                    f"{NAMES[fw]} {b}"
                )
                continue
            lines.append(
                f"    {n.name} {n.op} '{n.label}' {neighbours(g, n.name)}: ours {a} ({why[n.name]}), "
                f"{NAMES[fw]} {b}{seen}"
            )
        version = reply.get(fw, "?")
        print(
            f"  {fw} zoo {g.name} ({NAMES[fw]} {version}): {agree}/{total} ops agree ({100 * agree / max(total, 1):.2f}%; "
            f"{low_both} in {args.dtype} on both sides"
            + (f"; {documented} documented difference{'s' * (documented > 1)})" if documented else ")")
        )
        for what, count in sorted(left_out.items()):
            print(f"    not compared: {what} x{count}")
        for line in lines[: args.show]:
            print(line)
        agree_all += agree + documented
        total_all += total
        del model
    return agree_all, total_all


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("framework", choices=tuple(OPS))
    p.add_argument("--graphs", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", type=int, default=10)
    p.add_argument("--python", default=None, help="the framework venv's python (default: the cached venv)")
    p.add_argument("--show", type=int, default=20, help="disagreements to print")
    p.add_argument(
        "--dtype",
        choices=("f16", "bf16"),
        default="f16",
        help="tf f16: the CUDA lists (grappler's CPU emulation mode); tf bf16: the oneDNN lists; "
        "torch: CUDA autocast's dtype",
    )
    p.add_argument(
        "--level",
        choices=("", "TREAT_INFER_AS_DENY", "UNSAFE_FORCE_ALL"),
        default="",
        help="tf: TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL for both sides",
    )
    p.add_argument("--amp-level", choices=("O1", "O2", "O3"), default="O2", help="mindspore: the amp level")
    p.add_argument(
        "--zoo",
        default="",
        help="the zoo models (models/out/<name>.{dynamo,legacy}.onnx) instead of the random graphs: "
        "'all' or comma-separated names",
    )
    p.add_argument("--max-mb", type=int, default=1024, help="--zoo: skip ONNX files larger than this (MB)")
    args = p.parse_args(argv)
    fw = args.framework
    if args.level and fw != "tf":
        p.error("--level applies to tf only")
    if args.level:
        os.environ["TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL"] = args.level
    python = args.python or str(CACHE / "venvs" / fw / "bin" / "python")
    if not Path(python).is_file():
        p.error(f"no {NAMES[fw]} python at {python}: run `make conformance` (it creates the venv) or pass --python")
    if args.zoo:
        unknown = [m for m in args.zoo.split(",") if args.zoo != "all" and m not in zoo.MODELS]
        if unknown:
            p.error(f"--zoo: unknown model '{unknown[0]}'; expected 'all' or names of {', '.join(zoo.MODELS)}")
        request: dict[str, object] = {"dtype": args.dtype}
        if fw == "mindspore":
            request["level"] = args.amp_level
        elif fw == "tf":
            request = {"mode": "cpu" if args.dtype == "f16" else "bf16"}
        if not zoo.files(None if args.zoo == "all" else tuple(args.zoo.split(","))):
            print(f"{fw} zoo: skipped, no model under {zoo.ZOO} (`make models` exports them)")
            return 0
        agree, total = run_zoo(fw, args, python, request)
        print(
            f"{fw} policy vs {NAMES[fw]} over the zoo: {agree}/{total} ops agree or differ as documented "
            f"({100 * agree / max(total, 1):.2f}%)"
        )
        return 0 if agree == total else 1
    graphs = [random_graph(args.seed + i, OPS[fw], args.size) for i in range(args.graphs)]
    if fw == "torch":
        graphs += [m() for m in MODELS]
        reply = theirs(fw, graphs, python, {"dtype": args.dtype})
    elif fw == "mindspore":
        graphs += [m() for m in MS_MODELS]
        reply = theirs(fw, graphs, python, {"dtype": args.dtype, "level": args.amp_level})
    else:
        reply = theirs(fw, graphs, python, {"mode": "cpu" if args.dtype == "f16" else "bf16"})
    painted: dict[str, dict[str, str]] = reply["graphs"]  # type: ignore[assignment]
    aten: dict[str, dict[str, list[str]]] = reply.get("aten", {})  # type: ignore[assignment]
    total, agree, shown = 0, 0, 0
    by_op: Counter[str] = Counter()
    for g in graphs:
        mine, why = ours(g, fw, args.dtype, args.amp_level if fw == "mindspore" else None)
        for n in g.nodes:
            if n.op == "arg":
                continue
            total += 1
            a, b = mine[n.name], painted[g.name][n.name]
            if a == b:
                agree += 1
                continue
            by_op[n.op] += 1
            if shown < args.show:
                shown += 1
                calls = aten.get(g.name, {}).get(n.name)
                seen = f" [{' '.join(calls)}]" if calls else ""
                print(
                    f"  {g.name}/{n.name} {n.op} {neighbours(g, n.name)}: ours {a} ({why[n.name]}), {NAMES[fw]} {b}{seen}"
                )
    if fw == "tf":
        lists = "fp16 lists, CPU emulation mode" if args.dtype == "f16" else "bf16 lists, oneDNN mode"
        level = f", LEVEL={args.level}" if args.level else ""
        against = f"TensorFlow {reply['tf']} grappler auto_mixed_precision ({lists}{level})"
        over = f"{args.graphs} random graphs"
    elif fw == "mindspore":
        mode = "PyNative" if args.amp_level == "O1" else "GRAPH_MODE; the model PyNative"
        against = (
            f"MindSpore {reply['mindspore']} amp.auto_mixed_precision ({args.amp_level}, {args.dtype}, {mode} on CPU)"
        )
        over = f"{args.graphs} random graphs and {len(MS_MODELS)} model ({', '.join(m.__name__ for m in MS_MODELS)})"
    else:
        against = f"PyTorch {reply['torch']} CUDA autocast ({args.dtype})"
        over = f"{args.graphs} random graphs and {len(MODELS)} models ({', '.join(m.__name__ for m in MODELS)})"
    print(f"{fw} policy vs {against}: {agree}/{total} ops agree ({100 * agree / max(total, 1):.2f}%) over {over}")
    if by_op:
        print("  disagreements by op: " + ", ".join(f"{k} {v}" for k, v in by_op.most_common()))
    return 0 if agree == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
