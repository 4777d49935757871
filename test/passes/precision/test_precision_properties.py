"""The ascend-precision pass (docs/design.md §5): properties on random graphs: verifier-valid, idempotent, casts placed, warnings."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from precision_util import FILECHECK, MLP, assert_dominance, assert_right_before_first_consumer, parse, run, write
from strategies import MODES, SOCS, check_invariants, graphs
from xdsl.dialects.builtin import ModuleOp

from ascend_mp.dialects.ascend import CastOp
from ascend_mp.errors import AscendError
from ascend_mp.ir import print_module
from ascend_mp.passes.precision import (
    run_precision,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_random_graphs_in_every_mode(graph: tuple[str, ModuleOp]) -> None:
    soc, module = graph
    for mode in MODES:
        check_invariants(soc, module.clone(), mode)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_random_graphs_casts_sit_right_before_their_first_consumer(graph: tuple[str, ModuleOp]) -> None:
    soc, module = graph
    for mode in MODES:
        m = module.clone()
        written = {op for op in m.walk() if isinstance(op, CastOp)}
        try:
            run_precision(m, mode=mode, soc=soc)
        except AscendError:
            continue
        assert_dominance(m)
        inserted = {op for op in m.walk() if isinstance(op, CastOp)} - written
        assert_right_before_first_consumer(inserted, inserted)


@pytest.mark.parametrize("path", sorted(FILECHECK.glob("ascend-precision*.mlir")), ids=lambda p: p.name)
def test_filecheck_inputs_idempotent_in_every_mode(path: Path) -> None:
    """Every FileCheck input, in every mode on both SoCs: output verifies, a second run changes nothing."""
    for chunk in path.read_text().split("// -----"):
        for soc in SOCS:
            for mode in MODES:
                module = parse(chunk)
                try:
                    run_precision(module, mode=mode, soc=soc)
                except AscendError as e:
                    assert mode == "must_keep_origin_dtype", str(e)
                    continue
                module.verify()
                once = print_module(module)
                run_precision(module, mode=mode, soc=soc)
                assert print_module(module) == once, (path.name, mode, soc)


def test_a_large_keep_dtype_file_that_matches_nothing_gives_one_summary_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """20,000 unmatched names are one warning line naming the count and the first few."""
    names = [f"ghost_{i:05d}" for i in range(20_000)]
    write(tmp_path, "keep.txt", "\n".join(names) + "\nOpType::Conv2D\n")
    with caplog.at_level(logging.WARNING, logger="ascend_mp"):
        _, report = run(MLP, mode="force_fp16", keep_dtype=str(tmp_path / "keep.txt"))
    unmatched = [w for w in report.warnings if "match no op" in w or "matches no op" in w]
    assert len(unmatched) == 1, unmatched[:3]
    assert "20001 keep_dtype entries match no op: 'ghost_00000', 'ghost_00001'" in unmatched[0]
    assert unmatched[0].endswith("and 19996 more")


def test_reduce_precision_is_logged_when_only_the_inputs_are_reduced(caplog: pytest.LogCaptureFixture) -> None:
    """ops whose outputs keep their dtype (bool/int results, fp16-in/fp32-out kernels) but whose
    inputs go to fp16 get their `Reduce precision` line too."""
    text = """
    func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>, %m: tensor<4x8xf32>) -> (tensor<4xi1>, tensor<4xi32>) {
      %g = ascend.Greater %x, %y {name = "gt"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
      %a = ascend.ArgMaxV2 %m {name = "argmax", dimension = 1 : i64} : (tensor<4x8xf32>) -> tensor<4xi32>
      func.return %g, %a : tensor<4xi1>, tensor<4xi32>
    }
    """
    with caplog.at_level(logging.INFO, logger="ascend_mp"):
        _, report = run(text, mode="force_fp16")
    lines = [r.message for r in caplog.records if r.message.startswith("Reduce precision")]
    for name in ("gt", "argmax"):
        assert report.by_name(name).reduced, name
        assert f"Reduce precision: {name} float32 -> float16 (mode)" in lines, lines
