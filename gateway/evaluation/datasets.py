"""What `sanigate eval` reads: documents with their entity and, where there is one, a human gold standard.

Three sources: the token-labelled actor XML of the dev set, plain-text
documents with JSON span gold ({doc_id: [[start, end], ...]}, one file per
annotator), and Wikipedia articles named in a topics file (no gold: the
paper's experiment, scored by utility and by an attacker).
"""

from __future__ import annotations

import json
import lzma
import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from gateway.errors import InputError
from gateway.evaluation.gold import Annotation, read_actor_xml

_WORD = re.compile(r"\w+(?:['\u2019]\w+)*")


@dataclass(frozen=True, slots=True)
class EvalDocument:
    doc_id: str
    entity: str
    text: str
    annotations: tuple[Annotation, ...] = ()
    category: str = ""


def actors(folder: Path) -> list[EvalDocument]:
    files = sorted(folder.glob("*.xml"))
    if not files:
        raise InputError(f"{folder}: no actor .xml files")
    out = []
    for f in files:
        g = read_actor_xml(f)
        out.append(EvalDocument(g.doc_id, g.title, g.text, g.annotations, "person"))
    return out


def span_annotation(name: str, text: str, spans: Sequence[Sequence[int]]) -> Annotation:
    """JSON spans as token labels: a word token is masked when a gold span overlaps it."""
    tokens = tuple(m.span() for m in _WORD.finditer(text))
    gold = sorted((int(s[0]), int(s[1])) for s in spans)
    for s, e in gold:
        if not 0 <= s < e <= len(text):
            raise InputError(f"{name}: span [{s}, {e}] is outside the document ({len(text)} characters)")
    masked = tuple(any(a < te and ts < b for a, b in gold) for ts, te in tokens)
    return Annotation(name, tokens, masked)


def span_documents(docs: Path, gold_files: Sequence[Path], entities: dict[str, str]) -> list[EvalDocument]:
    """docs: a folder of DOC_ID.txt; each gold file one annotator's {doc_id: [[start, end], ...]}."""
    golds: list[tuple[str, dict[str, list[list[int]]]]] = []
    for g in gold_files:
        try:
            data = json.loads(g.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"{g}: not a readable JSON gold file ({exc})") from exc
        if not isinstance(data, dict):
            raise InputError(f"{g}: the gold is an object {{doc_id: [[start, end], ...]}}")
        golds.append((g.stem, data))
    out = []
    for path in sorted(docs.glob("*.txt")):
        doc_id = path.stem
        if doc_id not in entities and "*" not in entities:
            raise InputError(f"{path}: no entity given for {doc_id!r}")
        text = path.read_text(encoding="utf-8")
        anns = tuple(span_annotation(f"{name}:{doc_id}", text, data.get(doc_id, [])) for name, data in golds)
        anns = tuple(Annotation(name, a.tokens, a.masked) for (name, _d), a in zip(golds, anns, strict=True))
        out.append(EvalDocument(doc_id, entities.get(doc_id, entities.get("*", "")), text, anns))
    if not out:
        raise InputError(f"{docs}: no .txt documents")
    return out


@dataclass(frozen=True, slots=True)
class Topic:
    title: str
    entity: str
    category: str


def read_topics(path: Path) -> list[Topic]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: cannot read the topics ({exc})") from exc
    topics = [Topic(t["title"], t["entity"], t.get("category", "")) for t in data.get("topic", [])]
    if not topics:
        raise InputError(f"{path}: no [[topic]]")
    return topics


def _articles(corpus: Path) -> Iterator[dict[str, str]]:
    opener = lzma.open if corpus.suffix == ".xz" else open
    with opener(corpus, "rt", encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


def topic_documents(topics: Sequence[Topic], corpus: Path, *, max_chars: int) -> list[EvalDocument]:
    """The topics' articles from the corpus, each cut at a paragraph end after ``max_chars``."""
    wanted = {t.title: t for t in topics}
    found: dict[str, EvalDocument] = {}
    for art in _articles(corpus):
        t = wanted.get(art.get("title", ""))
        if t is None or t.title in found:
            continue
        text = art["text"]
        if len(text) > max_chars:
            cut = text.find("\n", max_chars)
            text = text[: cut if cut > 0 else max_chars]
        found[t.title] = EvalDocument(t.title, t.entity, text, (), t.category)
        if len(found) == len(wanted):
            break
    missing = sorted(set(wanted) - set(found))
    if missing:
        raise InputError(f"{corpus}: no article titled {', '.join(map(repr, missing))}")
    return [found[t.title] for t in topics]
