"""Snapshot of what `ascend-precision` produces, for checking that a refactoring changes nothing.

Runs the pass over every `.mlir` chunk of `test/filecheck` and `examples`, the built-in models, benchmark chains and
random graphs of `test/strategies.py` (drawn from fixed seeds), under every CANN mode and framework policy and a few
override files, through each entry point (`run_precision` with a report, the pass without records,
`decide_precision` + `apply_plan`, and the rewrite patterns), and writes the IR, the report JSON and any error
message of each run to one JSON file:

    .venv/bin/python benchmarks/precision_snapshot.py OUT.json
    .venv/bin/python benchmarks/precision_snapshot.py OUT2.json --compare OUT.json
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import logging
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))

from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker  # noqa: E402

from ascend_mp.errors import AscendError  # noqa: E402
from ascend_mp.ir import make_context, parse_module, print_module  # noqa: E402
from ascend_mp.modes import V1_MODES  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
INPUTS = os.path.join(ROOT, "test", "filecheck", "Inputs")
VARIANTS: list[dict[str, str]] = [
    {},
    {"modify_mixlist": os.path.join(INPUTS, "mixlist-moves.json")},
    {"modify_mixlist": os.path.join(INPUTS, "mixlist-black-add-white-remove.json")},
    {"keep_dtype": os.path.join(INPUTS, "keep_dtype.txt")},
    {"customize_dtypes": os.path.join(INPUTS, "customize_dtypes.cfg")},
]
POLICY_RUNS: list[dict[str, str]] = [
    {"policy": "tf"},
    {"policy": "tf", "amp_dtype": "bf16"},
    {"policy": "mindspore"},
    {"policy": "mindspore", "level": "O3"},
    {"policy": "torch"},
    {"policy": "torch", "amp_dtype": "bf16"},
]


def sources(small: bool = False) -> list[tuple[str, str]]:
    """(label, MLIR text) of every input (`small`: the precision pass's lit files and fewer random graphs)."""
    out: list[tuple[str, str]] = []
    files = sorted(glob.glob(os.path.join(ROOT, "test", "filecheck", "**", "*.mlir"), recursive=True))
    files += sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir")))
    if small:
        files = [f for f in files if os.path.basename(f).startswith("ascend-precision")]
    for path in files:
        with open(path) as f:
            text = f.read()
        for i, chunk in enumerate(text.split("// -----")):
            out.append((f"{os.path.relpath(path, ROOT)}#{i}", chunk))
    from graphs import chain_module  # benchmarks/graphs.py (this script's folder)

    from ascend_mp.builder import mlp, small_cnn

    for name, model in (("mlp", mlp), ("cnn", small_cnn)):
        out.append((f"builder:{name}", print_module(model().forward_module(4))))
    out.append(("chain:200", print_module(chain_module(200))))
    out.extend(random_graphs(12 if small else 60))
    return out


def random_graphs(n: int) -> list[tuple[str, str]]:
    from hypothesis.internal.conjecture.data import ConjectureData
    from strategies import graphs

    out: list[tuple[str, str]] = []
    rng = random.Random(1234)
    while len(out) < n:
        seed = rng.getrandbits(32)
        data = ConjectureData(random=random.Random(seed))
        try:
            soc, module = data.draw(graphs())
        except Exception:  # an overrun draw: try the next seed
            continue
        out.append((f"random:{seed}:{soc}", print_module(module)))
    return out


def runs() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for mode in V1_MODES:
        for variant in VARIANTS:
            out.append({"mode": mode, **variant})
    out.extend(POLICY_RUNS)
    out.append({"mode_v2": "mixed_bfloat16", "soc": "ascend910b"})
    return out


def one(text: str, opts: dict[str, str], how: str) -> str:
    from ascend_mp.passes.precision import (
        AscendPrecisionPass,
        apply_plan,
        decide_precision,
        load_config,
        populate_precision_patterns,
        run_precision,
    )

    try:
        module = parse_module(text, "<snapshot>")
    except Exception as e:  # noqa: BLE001 - inputs that do not parse are not the pass's business
        return f"parse: {type(e).__name__}"
    try:
        if how == "run":
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "r.json")
                report = run_precision(module, report=path, **opts)
                with open(path) as f:
                    written = f.read()
            return print_module(module) + "\n" + written + json.dumps(report.to_json())
        if how == "pass":
            AscendPrecisionPass(**opts).apply(make_context(), module)
            return print_module(module)
        config = load_config(
            opts.get("mode"),
            opts.get("mode_v2"),
            opts.get("modify_mixlist"),
            opts.get("keep_dtype"),
            opts.get("customize_dtypes"),
            opts.get("soc", "ascend910"),
            None,
            None,
            policy=opts.get("policy"),
            level=opts.get("level"),
            amp_dtype_name=opts.get("amp_dtype"),
        )
        plan = decide_precision(module, config)
        if how == "plan":
            apply_plan(module, plan)
        else:
            PatternRewriteWalker(
                GreedyRewritePatternApplier(populate_precision_patterns(plan), dce_enabled=False)
            ).rewrite_module(module)
        return print_module(module) + "\n" + json.dumps(plan.report().to_json())
    except AscendError as e:
        return f"error: {e}"
    except BaseException as e:  # noqa: BLE001
        return f"crash: {type(e).__name__}: {e}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--compare", metavar="BEFORE")
    ap.add_argument("--quick", action="store_true", help="one entry point per run, for a faster check")
    ap.add_argument("--small", action="store_true", help="the precision lit files and 12 random graphs only")
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)
    result: dict[str, str] = {}
    hows = ("run",) if args.quick else ("run", "pass", "plan", "patterns")
    for label, text in sources(args.small):
        for opts in runs():
            for how in hows:
                key = f"{label} {json.dumps(opts, sort_keys=True)} {how}"
                out = one(text, opts, how)
                result[key] = out.replace(ROOT, "<root>")
    with open(args.out, "w") as f:
        json.dump(result, f, indent=0, sort_keys=True)
    digest = hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()
    print(f"{len(result)} runs, sha256 {digest}")
    if args.compare:
        with open(args.compare) as f:
            before = json.load(f)
        diff = [k for k in sorted(set(before) | set(result)) if before.get(k) != result.get(k)]
        for k in diff[:20]:
            print("DIFF", k)
        print(f"{len(diff)} of {len(result)} differ")
        sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
