"""The long tail: 28 architectures beyond the zoo, exported with both torch exporters, through the importer.

    python models/longtail.py                        # every architecture, both exporters
    python models/longtail.py convnext_tiny llama --exporters legacy

For each architecture (random weights, small inputs, nothing downloaded) and exporter: export to
`models/out/longtail/<name>.<exporter>.onnx`, then, in a fresh process with a time limit, import it with
`ascend_mp.frontend.import_onnx`, run it in fp32 against onnxruntime (single-threaded; largest relative
difference of every output, within 1e-5 or twice onnxruntime's own spread between its optimisation levels,
the zoo's tolerance), and run it under every precision mode (no crash, finite outputs counted).
Prints one row per export and writes the table to `models/out/longtail/report.md`. An export that torch
itself refuses is reported as such (not the importer's failure).

The set: torchvision classifiers (11), segmentation nets (3), vision transformers (2), Hugging Face encoders
(4), encoder-decoders (2), decoder-only LLMs (4) and speech encoders (2).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "longtail"
EXPORTERS = ("dynamo", "legacy")
OPSETS = {"dynamo": 18, "legacy": 17}
LIMIT_S = 900
"""Time limit of one export's check (import, fp32 run, every mode)."""

Inputs = dict[str, np.ndarray[Any, Any]]


def _vision(name: str, size: int = 64, **kwargs: Any) -> Callable[[], tuple[Any, Inputs]]:
    def build() -> tuple[Any, Inputs]:
        sys.path.insert(0, str(HERE))
        from export import _torchvision, calibrate  # pyright: ignore[reportMissingImports]  # models/export.py

        tv = _torchvision()
        factory = getattr(tv.models, name, None) or getattr(tv.models.segmentation, name)
        model = factory(weights=None, **kwargs)
        shape = (1, 3, size, size)
        calibrate(model, shape, 0)
        model.eval()
        return _Logits(model), {"input": _randn(shape)}

    return build


def _vit() -> tuple[Any, Inputs]:
    sys.path.insert(0, str(HERE))
    from export import _torchvision  # pyright: ignore[reportMissingImports]

    tv = _torchvision()
    model = tv.models.VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128, num_classes=10
    )
    return model.eval(), {"input": _randn((1, 3, 32, 32))}


def _randn(shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


class _Logits:
    """A segmentation net's dict output as its 'out' tensor (classifiers pass through)."""

    def __new__(cls, model: Any) -> Any:
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, x: Any) -> Any:
                y = self.model(x)
                return y["out"] if isinstance(y, dict) else y

        return Wrapped().eval()


SEQ, VOCAB = 12, 500


def _tokens() -> Inputs:
    ids = np.random.default_rng(0).integers(0, VOCAB, (2, SEQ)).astype(np.int64)
    mask = np.ones((2, SEQ), np.int64)
    mask[1, SEQ - 4 :] = 0
    return {"input_ids": ids, "attention_mask": mask}


def _hf(config_name: str, model_name: str, **cfg: Any) -> Callable[[], tuple[Any, Inputs]]:
    """An encoder or decoder-only transformers model, (input_ids, attention_mask) -> last hidden state."""

    def build() -> tuple[Any, Inputs]:
        import transformers

        sys.path.insert(0, str(HERE))
        from export import HuggingFace  # pyright: ignore[reportMissingImports]

        config = getattr(transformers, config_name)(vocab_size=VOCAB, **cfg)
        config.use_cache = False
        model = getattr(transformers, model_name)(config)
        return HuggingFace(model).eval(), _tokens()

    return build


def _seq2seq(config_name: str, model_name: str, **cfg: Any) -> Callable[[], tuple[Any, Inputs]]:
    def build() -> tuple[Any, Inputs]:
        import torch
        import transformers

        config = getattr(transformers, config_name)(vocab_size=VOCAB, **cfg)
        config.use_cache = False
        inner = getattr(transformers, model_name)(config).eval()

        class Seq2Seq(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = inner

            def forward(self, input_ids: Any, attention_mask: Any, decoder_input_ids: Any) -> Any:
                return self.model(
                    input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids
                ).last_hidden_state

        inputs = _tokens()
        inputs["decoder_input_ids"] = inputs["input_ids"][:, :6].copy()
        return Seq2Seq().eval(), inputs

    return build


def _whisper() -> tuple[Any, Inputs]:
    import transformers

    config = transformers.WhisperConfig(
        vocab_size=VOCAB,
        num_mel_bins=16,
        d_model=64,
        encoder_layers=2,
        encoder_attention_heads=2,
        decoder_layers=1,
        decoder_attention_heads=2,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        max_source_positions=20,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=1,
    )
    encoder = transformers.WhisperModel(config).get_encoder()
    return _last_hidden_state(encoder), {"input_features": _randn((1, 16, 40))}


def _wav2vec2() -> tuple[Any, Inputs]:
    import transformers

    config = transformers.Wav2Vec2Config(
        vocab_size=32,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        conv_dim=(32, 32, 32),
        conv_stride=(5, 2, 2),
        conv_kernel=(10, 3, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
    )
    return _last_hidden_state(transformers.Wav2Vec2Model(config)), {"input_values": _randn((1, 1600))}


def _last_hidden_state(model: Any) -> Any:
    """A transformers speech model called with its one input, returning the last hidden state (in eval mode)."""
    import torch

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, x: Any) -> Any:
            return self.model(x).last_hidden_state

    return LastHidden().eval()


SMALL_LM = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4}
SMALL_ENC = {**SMALL_LM, "max_position_embeddings": 64}

