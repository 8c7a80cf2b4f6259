"""Wiring the engine from files: the one place that knows the defaults.

The model (``gateway.model``) never opens a file; this module loads K, WordNet
and an organisation taxonomy and injects them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gateway.config import EngineFiles
from gateway.errors import KnowledgeError
from gateway.knowledge.local import LocalIndex, default_index_path
from gateway.model.engine import Engine
from gateway.model.generalization import NameKinds
from gateway.model.identifiers import Analyzer
from gateway.model.knowledge import DEFAULT_MIN_SUPPORT, DEFAULT_PRIOR_WEIGHT, Estimator, Knowledge
from gateway.model.taxonomy import ChainedTaxonomy, Taxonomy
from gateway.taxonomy.org import OrgTaxonomy
from gateway.taxonomy.wordnet import WordNet


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineConfig:
    index: Path | None = None
    taxonomy: Path | None = None
    wordnet_root: Path | None = None
    prior_weight: float = DEFAULT_PRIOR_WEIGHT
    min_support: int = DEFAULT_MIN_SUPPORT


def load_knowledge(path: Path | None) -> LocalIndex:
    target = path or default_index_path()
    if not target.exists():
        raise KnowledgeError(
            f"knowledge index {target} not found; build it with "
            "'sanigate index build ../shared/corpora/wikipedia-20k.jsonl.xz --out PATH'"
        )
    return LocalIndex(target)


def knowledge_from(files: EngineFiles) -> Knowledge:
    """The K a gateway's configuration names ([engine] knowledge)."""
    if files.knowledge == "web":
        from gateway.knowledge.web import WebCounts

        assert files.web is not None
        # A search API has no lexicon: multi-word terms are recognised from the local index's phrases.
        local = files.index or default_index_path()
        return WebCounts(files.web, phrases=LocalIndex(local).phrases() if local.exists() else ())
    if files.knowledge == "postgresql":
        from gateway.knowledge.postgres import PostgresIndex

        assert files.knowledge_url is not None
        return PostgresIndex(files.knowledge_url)
    return load_knowledge(files.index)


def build_engine(config: EngineConfig = EngineConfig(), *, knowledge: Knowledge | None = None) -> Engine:
    wordnet = WordNet(config.wordnet_root)
    k = knowledge if knowledge is not None else load_knowledge(config.index)
    taxonomies: list[Taxonomy] = []
    extra: list[str] = []
    if config.taxonomy is not None:
        org = OrgTaxonomy.load(config.taxonomy, lemmatize=wordnet.lemmatize)
        taxonomies.append(org)
        extra.extend(org.terms())
    taxonomies.append(wordnet)
    return Engine(
        knowledge=k,
        taxonomy=ChainedTaxonomy(*taxonomies),
        language=wordnet,
        synonyms=wordnet,
        estimator=Estimator(prior_weight=config.prior_weight, min_support=config.min_support),
        extra_phrases=extra,
        names=_name_kinds(wordnet),
    )


# What the recognizer only guesses from capitals and name lists: "Ur-Fascism", "Grace Kelly"'s words as words.
_GUESSES = frozenset({"capitalised name", "another mention", "first name and surname"})


def _name_kinds(wordnet: WordNet) -> NameKinds:
    """The identifier analyzer's name recognizer, as the engine asks it what kind a name is."""
    from gateway.model.identifiers.names import NameRecognizer
    from gateway.taxonomy.lexicon import WordNetLexicon

    recognizer = NameRecognizer(WordNetLexicon(wordnet))

    def kinds(text: str) -> Iterator[tuple[int, int, str]]:
        # Only what the recognizer has evidence for (a lexicon, a title, a head word, and another mention of
        # a name so found), not its guess that an unknown capitalised word is a person ("Ur-Fascism").
        found = list(recognizer(text))
        sure = [f for f in found if f.score >= 0.7 and f.source not in _GUESSES]
        words = {w for f in sure for w in f.text.split()}
        for f in found:
            if f in sure or (f.source == "another mention" and all(w in words for w in f.text.split())):
                yield f.start, f.end, f.kind

    return kinds


def build_identifiers(engine: Engine | None = None, *, wordnet_root: Path | None = None) -> Analyzer:
    """The identifier analyzer, reading names with the engine's WordNet when it has one (loaded once)."""
    from gateway.taxonomy.lexicon import WordNetLexicon

    wordnet = engine.language if engine is not None and isinstance(engine.language, WordNet) else WordNet(wordnet_root)
    return Analyzer(lexicon=WordNetLexicon(wordnet))
