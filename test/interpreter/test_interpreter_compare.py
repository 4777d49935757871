"""compare_modes: each precision mode against the float64 reference of the fp32 graph."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ascend_mp.interpreter import ALL_V1_MODES, ModeResult, Program, compare_modes
from ascend_mp.interpreter.compare import format_table, relative_errors
from ascend_mp.ir import read_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

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
    # force_fp32 and cube_fp16in_fp32out are different rules on cube ops; the mix names are aliases.
    for a, b in (("allow_mix_precision", "allow_mix_precision_fp16"),):
        assert (results[a].max_rel_err, results[a].peak_bytes, results[a].casts) == (
            results[b].max_rel_err,
            results[b].peak_bytes,
            results[b].casts,
        )
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
    assert mx == pytest.approx(0.5 / 4) and mean == pytest.approx((0.5 / 3) / 4)
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


# --------------------------------------------------------------------------------------
# Several samples and per-op error attribution
# --------------------------------------------------------------------------------------

CHAIN = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = ascend.Mul %x, %x {name = "square"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = ascend.Exp %a {name = "exp"} : (tensor<4xf32>) -> tensor<4xf32>
  %c = ascend.Add %b, %x {name = "add"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}
"""


def normwise_max(y: np.ndarray, r: np.ndarray) -> float:
    """max|y - r| / max|r| in float64, inf where y is inf/NaN and r is not (written out, not via the code under test)."""
    y64, r64 = y.astype(np.float64), r.astype(np.float64)
    if not np.isfinite(y64).all():
        return math.inf
    return float(np.max(np.abs(y64 - r64)) / np.max(np.abs(r64)))


def test_attribution_finds_the_op_that_overflows_first() -> None:
    """force_fp16 on x -> x*x -> exp -> +x: exp(12.25) = 208981 overflows fp16, so Exp is the first
    op to diverge; the Mul's error is fp16's rounding of x*x, computed here with numpy alone."""
    from ascend_mp.interpreter.compare import attribute_errors
    from ascend_mp.ir import parse_module

    x = np.array([1.1, -2.3, 3.5, 0.1], np.float32)
    a = attribute_errors(parse_module(CHAIN, "chain.mlir"), "f", [x], "force_fp16")
    assert [(e.index, e.op, e.name, e.dtypes) for e in a.ops] == [
        (0, "Mul", "square", ("f16",)),
        (1, "Exp", "exp", ("f16",)),
        (2, "Add", "add", ("f16",)),
    ]  # inserted casts skipped
    x64 = x.astype(np.float64)
    xh = x.astype(np.float16)
    square_h = (xh.astype(np.float32) * xh.astype(np.float32)).astype(np.float16)  # fp32 internals, one rounding
    assert a.ops[0].max_rel_err == pytest.approx(normwise_max(square_h, x64 * x64), rel=1e-12)
    assert 0 < a.ops[0].max_rel_err < 1e-3
    assert a.ops[1].max_rel_err == math.inf and a.ops[2].max_rel_err == math.inf
    assert a.first_divergent is a.ops[1]
    assert a.ops[1].location == "chain.mlir:3:3"


def test_attribution_of_a_mode_that_does_not_diverge() -> None:
    from ascend_mp.interpreter.compare import attribute_errors, format_attribution
    from ascend_mp.ir import parse_module

    x = np.array([0.5, -0.25, 1.0, 0.125], np.float32)
    a = attribute_errors(parse_module(CHAIN), "f", [x], "force_fp32")
    x64 = x.astype(np.float64)
    ref = [x64 * x64, np.exp(x64 * x64), np.exp(x64 * x64) + x64]
    ours = [(x * x), np.exp(x * x), np.exp(x * x) + x]  # float32, each op rounded once
    for e, r, y in zip(a.ops, ref, ours):
        assert e.dtypes == ("f32",) and e.max_rel_err < 1e-6
        assert e.max_rel_err == pytest.approx(normwise_max(y, r), rel=1e-3, abs=1e-9)
    assert a.first_divergent is None
    assert "no op's max_rel_err exceeds 0.01" in format_attribution(a)


