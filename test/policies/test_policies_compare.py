"""Policies side by side (ascend_mp/policies/compare.py): compare-policies' table, JSON and dot output, the
AMP flags on the command line."""

from __future__ import annotations

import pytest
from policies_util import _ATTENTION, COMPARE, SEED_004


def test_compare_policies_table_json_and_dot(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from ascend_mp.tools.ascend_opt import main

    src = f"{tmp_path}/m.mlir"
    with open(src, "w") as f:
        f.write(COMPARE)
    out_json, out_dot = f"{tmp_path}/c.json", f"{tmp_path}/g.dot"
    main([src, "--compare-policies", f"--compare-json={out_json}", f"--precision-dot={out_dot}", "--amp_policy=tf"])
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["op", "type", "cann", "allow_mix_precision", "tf", "mindspore", "O2", "torch"]
    # MatMul is low under every policy; Softmax: CANN gray follows the fp16 MatMul, TF infer not between allow
    # ops stays fp32, MindSpore O2 fp16 (not black), torch's fp32 list.
    assert table[1].split() == ["fc", "MatMulV2", "fp16", "fp16", "fp16", "fp16"]
    assert table[2].split() == ["softmax", "SoftmaxV2", "fp16", "fp16", "fp16", "fp32", "<-", "differ"]
    assert table[-1] == "1 of 2 ops differ between the policies"
    data = json.load(open(out_json))
    assert data["differ"] == 1 and data["ops"][1]["reasons"]["torch"] == "torch: fp32 op"
    dot = open(out_dot).read()
    assert dot.startswith("digraph precision {") and dot.rstrip().endswith("}")
    assert 'label="tf"' in dot
    assert dot.count("shape=diamond") == 3  # x and w cast to fp16, the Softmax result back to fp32
    assert dot.count('fillcolor="#cccccc"') == 3  # all inserted
    assert 'fillcolor="#f4a261", label="MatMulV2\\nfc\\nfp16"' in dot
    assert 'fillcolor="#f4a261", label="SoftmaxV2\\nsoftmax\\nfp16"' in dot


def test_amp_flags_on_the_command_line(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from ascend_mp.tools.ascend_opt import main

    src = f"{tmp_path}/m.mlir"
    with open(src, "w") as f:
        f.write(SEED_004)
    main([src, "--amp_policy=mindspore", "--amp_level=O1"])
    out = capsys.readouterr().out
    assert "ascend.MatMulV2" in out and "-> tensor<8x4xf16>" in out
    with pytest.raises(SystemExit) as e:
        main([src, "--amp_policy=mindspore", "--amp_level=O9"])
    message = e.value.code if isinstance(e.value.code, str) else capsys.readouterr().err.strip()
    assert e.value.code != 0 and "\n" not in message
    assert message.startswith("ascend-opt: error: unknown amp_level 'O9' for amp_policy mindspore"), message


def test_compare_policies_shows_torch_running_attention_in_fp16(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ascend-opt --compare-policies` on an attention block: the torch column has both BatchMatMulV2 and the scaled
    scores in fp16 and only the softmax in fp32, as CUDA autocast runs them."""
    from ascend_mp.tools.ascend_opt import main

    src = f"{tmp_path}/attention.mlir"
    with open(src, "w") as f:
        f.write(_ATTENTION)
    main([src, "--compare-policies"])
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[1:-1]}
    torch_column = {name: row[5] for name, row in rows.items()}  # op, type, cann, tf, mindspore O2, torch
    assert torch_column == {"scores": "fp16", "scaled": "fp16", "probs": "fp32", "context": "fp16"}