ARCHITECTURES: dict[str, Callable[[], tuple[Any, Inputs]]] = {
    # torchvision classifiers
    "mobilenet_v3_large": _vision("mobilenet_v3_large"),
    "squeezenet1_1": _vision("squeezenet1_1"),
    "densenet121": _vision("densenet121"),
    "shufflenet_v2_x0_5": _vision("shufflenet_v2_x0_5"),
    "mnasnet0_5": _vision("mnasnet0_5"),
    "mobilenet_v3_small": _vision("mobilenet_v3_small"),
    "regnet_y_400mf": _vision("regnet_y_400mf"),
    "convnext_tiny": _vision("convnext_tiny"),
    "googlenet": _vision("googlenet", aux_logits=False, init_weights=True),
    "efficientnet_v2_s": _vision("efficientnet_v2_s"),
    "resnext50_32x4d": _vision("resnext50_32x4d"),
    # segmentation
    "deeplabv3_mobilenet_v3_large": _vision(
        "deeplabv3_mobilenet_v3_large", num_classes=5, weights_backbone=None, aux_loss=False
    ),
    "lraspp_mobilenet_v3_large": _vision("lraspp_mobilenet_v3_large", num_classes=5, weights_backbone=None),
    "fcn_resnet50": _vision("fcn_resnet50", num_classes=5, weights_backbone=None, aux_loss=False),
    # vision transformers
    "vit_torchvision": _vit,
    "swin_t": _vision("swin_t", size=64),
    # Hugging Face encoders
    "distilbert": _hf("DistilBertConfig", "DistilBertModel", dim=64, hidden_dim=128, n_layers=2, n_heads=2),
    "roberta": _hf("RobertaConfig", "RobertaModel", **SMALL_ENC),
    "albert": _hf("AlbertConfig", "AlbertModel", embedding_size=32, **SMALL_ENC),
    "electra": _hf("ElectraConfig", "ElectraModel", embedding_size=32, **SMALL_ENC),
    # encoder-decoders
    "t5": _seq2seq("T5Config", "T5Model", d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4),
    "bart": _seq2seq(
        "BartConfig",
        "BartModel",
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        max_position_embeddings=64,
    ),
    # decoder-only LLMs
    "llama": _hf("LlamaConfig", "LlamaModel", num_key_value_heads=2, max_position_embeddings=64, **SMALL_LM),
    "mistral": _hf("MistralConfig", "MistralModel", num_key_value_heads=2, max_position_embeddings=64, **SMALL_LM),
    "qwen2": _hf("Qwen2Config", "Qwen2Model", num_key_value_heads=2, max_position_embeddings=64, **SMALL_LM),
    "opt": _hf(
        "OPTConfig",
        "OPTModel",
        hidden_size=64,
        ffn_dim=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        word_embed_proj_dim=64,
        max_position_embeddings=64,
    ),
    # speech encoders
    "whisper_encoder": _whisper,
    "wav2vec2": _wav2vec2,
}


def export(name: str, exporter: str, out: Path) -> str | None:
    """Export one architecture; None when it worked, else torch's one-line reason."""
    import torch

    torch.manual_seed(0)
    model, inputs = ARCHITECTURES[name]()
    np.savez(out / f"{name}.inputs.npz", **inputs)
    args = tuple(torch.from_numpy(a) for a in inputs.values())
    path = out / f"{name}.{exporter}.onnx"
    kwargs: dict[str, Any] = {"input_names": list(inputs), "opset_version": OPSETS[exporter]}
    try:
        with torch.no_grad():
            if exporter == "dynamo":
                torch.onnx.export(model, args, str(path), dynamo=True, external_data=False, **kwargs)
            else:
                torch.onnx.export(model, args, str(path), dynamo=False, **kwargs)
    except Exception as e:  # noqa: BLE001 - torch's refusal is a row of the table, not a crash
        return f"{type(e).__name__}: {str(e).strip().splitlines()[0][:140] if str(e).strip() else ''}"
    return None


