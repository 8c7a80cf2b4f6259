"""Gold standards: JSON spans, and the token-labelled actor XML of the dev set."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from gateway.errors import InputError


@dataclass(frozen=True, slots=True)
class Annotation:
    annotator: str
    tokens: tuple[tuple[int, int], ...]
    masked: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class GoldDocument:
    doc_id: str
    title: str
    text: str
    annotations: tuple[Annotation, ...]


def _field(xml: str, tag: str, path: Path) -> str:
    m = re.search(rf"<{tag}>(.*?)</{tag}>", xml, re.S)
    if m is None:
        raise InputError(f"{path}: no <{tag}> element")
    return m.group(1)


def _tokens(raw: str) -> tuple[tuple[int, int], ...]:
    # An OrderedDict repr: [(offset, 'token'), ...]
    pairs = ast.literal_eval(raw.strip()[len("OrderedDict(") : -1])
    return tuple((int(off), int(off) + len(tok)) for off, tok in pairs)


def read_actor_xml(path: Path) -> GoldDocument:
    """One dev-set file: microlabels1 label stanford_tokens, microlabels2 label spacy_tokens."""
    import html

    xml = path.read_text(encoding="utf-8")
    text = html.unescape(_field(xml, "originalabstract", path))
    anns = []
    for name, tok_tag, lab_tag in (("annotator1", "stanford_tokens", "microlabels1"),
                                   ("annotator2", "spacy_tokens", "microlabels2")):  # fmt: skip
        tokens = _tokens(_field(xml, tok_tag, path))
        labels = ast.literal_eval(_field(xml, lab_tag, path))
        if len(labels) != len(tokens):
            raise InputError(f"{path}: {lab_tag} has {len(labels)} labels for {len(tokens)} tokens")
        anns.append(Annotation(name, tokens, tuple(lab != "O" for lab in labels)))
    return GoldDocument(path.stem, html.unescape(_field(xml, "title", path)), text, tuple(anns))
