"""`ascend-tune`: the files it writes make the mode meet the tolerance, checked with ascend-opt and onnxruntime."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from classifiers import cnn, dataset, deep_hot, ort_run
from cli_util import run_main
from onnx import TensorProto

from ascend_mp.tools.ascend_opt import main as opt_main
from ascend_mp.tools.ascend_tune import main as tune_main


@pytest.fixture(scope="module")
def hot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("tune")
    model = deep_hot()
    onnx.save(model, root / "m.onnx")
    np.savez(root / "d.npz", **dataset(model, 96))
    return root / "m.onnx", root / "d.npz"


def _emit(model: Path, input_shape: str, tmp: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> Path:
    """`model` compiled by ascend-opt under allow_mix_precision with `flags`, written with --emit-onnx: the file."""
    out = tmp / f"out{len(list(tmp.iterdir()))}.onnx"
    args = [str(model), "--precision_mode=allow_mix_precision", f"--input_shape={input_shape}", *flags]
    code, _, err = run_main(opt_main, [*args, "--emit-onnx", str(out), "-o", str(tmp / "o.mlir")], capsys)
    assert code == 0, err
    return out


def _agreement_via_onnxruntime(
    model: Path, data: Path, tmp: Path, capsys: pytest.CaptureFixture[str], *flags: str
) -> tuple[float, onnx.ModelProto]:
    """Compile `model` with ascend-opt and `flags`, export it as ONNX, run it with onnxruntime: top-1 agreement with fp32.

    The plan is made at batch 1; the exported model keeps the graph's dynamic batch and runs the whole dataset."""
    out = _emit(model, "x:1,16", tmp, capsys, *flags)
    x = dict(np.load(data))["x"]
    fp32 = ort_run(onnx.load(model), {"x": x})[0].argmax(-1)
    exported = onnx.load(out)
    with np.errstate(all="ignore"):
        mixed = ort_run(exported, {"x": x})[0].astype(np.float64).argmax(-1)
    return float(np.mean(mixed == fp32)), exported


def _rounded_to(model: onnx.ModelProto, node: str) -> set[int]:
    """The dtypes node `node`'s first input is rounded to on its way in (the Casts feeding it)."""
    producers = {o: n for n in model.graph.node for o in n.output}
    tensor = next(n for n in model.graph.node if n.name == node).input[0]
    seen: set[int] = set()
    while tensor in producers and producers[tensor].op_type == "Cast":
        seen.add(producers[tensor].attribute[0].i)
        tensor = producers[tensor].input[0]
    return seen


def _output_rounded_to_fp16(model: onnx.ModelProto, node: str) -> bool:
    """Whether node `node`'s result is rounded to fp16 (a Cast to fp16 takes it)."""
    out = next(n for n in model.graph.node if n.name == node).output[0]
    return any(
        n.op_type == "Cast" and n.input[0] == out and n.attribute[0].i == TensorProto.FLOAT16 for n in model.graph.node
    )


