"""The dialect and passes inside plain xDSL pipelines: `canonicalize` and `cse` keep the
float status ops (they declare memory effects), and wrapping the project's passes in them leaves
every program's interpreter results unchanged. Runs `xdsl-opt` in-process (its `xdsl.universe`
entry point registers the dialect and the passes, as on the command line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.traits import MemoryEffectKind, Pure, get_effects, is_side_effect_free
from xdsl.xdsl_opt_main import xDSLOptMain

from ascend_mp.builder import mlp
from ascend_mp.dialects.ascend import NPUAllocFloatStatusOp, NPUClearFloatStatusOp, NPUGetFloatStatusOp, ReluOp
from ascend_mp.interpreter import Program
from ascend_mp.ir import print_module, read_module
from ascend_mp.passes.loss_scale import initial_state

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLEAN = "canonicalize,cse"


def xdsl_opt(src: Path, pipeline: str, tmp_path: Path) -> Path:
    """Plain `xdsl-opt SRC -p PIPELINE -o OUT`, in-process."""
    out = tmp_path / f"out{len(list(tmp_path.iterdir()))}.mlir"
    args = [str(src), "-o", str(out)] + (["-p", pipeline] if pipeline else [])
    xDSLOptMain(args=args).run()
    return out


def run_all(path: Path, inputs: dict[str, list[np.ndarray]]) -> dict[str, tuple[list[np.ndarray], bool]]:
    """`ascend-run` of each given function: its results and the float status after it."""
    prog = Program.from_module(read_module(str(path)))
    out = {}
    for name, args in inputs.items():
        results = prog.run(name, *args)
        out[name] = (results, prog.float_status)
    return out


def assert_same(a: dict[str, tuple[list[np.ndarray], bool]], b: dict[str, tuple[list[np.ndarray], bool]]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        (ra, sa), (rb, sb) = a[name], b[name]
        assert sa == sb, f"@{name}: float status {sa} before, {sb} after"
        assert len(ra) == len(rb)
        for i, (x, y) in enumerate(zip(ra, rb)):
            assert x.dtype == y.dtype and x.shape == y.shape, f"@{name} result {i}"
            assert np.array_equal(x, y, equal_nan=True), f"@{name} result {i} changed"


# --------------------------------------------------------------------------------------
# The float status ops' effects
# --------------------------------------------------------------------------------------


def test_status_ops_declare_effects_and_compute_ops_stay_pure() -> None:
    kinds = {
        NPUAllocFloatStatusOp: {MemoryEffectKind.ALLOC},
        NPUClearFloatStatusOp: {MemoryEffectKind.WRITE},
        NPUGetFloatStatusOp: {MemoryEffectKind.READ, MemoryEffectKind.WRITE},
    }
    for cls, expected in kinds.items():
        op = cls.create(operands=[], result_types=[])
        assert not op.has_trait(Pure), cls.name
        effects = get_effects(op)
        assert effects is not None and {e.kind for e in effects} == expected, cls.name
    relu = ReluOp.create(operands=[], result_types=[])
    assert relu.has_trait(Pure) and is_side_effect_free(relu)


STATUS_MODULE = """func.func @f(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %s = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %c = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  %g0 = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  %y = ascend.Exp %x : (tensor<4xf16>) -> tensor<4xf16>
  %g1 = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  %c2 = ascend.NPUClearFloatStatus %s : (tensor<8xf32>) -> tensor<8xf32>
  %g2 = ascend.NPUGetFloatStatus %c : (tensor<8xf32>) -> tensor<8xf32>
  func.return %y, %g0, %g1, %g2 : tensor<4xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
"""


def _status_file(tmp_path: Path) -> Path:
    src = tmp_path / "status.mlir"
    src.write_text(STATUS_MODULE)
    return src


@pytest.mark.parametrize("pipeline", ["canonicalize", "cse", "canonicalize,cse", "dce", "cse,canonicalize,cse"])
def test_xdsl_passes_keep_the_status_ops(tmp_path: Path, pipeline: str) -> None:
    """Two Gets around an overflowing Exp, and a Clear whose result is unused: before the fix, cse merged
    the Gets (the second read 0) and canonicalize erased the Clear (the third read 1)."""
    src = _status_file(tmp_path)
    x = np.array([1.0, 12.0, -3.0, 0.5], np.float16)  # exp(12) = 162755 > 65504: inf in fp16
    with np.errstate(over="ignore"):
        expected_y = np.exp(x.astype(np.float64)).astype(np.float16)
    before = run_all(src, {"f": [x]})
    y, g0, g1, g2 = before["f"][0]
    assert np.array_equal(y, expected_y) and np.isinf(y[1])
    assert (g0[0], g1[0], g2[0]) == (0.0, 1.0, 0.0)  # clear, overflow, cleared again
    out = xdsl_opt(src, pipeline, tmp_path)
    text = out.read_text()
    assert text.count("NPUGetFloatStatus") == 3 and text.count("NPUClearFloatStatus") == 2
    assert_same(before, run_all(out, {"f": [x]}))


# --------------------------------------------------------------------------------------
# canonicalize,cse around the project's passes, on the examples
# --------------------------------------------------------------------------------------


def _inputs(path: Path, seed: int, scale: float) -> dict[str, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    prog = Program.from_module(read_module(str(path)))
    inputs = {}
    for name in prog.public:
        specs = prog.signature(name)[0]
        inputs[name] = [(rng.standard_normal(s.shape) * scale).astype(s.dtype) for s in specs]
    return inputs


FORWARD_PIPELINES = [
    "ascend-attach-caps",
    "ascend-precision{mode=allow_mix_precision}",
    "ascend-precision{mode=force_fp16}",
    "ascend-precision{mode=allow_fp32_to_bf16}",
]


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.mlir")))
@pytest.mark.parametrize("pipeline", ["", *FORWARD_PIPELINES])
def test_canonicalize_cse_around_passes_on_examples(tmp_path: Path, example: str, pipeline: str) -> None:
    src = EXAMPLES / example
    wrapped = ",".join(p for p in (CLEAN, pipeline, CLEAN) if p)
    plain = xdsl_opt(src, pipeline, tmp_path)
    cleaned = xdsl_opt(src, wrapped, tmp_path)
    for seed, scale in ((0, 1.0), (1, 3e3)):  # ordinary values, and values that overflow fp16
        inputs = _inputs(plain, seed, scale)
        assert_same(run_all(plain, inputs), run_all(cleaned, inputs))


TRAIN_PIPELINES = [
    "ascend-autodiff,ascend-loss-scale",
    "ascend-autodiff,ascend-precision{mode=allow_mix_precision},ascend-loss-scale",
    "ascend-autodiff,ascend-precision{mode=force_fp16},ascend-loss-scale{manager=fixed}",
]


def _train_inputs(path: Path, x: np.ndarray, labels: np.ndarray, model: Any) -> dict[str, list[np.ndarray]]:
    module = read_module(str(path))
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "train_step")
    s = initial_state(fn, model.init_params(0))
    return {"train_step": [*s.args(), x, labels, s.loss_scale, s.good_steps, s.step]}


@pytest.mark.parametrize("pipeline", TRAIN_PIPELINES)
def test_canonicalize_cse_around_training_passes(tmp_path: Path, pipeline: str) -> None:
    """The training pipeline (its @train_step clears and reads the float status) with canonicalize,cse
    before, between and after every pass: same loss, weights, scale and skip decision."""
    model = mlp((8, 6, 3))
    src = tmp_path / "forward.mlir"
    src.write_text(print_module(model.forward_module(4)))
    passes = pipeline.split(",")
    wrapped = ",".join([CLEAN, *(f"{p},{CLEAN}" for p in passes)])
    plain = xdsl_opt(src, pipeline, tmp_path)
    cleaned = xdsl_opt(src, wrapped, tmp_path)
    assert read_module(str(cleaned)).verify() is None
    labels = np.eye(3, dtype=np.float32)[[0, 1, 2, 1]]
    rng = np.random.default_rng(0)
    for x in (
        rng.standard_normal((4, 8)).astype(np.float32),
        np.full((4, 8), 1e6, np.float32),
    ):  # the second overflows fp16
        before = run_all(plain, _train_inputs(plain, x, labels, model))
        after = run_all(cleaned, _train_inputs(cleaned, x, labels, model))
        assert_same(before, after)
