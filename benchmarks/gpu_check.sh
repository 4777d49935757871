#!/usr/bin/env bash
# The IREE GPU check (benchmarks/gpu_check.py; docs/usage/lowering.md), under 5 minutes:
#   benchmarks/gpu_check.sh prepare [--models mlp,cnn,...]   # here: compile for CUDA and CPU (no GPU needed)
#   benchmarks/gpu_check.sh run [--device cuda|cpu]          # on the GPU machine: python3 + numpy only
# Everything the run needs is under benchmarks/out/gpu_check (carry that folder to the GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
step="${1:-}"
shift || true
case "$step" in
  prepare) exec .venv/bin/python benchmarks/gpu_check.py prepare "$@" ;;
  run) exec python3 benchmarks/gpu_check.py run "$@" ;;
  *) echo "usage: benchmarks/gpu_check.sh prepare|run [options]" >&2; exit 2 ;;
esac
