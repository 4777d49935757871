"""Random-graph fuzzing: hypothesis DAGs of ascend ops through every precision mode
and the interpreter.

For each graph (`strategies.graphs()`: f16 and f32, bf16 too on ascend910b) and each of the nine modes:

* the pass does not crash, its output verifies, it is idempotent and keeps the signature
  (`strategies.check_invariants`), and it prints as IR that parses back to the same text;
  must_keep_origin_dtype may refuse a graph, with its one-line error;
* the interpreter runs the unrewritten and the rewritten graph on seeded random inputs without a Python
  exception, and every result has the shape and dtype of the signature (inf/NaN are allowed); its step
  walker (memory tracking) gives the same bits as its compiled fast path, and the float status is the same
  with and without the analysis that skips checks; the float64 reference run works too;
* every result whose producers (all ops it depends on) kept their dtypes is bit-identical to the
  unrewritten graph's: the pass's casts and retyping change nothing they should not;
* force_fp32 and must_keep_origin_dtype preserve fp32: must_keep_origin_dtype reduces no op, force_fp32
  only an op without an fp32 kernel; so on graphs whose ops have fp32 kernels their results equal the
  unrewritten graph's (the previous point).

The budget is `ASCEND_FUZZ_EXAMPLES` (default 25, so `make test` stays fast); `make fuzz` runs 10000.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from strategies import MODES, check_invariants, graphs
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue

from ascend_mp.dialects.ascend import AscendOp
from ascend_mp.interpreter import Program
from ascend_mp.ir import parse_module, print_module
from ascend_mp.tools.ascend_run import random_array

EXAMPLES = int(os.environ.get("ASCEND_FUZZ_EXAMPLES", "25"))
FP32_PRESERVING = ("force_fp32", "must_keep_origin_dtype")  # cube_fp16in_fp32out: fp16-in cube ops


def _types(op: Operation) -> tuple[tuple[Attribute, ...], tuple[Attribute, ...]]:
    return tuple(v.type for v in op.operands), tuple(r.type for r in op.results)


def _cones(fn: func.FuncOp, ops: list[AscendOp]) -> list[set[int]]:
    """For each function result, the indices (in `ops`) of the ops it depends on."""
    index = {op: i for i, op in enumerate(ops)}
    ret = fn.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    cones: list[set[int]] = []
    for value in ret.arguments:
        seen: set[int] = set()
        stack: list[SSAValue] = [value]
        while stack:
            owner = stack.pop().owner
            if isinstance(owner, AscendOp) and index[owner] not in seen:
                seen.add(index[owner])
                stack.extend(owner.operands)
        cones.append(seen)
    return cones


def _same(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _check_signature(program: Program, outputs: list[Any], label: str) -> None:
    _, results = program.signature("g")
    assert len(outputs) == len(results), label
    for i, (out, spec) in enumerate(zip(outputs, results)):
        assert isinstance(out, np.ndarray), (label, i, type(out))
        assert out.dtype == spec.dtype and out.shape == spec.shape, (label, i, out.dtype, out.shape, spec.type_str)


def _run(module: ModuleOp, inputs: list[np.ndarray[Any, Any]], label: str) -> list[np.ndarray[Any, Any]]:
    """Run @g with the compiled fast path; the step walker (memory tracking) and the float status
    without its analysis (every float result checked) must agree with it."""
    program = Program.from_module(module)
    outputs = program.run("g", *inputs)
    _check_signature(program, outputs, label)
    status = program.float_status
    event(f"float status {'set' if status else 'clear'}")
    walked = program.run("g", *inputs, track_memory=True)
    assert all(_same(a, b) for a, b in zip(outputs, walked)), f"{label}: the step walker differs from the fast path"
    assert program.float_status == status and program.peak_bytes > 0, label
    unanalysed = Program.from_module(module, status_analysis=False)
    unanalysed.run("g", *inputs)
    assert unanalysed.float_status == status, (
        f"{label}: float status {status} with the analysis, {unanalysed.float_status} without"
    )
    return outputs


@settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(graph=graphs(), seed=st.integers(0, 2**32 - 1), scale=st.sampled_from((1.0, 1000.0)))
def test_every_mode_and_the_interpreter(graph: tuple[str, ModuleOp], seed: int, scale: float) -> None:
    soc, module = graph
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    specs, _ = Program.from_module(module).signature("g")
    rng = np.random.default_rng(seed)
    inputs = [random_array(rng, spec.dtype, spec.shape) for spec in specs]
    inputs = [(a * scale).astype(a.dtype) if a.dtype.kind not in "biu" else a for a in inputs]  # large: fp16 overflows
    reference = _run(module, inputs, "unrewritten")
    wide = Program.from_module(module, reference=True)  # float64, as --compare-modes runs it
    wide_outputs = wide.run("g", *inputs)
    _check_signature(wide, wide_outputs, "float64 reference")
    original_ops = [op for op in module.walk() if isinstance(op, AscendOp)]
    cones = _cones(fn, original_ops)
    text = print_module(module)

    for mode in MODES:
        rewritten = module.clone()
        user_ops = [op for op in rewritten.walk() if isinstance(op, AscendOp)]
        before = [_types(op) for op in user_ops]
        report = check_invariants(soc, rewritten, mode)
        if report is None:  # must_keep_origin_dtype refused the graph (checked by check_invariants)
            event("must_keep_origin_dtype refused the graph")
            continue
        outputs = _run(rewritten, inputs, mode)
        printed = print_module(rewritten)
        assert print_module(parse_module(printed)) == printed, f"{mode}: the rewritten IR does not round-trip"

        kept = {i for i, op in enumerate(user_ops) if _types(op) == before[i]}
        for i, (cone, want, got) in enumerate(zip(cones, reference, outputs)):
            if cone <= kept:
                event(
                    f"{'fp32-preserving' if mode in FP32_PRESERVING else 'other'} mode: result with unchanged producers"
                )
                assert _same(want, got), f"{mode}: result {i} differs although its producers kept their dtypes\n{text}"

        if mode == "must_keep_origin_dtype":
            assert not [d for d in report.ops if d.reduced], f"{mode} reduced an op\n{text}"
        elif mode in FP32_PRESERVING:
            wrong = [d for d in report.ops if d.reduced and d.reason != "no fp32 kernel"]
            assert not wrong, f"{mode} reduced ops that have fp32 kernels: {wrong}\n{text}"
    assert print_module(module) == text, "the unrewritten graph changed"