def check(path: Path, inputs_path: Path) -> dict[str, Any]:
    """Import, fp32 against onnxruntime, every precision mode (run in a child process)."""
    import onnxruntime as ort

    from ascend_mp.errors import AscendError
    from ascend_mp.frontend import import_onnx
    from ascend_mp.interpreter import Program
    from ascend_mp.modes import V1_MODES
    from ascend_mp.passes.precision import run_precision

    saved = np.load(inputs_path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feed = {i.name: saved[i.name] for i in session.get_inputs()}
    refs = session.run(None, feed)
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(None, feed)
    spread = max(_rel(a, b) for a, b in zip(plain, refs, strict=True))  # onnxruntime's own, between its levels
    start = time.perf_counter()
    try:
        module = import_onnx(str(path))
    except AscendError as e:
        return {"stage": "import", "error": str(e).splitlines()[0][:300]}
    t_import = time.perf_counter() - start
    args = list(feed.values())
    ys = Program.from_module(module).run("main", *args)
    errs = [_rel(y, r) for y, r in zip(ys, refs, strict=True)]
    modes: dict[str, str] = {}
    for mode in V1_MODES:
        decided = module.clone()
        try:
            run_precision(decided, mode=mode)
            outs = Program.from_module(decided).run("main", *args)
            bad = sum(int((~np.isfinite(np.asarray(o, np.float64))).sum()) for o in outs)
            modes[mode] = "ok" if bad == 0 else f"{bad} non-finite"
        except AscendError as e:
            modes[mode] = f"error: {str(e).splitlines()[0][:120]}"
    return {"stage": "ran", "fp32_err": max(errs), "ort_spread": spread, "import_s": t_import, "modes": modes}


def _rel(y: Any, r: Any) -> float:
    y64, r64 = np.asarray(y, np.float64), np.asarray(r, np.float64)
    return float(np.abs(y64 - r64).max() / (np.abs(r64).max() or 1.0))


def _modes_detail(modes: dict[str, str]) -> str:
    """What the modes did: each failure, with must_keep_origin_dtype's refusal of an op that has no kernel for
    its original dtype (ATC refuses such a graph the same way) named as such."""
    refused = "no kernel for its original dtype"
    failing = {m: v for m, v in modes.items() if v != "ok" and refused not in v}
    parts = [f"{m}: {v}" for m, v in failing.items()]
    if any(refused in v for v in modes.values()):
        parts.append("must_keep_origin_dtype refuses an op with no fp32 kernel (as ATC does)")
    ok = sum(v == "ok" for v in modes.values())
    return f"{ok}/{len(modes)} modes run" + (": " + "; ".join(parts) if parts else "")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help=f"default: all ({len(ARCHITECTURES)})")
    p.add_argument("--exporters", nargs="+", default=list(EXPORTERS), choices=EXPORTERS)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--check", nargs=2, metavar=("ONNX", "INPUTS"), help=argparse.SUPPRESS)  # the child process
    args = p.parse_args()
    if args.check:
        print(json.dumps(check(Path(args.check[0]), Path(args.check[1]))))
        return
    unknown = [n for n in args.names if n not in ARCHITECTURES]
    if unknown:
        p.error(f"unknown architecture {unknown[0]!r} (choose from {', '.join(ARCHITECTURES)})")
    import torch

    torch.set_num_threads(1)
    sys.path.insert(0, str(HERE))
    from export import _torchvision  # pyright: ignore[reportMissingImports]

    _torchvision()  # transformers' audio and vision models import torchvision: declare its missing schemas first
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[str] = []
    for name in args.names or list(ARCHITECTURES):
        for exporter in args.exporters:
            start = time.perf_counter()
            problem = export(name, exporter, args.out)
            if problem is not None:
                row = f"| {name} | {exporter} | export refused by torch | {problem} |"
            else:
                proc = subprocess.run(
                    [sys.executable, __file__, "--check", str(args.out / f"{name}.{exporter}.onnx"),
                     str(args.out / f"{name}.inputs.npz")],
                    capture_output=True, text=True, timeout=LIMIT_S, check=False,
                )  # fmt: skip
                if proc.returncode != 0:
                    tail = (proc.stderr.strip().splitlines() or ["?"])[-1][:200]
                    row = f"| {name} | {exporter} | crashed | {tail} |"
                else:
                    r = json.loads(proc.stdout.strip().splitlines()[-1])
                    if r["stage"] == "import":
                        row = f"| {name} | {exporter} | import failed | {r['error']} |"
                    else:
                        detail = _modes_detail(r["modes"])
                        tolerance = max(1e-5, 2 * r["ort_spread"])  # the zoo's: 1e-5, or twice onnxruntime's spread
                        verdict = "matches" if r["fp32_err"] <= tolerance else "DIFFERS from"
                        row = (
                            f"| {name} | {exporter} | {verdict} onnxruntime: fp32 err {r['fp32_err']:.1e} "
                            f"(tolerance {tolerance:.1e}) | {detail} |"
                        )
            rows.append(row)
            print(f"{row}  ({time.perf_counter() - start:.0f} s)", flush=True)
    table = ["| architecture | exporter | result | detail |", "|---|---|---|---|", *rows]
    (args.out / "report.md").write_text("\n".join(table) + "\n")


if __name__ == "__main__":
    main()
