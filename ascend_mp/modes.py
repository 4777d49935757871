"""CANN precision mode names (ATC `--precision_mode` and `--precision_mode_v2`)."""

V1_MODES = (
    "force_fp32",
    "cube_fp16in_fp32out",
    "force_fp16",
    "allow_fp32_to_fp16",
    "must_keep_origin_dtype",
    "allow_mix_precision",
    "allow_mix_precision_fp16",
    "allow_mix_precision_bf16",
    "allow_fp32_to_bf16",
)
"""`precision_mode` values. allow_mix_precision and allow_mix_precision_fp16 are one mode;
cube_fp16in_fp32out differs from force_fp32 on cube ops (fp16 in, fp32 out first)."""

V2_TO_V1 = {
    "fp16": "force_fp16",
    "origin": "must_keep_origin_dtype",
    "cube_fp16in_fp32out": "cube_fp16in_fp32out",
    "mixed_float16": "allow_mix_precision_fp16",
    "mixed_bfloat16": "allow_mix_precision_bf16",
}
"""`precision_mode_v2` value -> the v1 mode with the same semantics."""

V2_MODES = tuple(V2_TO_V1)

DEFAULT_MODE = "force_fp16"
"""ATC's default for inference graphs."""
