"""Differential conformance: the `tf` policy of `ascend-precision` against TensorFlow's grappler.

    python conformance/run.py tf [--graphs 500] [--seed 0] [--python PATH]

Builds seeded random graphs from the ops TensorFlow shares with the dialect, decides them with the
policy, builds the same graphs in TensorFlow (in its own venv: `--python`, default the cached venv
`make conformance` creates) and runs grappler's auto_mixed_precision on them, then compares the dtype
of every op. Prints the agreement rate and every disagreement with the op, its producers and consumers
and both decisions; exits 1 when an undocumented disagreement remains.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.graphs import KINDS, Graph, random_graph, to_module  # noqa: E402

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("ASCEND_MP_CACHE", Path.home() / ".cache" / "ascend-mp"))
TF_OPS = tuple(KINDS)


def ours(g: Graph, low: str) -> dict[str, str]:
    """The tf policy's dtype for every op of `g` (its first result's); the environment's
    TF_AUTO_MIXED_PRECISION_* variables apply. bf16 is decided on ascend910b, the SoC with bf16 kernels."""
    from ascend_mp.passes.precision import run_precision

    module = to_module(g)
    report = run_precision(module, policy="tf", amp_dtype=low, soc="ascend910b" if low == "bf16" else "ascend910")
    return {d.name: d.chosen.outputs[0] for d in report.ops if d.name is not None}


def theirs(graphs: list[Graph], python: str, mode: str) -> tuple[str, dict[str, dict[str, str]]]:
    request = json.dumps({"mode": mode, "graphs": [g.to_json() for g in graphs]})
    done = subprocess.run([python, str(HERE / "tf_side.py")], input=request, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"tf_side.py failed:\n{done.stderr[-3000:]}")
    reply = json.loads(done.stdout)
    return reply["tf"], reply["graphs"]


def neighbours(g: Graph, name: str) -> str:
    ops = {n.name: n.op for n in g.nodes}
    node = next(n for n in g.nodes if n.name == name)
    ins = ", ".join(f"{ops[i]}" for i in node.inputs)
    outs = ", ".join(n.op for n in g.nodes if name in n.inputs)
    return f"<- [{ins}] -> [{outs or 'return'}]"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("framework", choices=("tf",))
    p.add_argument("--graphs", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", type=int, default=10)
    p.add_argument("--python", default=str(CACHE / "venvs" / "tf" / "bin" / "python"))
    p.add_argument("--show", type=int, default=20, help="disagreements to print")
    p.add_argument("--dtype", choices=("f16", "bf16"), default="f16",
                   help="f16: the CUDA lists (grappler's CPU emulation mode); bf16: the oneDNN lists")
    p.add_argument("--level", choices=("", "TREAT_INFER_AS_DENY", "UNSAFE_FORCE_ALL"), default="",
                   help="TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL for both sides")
    args = p.parse_args(argv)
    if args.level:
        os.environ["TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL"] = args.level
    graphs = [random_graph(args.seed + i, TF_OPS, args.size) for i in range(args.graphs)]
    version, painted = theirs(graphs, args.python, "cpu" if args.dtype == "f16" else "bf16")
    total, agree, shown = 0, 0, 0
    by_op: Counter[str] = Counter()
    for g in graphs:
        mine = ours(g, args.dtype)
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
                print(f"  {g.name}/{n.name} {n.op} {neighbours(g, n.name)}: ours {a}, TensorFlow {b}")
    lists = "fp16 lists, CPU emulation mode" if args.dtype == "f16" else "bf16 lists, oneDNN mode"
    level = f", LEVEL={args.level}" if args.level else ""
    print(f"tf policy vs TensorFlow {version} grappler auto_mixed_precision ({lists}{level}): "
          f"{agree}/{total} ops agree ({100 * agree / max(total, 1):.2f}%) over {len(graphs)} random graphs")
    if by_op:
        print("  disagreements by op: " + ", ".join(f"{k} {v}" for k, v in by_op.most_common()))
    return 0 if agree == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