def test_attribution_pairs_user_casts_and_skips_inserted_ones() -> None:
    """A user's Cast pairs with itself (looking through the casts the pass puts before it); the
    pass's own casts have no original."""
    from ascend_mp.interpreter.compare import _body_ops, attribute_errors, pair_ops, precision_rewritten
    from ascend_mp.ir import parse_module

    text = """func.func @g(%x: tensor<8xf32>) -> tensor<8xf32> {
  %h = ascend.Cast %x {name = "to_half"} : (tensor<8xf32>) -> tensor<8xf16>
  %r = ascend.Relu %h {name = "relu"} : (tensor<8xf16>) -> tensor<8xf16>
  %w = ascend.Cast %r {name = "to_float"} : (tensor<8xf16>) -> tensor<8xf32>
  %s = ascend.Exp %w {name = "exp"} : (tensor<8xf32>) -> tensor<8xf32>
  func.return %s : tensor<8xf32>
}
"""
    module = parse_module(text)
    rewritten = precision_rewritten(module, "force_fp16")
    original, new = _body_ops(module, "g"), _body_ops(rewritten, "g")
    pairs = pair_ops(original, new, 1)
    assert pairs == [(0, 0), (1, 1), (2, 2), (3, 3)]
    x = np.linspace(-2, 2, 8).astype(np.float32)
    a = attribute_errors(module, "g", [x], "force_fp16")
    assert [e.op for e in a.ops][:2] == ["Cast", "Relu"] and a.ops[-1].op == "Exp"
    assert a.ops[0].max_rel_err == pytest.approx(normwise_max(x.astype(np.float16), x.astype(np.float64)), rel=1e-12)


def test_pair_ops_tells_inserted_casts_from_the_users() -> None:
    """Hand-written before/after: the pass put casts around a Relu whose result feeds an unnamed
    user cast and then the user's cast "c". The inserted cast of %x has no original; the unnamed
    user cast pairs with the pass's cast of the same value (both hold %a as f32); "c" pairs by name."""
    from ascend_mp.interpreter.compare import _body_ops, pair_ops
    from ascend_mp.ir import parse_module

    before = parse_module("""func.func @g(%x: tensor<8xf32>) -> tensor<8xf16> {
  %a = ascend.Relu %x : (tensor<8xf32>) -> tensor<8xf32>
  %b = ascend.Cast %a : (tensor<8xf32>) -> tensor<8xf32>
  %h = ascend.Cast %b {name = "c"} : (tensor<8xf32>) -> tensor<8xf16>
  func.return %h : tensor<8xf16>
}
""")
    after = parse_module("""func.func @g(%x: tensor<8xf32>) -> tensor<8xf16> {
  %0 = ascend.Cast %x : (tensor<8xf32>) -> tensor<8xf16>
  %a = ascend.Relu %0 : (tensor<8xf16>) -> tensor<8xf16>
  %1 = ascend.Cast %a : (tensor<8xf16>) -> tensor<8xf32>
  %h = ascend.Cast %1 {name = "c"} : (tensor<8xf32>) -> tensor<8xf16>
  func.return %h : tensor<8xf16>
}
""")
    assert pair_ops(_body_ops(before, "g"), _body_ops(after, "g"), 1) == [(0, 1), (1, 2), (2, 3)]


def test_samples_take_the_max_and_mean_over_inputs() -> None:
    module = read_module(str(EXAMPLES / "cnn.mlir"))
    modes = ["force_fp32", "force_fp16"]
    singles = [{r.mode: r for r in compare_modes(module, "cnn", cnn_inputs(seed), modes)} for seed in (0, 1, 2)]
    (fp32, fp16) = compare_modes(module, "cnn", cnn_inputs(0), modes, more_samples=[cnn_inputs(1), cnn_inputs(2)])
    for r in (fp32, fp16):
        per = [s[r.mode] for s in singles]
        assert r.samples == 3 and per[0].samples == 1
        assert r.max_rel_err == max(p.max_rel_err for p in per)
        assert r.mean_max_rel_err == pytest.approx(np.mean([p.max_rel_err for p in per]))
        assert r.mean_rel_err == pytest.approx(np.mean([p.mean_rel_err for p in per]))
        assert per[0].mean_max_rel_err == per[0].max_rel_err
    assert fp32.mean_rel_err < fp16.mean_rel_err
    table = format_table([fp32, fp16]).splitlines()
    assert table[0].split() == ["mode", "max_rel_err", "mean_max_err", "mean_rel_err", "peak_bytes", "low_ops", "casts"]
    assert "over 3 samples" in table[-1]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    from ascend_mp.tools.ascend_run import main

    main(argv)
    return capsys.readouterr().out