def test_tuned_files_meet_the_tolerance(
    hot: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model, data = hot
    before, _ = _agreement_via_onnxruntime(model, data, tmp_path, capsys)
    assert before < 0.9  # allow_mix_precision breaks this model
    mixlist, keep, report = tmp_path / "mix.json", tmp_path / "keep.cfg", tmp_path / "report.json"
    code, out, err = run_main(
        tune_main,
        [
            str(model),
            str(data),
            "--min-agreement",
            "0.99",
            "--mixlist",
            str(mixlist),
            "--keep-dtype",
            str(keep),
            "--report",
            str(report),
        ],
        capsys,
    )
    assert code == 0, err
    assert json.loads(mixlist.read_text()) == {"black-list": {"to-add": ["MatMulV2"]}}
    kept = keep.read_text().split()
    assert "mm1" in kept and "mm0" not in kept and len(kept) <= 3
    with_mixlist, _ = _agreement_via_onnxruntime(model, data, tmp_path, capsys, f"--modify_mixlist={mixlist}")
    with_keep, exported = _agreement_via_onnxruntime(model, data, tmp_path, capsys, f"--keep_dtype={keep}")
    assert with_mixlist >= 0.99 and with_keep >= 0.99
    assert TensorProto.FLOAT16 in _rounded_to(exported, "mm0") and _output_rounded_to_fp16(exported, "mm0")  # stays low
    assert not _output_rounded_to_fp16(exported, "mm1")
    r = json.loads(report.read_text())
    assert r["met"] and r["keep_dtype"] == kept and r["flops"]["low_after_keep_dtype"] > 0
    assert r["evaluations"] < 2 * 7  # bisection and pruning, not one evaluation per subset


def test_deterministic(hot: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    runs = []
    for _ in range(2):
        code, out, err = run_main(tune_main, [str(hot[0]), str(hot[1]), "--json"], capsys)
        assert code == 0, err
        r = json.loads(out)
        r.pop("seconds")
        runs.append(r)
    assert runs[0] == runs[1]


def test_unreachable_tolerance_says_so(
    hot: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keep = tmp_path / "keep.cfg"
    code, out, err = run_main(
        tune_main, [str(hot[0]), str(hot[1]), "--max-rel-err", "1e-12", "--keep-dtype", str(keep)], capsys
    )
    assert code == 1 and err.count("\n") == 1 and "not reachable" in err
    assert not keep.exists()


def test_nothing_to_keep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = cnn()
    onnx.save(model, tmp_path / "m.onnx")
    np.savez(tmp_path / "d.npz", **dataset(model, 32))
    code, out, err = run_main(tune_main, [str(tmp_path / "m.onnx"), str(tmp_path / "d.npz"), "--json"], capsys)
    assert code == 0, err
    r = json.loads(out)
    assert r["met"] and r["keep_dtype"] == [] and r["evaluations"] == 1


def test_usage_errors(hot: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(tune_main, [str(hot[0]), str(hot[1]), "--min-agreement", "2"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--min-agreement expects a fraction" in err
    np_labels = ["--max-accuracy-drop", "0.01"]
    code, _, err = run_main(tune_main, [str(hot[0]), str(hot[1]), "--precision_mode", "fastest", *np_labels], capsys)
    assert code == 2 and err.count("\n") == 1


def test_subset_result_is_checked_on_the_whole_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One sample of 40 overflows in fp16: a search on 1 drawn sample that misses it finds nothing to keep,
    and the check on the whole dataset says so (exit 1, no file) instead of returning it."""
    model = deep_hot()
    onnx.save(model, tmp_path / "m.onnx")
    rng = np.random.default_rng(5)
    x = rng.normal(0, 0.01, (40, 16)).astype(np.float32)
    x[0] = rng.normal(0, 3.0, 16)
    np.savez(tmp_path / "d.npz", x=x)
    outcomes = []
    for seed in range(3):
        keep = tmp_path / f"keep{seed}.cfg"
        code, out, err = run_main(
            tune_main,
            [
                str(tmp_path / "m.onnx"),
                str(tmp_path / "d.npz"),
                "--samples",
                "1",
                "--seed",
                str(seed),
                "--keep-dtype",
                str(keep),
            ],
            capsys,
        )
        outcomes.append(code)
        if code == 1:
            assert "miss the tolerance on the whole dataset" in err and err.count("\n") == 1 and not keep.exists()
        else:
            assert code == 0 and "mm1" in keep.read_text().split()
    assert 1 in outcomes


def _emitted_outputs(model: Path, data: Path, tmp: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> Any:
    """`model` compiled under allow_mix_precision with `flags`, exported as ONNX and run by onnxruntime on `data`,
    next to onnxruntime's fp32 run of `model`: (fp32, mixed) outputs."""
    onnx_model = onnx.load(model)
    name = onnx_model.graph.input[0].name
    x = dict(np.load(data))[name]
    shape = ",".join(["1", *map(str, x.shape[1:])])
    out = _emit(model, f"{name}:{shape}", tmp, capsys, *flags)
    with np.errstate(all="ignore"):
        return ort_run(onnx_model, {name: x})[0], ort_run(onnx.load(out), {name: x})[0].astype(np.float32)


def test_rtol_atol_is_np_allclose_against_fp32(
    hot: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--rtol/--atol: auto_convert_mixed_precision's criterion (np.allclose(fp32, mixed, rtol, atol) on every output
    element), checked on the exported model with onnxruntime."""
    model, data = hot
    fp32, mixed = _emitted_outputs(model, data, tmp_path, capsys)
    assert not np.allclose(fp32, mixed, rtol=1e-2, atol=1e-3)
    keep, report = tmp_path / "keep.cfg", tmp_path / "r.json"
    code, out, err = run_main(
        tune_main,
        [str(model), str(data), "--rtol", "1e-2", "--atol", "1e-3", "--keep-dtype", str(keep), "--report", str(report)],
        capsys,
    )
    assert code == 0, err
    assert "worst |fp32 - y| / (atol + rtol*|y|) (rtol 0.01, atol 0.001)" in out
    r = json.loads(report.read_text())
    assert r["tolerance"]["rtol"] == 1e-2 and r["tolerance"]["atol"] == 1e-3 and r["tolerance"]["min_agreement"] is None
    assert r["after"]["allclose_ratio"] <= 1.0 and r["before"]["allclose_ratio"] == "inf"  # fp16 overflows
    kept = keep.read_text().split()
    fp32, mixed = _emitted_outputs(model, data, tmp_path, capsys, f"--keep_dtype={keep}")
    assert np.allclose(fp32, mixed, rtol=1e-2, atol=1e-3)
    for dropped in kept:  # pruned: none of the kept ops can go
        (tmp_path / "less.cfg").write_text("".join(f"{n}\n" for n in kept if n != dropped))
        fp32, mixed = _emitted_outputs(model, data, tmp_path, capsys, f"--keep_dtype={tmp_path / 'less.cfg'}")
        assert not np.allclose(fp32, mixed, rtol=1e-2, atol=1e-3), dropped


def test_ops_without_a_high_kernel_are_not_candidates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Conv2D has only fp16 kernels on ascend910: kept or not it runs fp16, so a tight allclose is unreachable and
    the message says why; an --op_info table that gives Conv2D an fp32 kernel makes it a candidate, and the
    configuration found then meets the tolerance in onnxruntime."""
    model = cnn()
    onnx.save(model, tmp_path / "m.onnx")
    np.savez(tmp_path / "d.npz", **dataset(model, 16))
    args = [str(tmp_path / "m.onnx"), str(tmp_path / "d.npz"), "--rtol", "1e-5", "--atol", "1e-7"]
    code, out, err = run_main(tune_main, [*args, "--json"], capsys)
    assert code == 1 and err.count("\n") == 1 and "not reachable" in err
    assert "1 ops stay low whatever --keep_dtype says" in err and "Conv2D x1" in err
    assert json.loads(out)["stay_low"] == {"conv": ["Conv2D"]}
    code, out, err = run_main(tune_main, args, capsys)
    assert code == 1 and "with --keep_dtype" not in out  # no file, no share for it
    table = json.loads((Path(__file__).parents[2] / "ascend_mp/opinfo/data/aic-ascend910-ops-info.json").read_text())
    conv = table["Conv2D"]
    for key, entry in conv.items():
        if key.startswith(("input", "output")):
            entry["dtype"] += ",float"
    (tmp_path / "ops.json").write_text(json.dumps({"Conv2D": conv}))
    keep = tmp_path / "keep.cfg"
    op_info = f"--op_info={tmp_path / 'ops.json'}"
    code, out, err = run_main(tune_main, [*args, op_info, "--json", "--keep-dtype", str(keep)], capsys)
    assert code == 0, err
    r = json.loads(out)
    assert r["stay_low"] == {} and "conv" in keep.read_text().split()
    fp32, mixed = _emitted_outputs(
        tmp_path / "m.onnx", tmp_path / "d.npz", tmp_path, capsys, op_info, f"--keep_dtype={keep}"
    )
    assert np.allclose(fp32, mixed, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("flag", "value"), [("--rtol", "-1"), ("--atol", "nan"), ("--atol", "inf")])
def test_bad_rtol_atol(hot: tuple[Path, Path], flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(tune_main, [str(hot[0]), str(hot[1]), flag, value], capsys)
    assert code == 2 and err.count("\n") == 1 and f"{flag} expects a non-negative number, got {value}" in err
