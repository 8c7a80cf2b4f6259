"""``sanigate index build``: a co-occurrence index from corpora.

A document of K is a paragraph (see ``corpus.paragraphs``): with whole
articles as the unit almost everything co-occurs with a common entity (the
shared knowledge notes measure it), paragraphs keep the real associations.

Terms indexed per paragraph:
  * every content word, lemmatised;
  * every WordNet multi-word noun that occurs ("blood transfusion");
  * every run of 2-4 capitalised words and its sub-runs ("Los Angeles",
    "Dean Winchester"), kept when seen in at least ``min_phrase_df`` paragraphs.
Sub-runs are all counted so that a phrase's count does not depend on what
happens to stand next to it.
"""

from __future__ import annotations

import hashlib
import itertools
import multiprocessing as mp
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gateway.knowledge.corpus import Document, paragraphs, read_corpus
from gateway.knowledge.index_format import U32Array, write_index
from gateway.model.terms import NORMALIZATION_VERSION, PhraseSet, Token, is_term_token, key_of, tokenize
from gateway.taxonomy.wordnet import WordNet

MAX_CAPITALIZED_RUN = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildConfig:
    min_df: int = 2
    min_phrase_df: int = 3
    workers: int = 2
    batch_size: int = 100
    excluded_titles: frozenset[str] = frozenset()


def paragraph_keys(tokens: Sequence[Token], phrases: PhraseSet) -> set[str]:
    keys = {t.norm for t in tokens if is_term_token(t)}
    for i in range(len(tokens)):
        for n in phrases.matches_at(tokens, i):
            keys.add(" ".join(t.norm for t in tokens[i : i + n]))
    run: list[Token] = []
    for tok in [*tokens, None]:
        if (
            tok is not None
            and tok.text[:1].isupper()
            and not tok.is_stop
            and not tok.is_number
            and (not run or tok.joined)
        ):
            run.append(tok)
            continue
        if len(run) >= 2:
            for a in range(len(run)):
                for b in range(a + 2, min(len(run), a + MAX_CAPITALIZED_RUN) + 1):
                    keys.add(" ".join(t.norm for t in run[a:b]))
        run = [tok] if tok is not None and tok.text[:1].isupper() and not tok.is_stop and not tok.is_number else []
    return keys


_worker_wordnet: WordNet | None = None
_worker_phrases: PhraseSet | None = None


def wordnet_phrases(wordnet: WordNet) -> PhraseSet:
    phrases = PhraseSet()
    for name in wordnet.multiword_nouns():
        phrases.add(key_of(name, wordnet.lemmatize))
    return phrases


def _init_worker() -> None:
    global _worker_wordnet, _worker_phrases
    _worker_wordnet = WordNet()
    _worker_phrases = wordnet_phrases(_worker_wordnet)


def _index_batch(texts: list[str]) -> tuple[int, dict[str, bytes]]:
    assert _worker_wordnet is not None and _worker_phrases is not None
    lemmatize = _worker_wordnet.lemmatize
    local: dict[str, list[int]] = {}
    n = 0
    for text in texts:
        for para in paragraphs(text):
            for key in paragraph_keys(tokenize(para, lemmatize), _worker_phrases):
                local.setdefault(key, []).append(n)
            n += 1
    return n, {k: np.asarray(v, dtype=np.uint32).tobytes() for k, v in local.items()}


def _batches(docs: Iterable[Document], size: int, excluded: frozenset[str]) -> Iterator[list[str]]:
    it = (d.text for d in docs if d.title not in excluded)
    while batch := list(itertools.islice(it, size)):
        yield batch


def build_index(
    corpora: Sequence[Path],
    out: Path,
    *,
    config: BuildConfig = BuildConfig(),
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    started = time.monotonic()
    digest = hashlib.sha256()
    for path in corpora:
        if path.is_file():
            digest.update(path.read_bytes() if path.stat().st_size < 2**31 else path.name.encode())
    docs = itertools.chain.from_iterable(read_corpus(p) for p in corpora)
    merged: dict[str, list[U32Array]] = {}
    base = 0
    n_articles = 0
    ctx = mp.get_context("fork")
    with ctx.Pool(config.workers, initializer=_init_worker) as pool:
        for n, local in pool.imap(_index_batch, _batches(docs, config.batch_size, config.excluded_titles)):
            for key, raw in local.items():
                merged.setdefault(key, []).append(np.frombuffer(raw, dtype=np.uint32) + np.uint32(base))
            base += n
            n_articles += config.batch_size
            if progress:
                progress(config.batch_size)
    postings: dict[str, U32Array] = {}
    for key, parts in merged.items():
        df = sum(len(p) for p in parts)
        if df < (config.min_phrase_df if " " in key else config.min_df):
            continue
        postings[key] = np.concatenate(parts) if len(parts) > 1 else parts[0]
    del merged
    meta = {
        "unit": "paragraph",
        "normalization": NORMALIZATION_VERSION,
        "min_df": config.min_df,
        "min_phrase_df": config.min_phrase_df,
        "corpus_sha256": digest.hexdigest(),
        "corpora": [p.name for p in corpora],
        "excluded_titles": sorted(config.excluded_titles),
        "build_seconds": round(time.monotonic() - started, 1),
    }
    return write_index(out, postings, n_docs=base, meta=meta)