def test_cli_samples_modes_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    cnn = str(EXAMPLES / "cnn.mlir")
    data = json.loads(
        run_cli(
            [cnn, "--compare-modes", "--samples", "2", "--seed", "5", "--modes", "force_fp16,force_fp32", "--json"],
            capsys,
        )
    )
    assert data["function"] == "cnn" and data["seeds"] == [5, 6]
    assert [m["mode"] for m in data["modes"]] == ["force_fp16", "force_fp32"]
    assert all(m["ok"] and m["samples"] == 2 for m in data["modes"])
    assert data["modes"][1]["mean_rel_err"] < data["modes"][0]["mean_rel_err"]
    text = run_cli([cnn, "--compare-modes", "--samples", "2", "--modes", "force_fp16"], capsys)
    assert "mean_max_err" in text and "force_fp32" not in text.split("mode ")[-1]


def test_cli_attribution_json_and_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    src = tmp_path / "chain.mlir"
    src.write_text(CHAIN)
    x = tmp_path / "x.npy"
    np.save(x, np.array([1.1, -2.3, 3.5, 0.1], np.float32))
    data = json.loads(run_cli([str(src), "--input", f"x={x}", "--attribute-errors", "force_fp16", "--json"], capsys))
    att = data["attribution"]
    assert att["mode"] == "force_fp16" and att["first_divergent"] == 1
    assert [o["op"] for o in att["ops"]] == ["Mul", "Exp", "Add"] and att["ops"][1]["max_rel_err"] == "inf"
    text = run_cli([str(src), "--input", f"x={x}", "--attribute-errors", "force_fp16"], capsys)
    marked = [line for line in text.splitlines() if line.startswith(">>")]
    assert len(marked) == 1 and "Exp" in marked[0]
    assert f"first divergent op (max_rel_err > 0.01): #1 Exp exp at {src}:3:3" in text


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--compare-modes", "--samples", "0"], "--samples expects a positive count, got 0"),
        (["--compare-modes", "--modes", "force_fp16,fp8"], "--modes: unknown precision mode 'fp8' (modes: "),
        (["--attribute-errors", "fastest"], "--attribute-errors: unknown precision mode 'fastest' (modes: "),
        (
            ["--attribute-errors", "force_fp16", "--precision_mode", "force_fp32"],
            "--attribute-errors runs every precision mode; drop --precision_mode/--precision_mode_v2",
        ),
        (["--attribute-errors", "force_fp16", "-o", "out.npz"], "--attribute-errors writes no .npz file; drop -o"),
        (["--json"], "--samples, --modes and --json go with --compare-modes or --attribute-errors"),
        (["--samples", "3"], "--samples, --modes and --json go with --compare-modes or --attribute-errors"),
    ],
)
def test_cli_comparison_usage_errors(capsys: pytest.CaptureFixture[str], extra: list[str], message: str) -> None:
    """Bad comparison flags: one line, `ascend-run: error: ...`, exit status 2 (a usage error)."""
    from ascend_mp.tools.ascend_run import main

    with pytest.raises(SystemExit) as info:
        main([str(EXAMPLES / "cnn.mlir"), *extra])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"ascend-run: error: {message}"), err


VIEW_THEN_IN_PLACE = """func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %a = ascend.Relu %x {name = "relu"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = ascend.Transpose %a {perm = array<i64: 1, 0>, name = "t"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %s = ascend.Add %t, %y {name = "add"} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %s : tensor<3x2xf32>
}
"""


@pytest.mark.parametrize("reference", [True, False])
def test_trace_records_each_value_as_computed_even_when_a_view_is_overwritten_later(reference: bool) -> None:
    """The Transpose's result is a view of the Relu's array and the Add runs in place into it: the trace
    must still hold the Relu's value as the Relu computed it (it once held the Add's), checked against
    numpy float64 evaluations of each op (a false first divergent Transpose came from this)."""
    from ascend_mp.ir import parse_module

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal((3, 2)).astype(np.float32)
    program = Program.from_module(parse_module(VIEW_THEN_IN_PLACE, "view.mlir"), reference=reference)
    _, steps = program.trace("f", x, y)
    relu = np.maximum(x.astype(np.float64), 0)
    want = [relu, relu.T, relu.T + y]
    assert len(steps) == 3
    for (got,), expected in zip(steps, want, strict=True):
        np.testing.assert_allclose(np.asarray(got, np.float64), expected, rtol=1e-6)
