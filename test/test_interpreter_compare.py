"""compare_modes: each precision mode against the float64 reference of the fp32 graph."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ascend_mp.interpreter import ALL_V1_MODES, ModeResult, Program, compare_modes
from ascend_mp.interpreter.compare import format_table, relative_errors
from ascend_mp.ir import read_module

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# The CANN guide's precision ranking (most precise first); must_keep_origin_dtype cannot
# compile the CNN (fp16-only Conv2D in an fp32 graph) and drops out of it.
RANKING = ["force_fp32", "must_keep_origin_dtype", "allow_fp32_to_fp16", "allow_mix_precision", "force_fp16"]


def cnn_inputs(seed: int) -> list[np.ndarray]:
    r = np.random.default_rng(seed)
    return [
        r.standard_normal((16, 1, 8, 8)).astype(np.float32),
        (r.standard_normal((8, 1, 3, 3)) * 0.5).astype(np.float32),
        (r.standard_normal(8) * 0.1).astype(np.float32),
        (r.standard_normal((128, 10)) * 0.2).astype(np.float32),
        (r.standard_normal(10) * 0.1).astype(np.float32),
    ]


@pytest.fixture(scope="module")
def cnn_results() -> dict[int, dict[str, ModeResult]]:
    module = read_module(str(EXAMPLES / "cnn.mlir"))
    return {seed: {r.mode: r for r in compare_modes(module, "cnn", cnn_inputs(seed))} for seed in (0, 1, 2)}


def test_cnn_reproduces_the_guides_precision_ranking(cnn_results: dict[int, dict[str, ModeResult]]) -> None:
    for seed, results in cnn_results.items():
        ranked = [results[m] for m in RANKING if results[m].ok]
        assert [r.mode for r in ranked] == [m for m in RANKING if m != "must_keep_origin_dtype"]
        for better, worse in zip(ranked, ranked[1:]):
            assert better.mean_rel_err <= worse.mean_rel_err, (seed, better, worse)
            assert better.max_rel_err <= worse.max_rel_err, (seed, better, worse)
        assert ranked[0].mean_rel_err < ranked[-1].mean_rel_err  # the ranking is not all ties
        assert 0 < ranked[0].max_rel_err < 1e-2 and ranked[-1].max_rel_err < 0.1


def test_a_mode_that_cannot_compile_is_reported(cnn_results: dict[int, dict[str, ModeResult]]) -> None:
    failed = cnn_results[0]["must_keep_origin_dtype"]
    assert not failed.ok and math.isnan(failed.mean_rel_err) and failed.peak_bytes == 0
    assert failed.error is not None and "Conv2D" in failed.error and "\n" not in failed.error


def test_mode_aliases_agree_and_fp16_halves_memory(cnn_results: dict[int, dict[str, ModeResult]]) -> None:
    results = cnn_results[0]
    assert set(results) == set(ALL_V1_MODES)
    for a, b in (("allow_mix_precision", "allow_mix_precision_fp16"),):  # cube_fp16in_fp32out differs from force_fp32 on cube ops
        assert (results[a].max_rel_err, results[a].peak_bytes, results[a].casts) == (results[b].max_rel_err, results[b].peak_bytes, results[b].casts)
    fp16, fp32 = results["force_fp16"], results["force_fp32"]
    assert fp16.low_precision_ops > fp32.low_precision_ops > 0  # force_fp32 still runs Conv2D in fp16
    assert fp16.peak_bytes < 0.75 * fp32.peak_bytes
    assert fp16.casts > 0


def test_compare_modes_leaves_the_module_alone() -> None:
    module = read_module(str(EXAMPLES / "cnn.mlir"))
    before = str(module)
    compare_modes(module, "cnn", cnn_inputs(0), modes=["force_fp16"])
    assert str(module) == before


def test_table_lists_every_mode(cnn_results: dict[int, dict[str, ModeResult]]) -> None:
    table = format_table(list(cnn_results[0].values()))
    lines = table.splitlines()
    assert lines[0].split() == ["mode", "max_rel_err", "mean_rel_err", "peak_bytes", "low_ops", "casts"]
    assert len(lines) == 2 + len(ALL_V1_MODES)
    assert any(line.startswith("must_keep_origin_dtype") and "error:" in line for line in lines)


def test_relative_errors_are_normwise() -> None:
    ref = [np.array([1.0, -2.0, 4.0])]
    assert relative_errors([np.array([1.0, -2.0, 4.0], np.float32)], ref) == (0.0, 0.0)
    mx, mean = relative_errors([np.array([1.5, -2.0, 4.0], np.float16)], ref)
    assert mx == pytest.approx(0.5 / 4) and mean == pytest.approx((0.5 / 3) / (7 / 3))
    assert relative_errors([np.array([np.inf, -2.0, 4.0], np.float16)], ref)[0] == math.inf
    assert relative_errors([np.array([np.nan, -2.0, 4.0], np.float16)], ref)[0] == math.inf
    # integer outputs are not compared; inf in both is no error
    assert relative_errors([np.array([1, 2]), np.array([np.inf])], [np.array([1, 3]), np.array([np.inf])]) == (0.0, 0.0)


def test_comparison_plumbing_on_hand_written_fp16_ir() -> None:
    """Without the pass: the fp16 version of a graph against the float64 reference of its fp32 version."""
    from ascend_mp.ir import parse_module

    text = (EXAMPLES / "mlp.mlir").read_text()
    r = np.random.default_rng(0)
    args = [r.standard_normal(s).astype(np.float32) for s in ((64, 64), (64, 128), (128,), (128, 10), (10,))]
    ref = Program.from_module(parse_module(text), reference=True).run("mlp", *args)
    half = Program.from_module(parse_module(text.replace("f32", "f16")))
    out = half.run("mlp", *[a.astype(np.float16) for a in args])
    mx, mean = relative_errors(out, ref)
    assert 1e-4 < mean < mx < 0.1
