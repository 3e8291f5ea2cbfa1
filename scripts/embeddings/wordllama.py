#!/usr/bin/env python3
"""Makes src/discovery/wordllama.bin, the second static table `search_tools` embeds with,
from the trained token embeddings the PyPI package `wordllama` ships in its wheel
(`l2_supercat_256.safetensors`: Llama 2's 32,000 BPE tokens, 256 dimensions, trained so that
their mean embeds a sentence; Matryoshka-trained, so the first 128 dimensions are a smaller
model of their own).

The tokens are renamed to WordPiece's convention so the search's WordPiece reader splits
words with them too (greedy longest match instead of BPE merges: measured as good, see
docs/tool-search.md): a word-initial token `▁refund` becomes `refund`, a continuation
token `und` becomes `##und`; byte and special tokens, non-ASCII ones and those without a
letter or digit are dropped; of tokens that differ only in case the lowercase one is kept,
else the first by id. Vectors are the first `--dims` components, stored as int8 with one
scale per token, in the format of distill.py.

    bash scripts/embeddings/distill.sh   # makes both tables
"""

import argparse
import json
import os

import numpy as np
from safetensors.numpy import load_file

from distill import write_table  # the same file format, written by one function

WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"


def renamed(vocabulary):
    """`(name, id)` of the kept tokens in id order, named the WordPiece way, lowercase."""
    chosen = {}
    for token, index in sorted(vocabulary.items(), key=lambda item: item[1]):
        if token.startswith("<") and token.endswith(">"):
            continue
        name = token[1:] if token.startswith("\u2581") else "##" + token
        if name in ("", "##") or not name.isascii() or not any(c.isalnum() for c in name):
            continue
        lower = name.lower()
        if lower in chosen and name != lower:
            continue
        chosen[lower] = index
    return sorted(chosen.items(), key=lambda item: item[1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--package", required=True, help="the unpacked wheel's wordllama/ directory")
    parser.add_argument("--out", required=True)
    parser.add_argument("--dims", type=int, default=128)
    args = parser.parse_args()
    table = next(iter(load_file(os.path.join(args.package, WEIGHTS)).values()))
    vocabulary = json.load(open(os.path.join(args.package, TOKENIZER), encoding="utf-8"))["model"]["vocab"]
    tokens = renamed(vocabulary)
    vectors = table[[index for _, index in tokens], : args.dims].astype(np.float64)
    write_table(args.out, [name for name, _ in tokens], vectors)

if __name__ == "__main__":
    main()
