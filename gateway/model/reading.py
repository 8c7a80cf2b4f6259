"""How the engine reads a text: its terms under the phrases K and the policy know, and the key of a term.

One reader per engine holds what reading keeps between texts: the keys of the terms people type (policies,
taxonomy steps), the norms of the words seen, the phrase sets (the shared one, and one per policy that has
multi-word allow/deny terms of its own, so that one policy's phrases never leak into another's reading), and
the last two readings, so that a text read again (the output, by the pipeline's check and then the memory)
is tokenized once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

from gateway.model.derived import acronym_plural
from gateway.model.generalization import starts_sentence
from gateway.model.incremental import LineTerms, TextMemo
from gateway.model.knowledge import Knowledge
from gateway.model.measure import BoundedCache
from gateway.model.records import Entity, SanitizePolicy
from gateway.model.terms import PhraseSet, TermOccurrence, Token, extract_terms, key_of

KEY_CACHE = 10_000  # text -> key of terms typed by people (policies, taxonomy steps): few distinct
POLICY_PHRASE_SETS = 256
# A text, the phrases and acronyms it was read with, its tokens and terms, and its terms before the acronyms'
# reading (``_acronyms_only``): what a text read again with a few lines changed starts from (``terms_of``).
_Reading = tuple[str, PhraseSet, frozenset[str], tuple[list[Token], list[TermOccurrence]], list[TermOccurrence]]


class Reader:
    def __init__(
        self, knowledge: Knowledge, lemmatize: Callable[[str], str], extra_phrases: Iterable[str] = ()
    ) -> None:
        self._knowledge = knowledge
        self._lemmatize = lemmatize
        self._keys: BoundedCache[str, str] = BoundedCache(KEY_CACHE)
        self._norms: dict[str, str] = {}  # word -> key, shared by every text (bounded by the tokenizer)
        self._extra = [self.key(p) for p in extra_phrases]
        self._phrases = PhraseSet(knowledge.phrases())
        for p in self._extra:
            self._phrases.add(p)
        self._policy_phrases: BoundedCache[tuple[tuple[str, ...], tuple[Entity, ...]], PhraseSet] = BoundedCache(
            POLICY_PHRASE_SETS
        )
        self._recent: tuple[_Reading, ...] = ()
        self.lines_read_again = 0  # lines of a text read again tokenized anew (``terms_of``; for benchmarks, tests)

    def key_once(self, text: str) -> str:
        """The key of a text not kept in the cache: a value that must not outlive its message."""
        return key_of(text, self._lemmatize)

    def key(self, text: str) -> str:
        # Asked for every allowed, denied and generalized term of every round: a kept key is read without
        # building the closure that computes a missing one.
        found = self._keys.peek(text)
        if found is not None:
            return found
        return self._keys.get(text, lambda t: key_of(t, self._lemmatize))

    @property
    def phrase_set(self) -> PhraseSet:
        """Multi-word terms recognised in every text (K's, the taxonomy's, the entities')."""
        return self._phrases

    def add_phrases(self, keys: Collection[str]) -> None:
        """An entity's names, so that "Los Angeles" in a text is one term."""
        for k in keys:
            self._phrases.add(k)

    def terms_of(
        self,
        text: str,
        entities: Sequence[Entity] = (),
        policy: SanitizePolicy | None = None,
        *,
        memo: TextMemo | None = None,
    ) -> tuple[list[Token], list[TermOccurrence]]:
        """The terms of a text as the engine judges them (under ``policy``'s own phrases, if given).

        A word spelled like an entity's acronym but in mixed case mid-sentence
        ("Vd" for a voltage, "Std" in a class name) is not that acronym, and not a term.
        """
        phrases = self._phrases if policy is None else self.phrases_for(policy, entities)
        acronyms = frozenset(k for e in entities for k in e.acronyms)
        recent = self._recent  # replaced whole, never changed in place: safe to read from any thread
        if memo is not None:
            tokens, raw = memo.lines.terms(text)
            occs = _acronyms_only(tokens, raw, acronyms)
            # Kept as a whole reading is below: the last round reads the output, which the pipeline's check of
            # the rebuilt content (an equal text on CRLF mail) and the memory's read then find here.
            self._recent = ((text, phrases, acronyms, (tokens, occs), raw), *recent[:1])
            return tokens, occs
        # The memory reads the output after the pipeline's check read the rebuilt content, or, for a clean
        # text, the text the fast path read: the last two texts, each tokenized once.
        for seen, seen_phrases, seen_acronyms, found, _raw in recent:
            if seen_phrases is phrases and seen_acronyms == acronyms and seen == text:
                return found
        base = next((r for r in recent if r[1] is phrases), None)
        if base is None:
            tokens, raw = extract_terms(text, self._lemmatize, phrases, self._norms)
        else:
            # The rebuilt content read again differs from the output in a few lines (a header folded anew, an HTML
            # comment's end, an address list written again): only those lines are tokenized (incremental.LineTerms,
            # which gives exactly the whole text's terms), from the reading under the same phrases.
            lines = LineTerms(lambda t: extract_terms(t, self._lemmatize, phrases, self._norms))
            lines.start_from(base[0], base[3][0], base[4])
            tokens, raw = lines.terms(text)
            self.lines_read_again += lines.lines_extracted
        occs = _acronyms_only(tokens, raw, acronyms)
        self._recent = ((text, phrases, acronyms, (tokens, occs), raw), *recent[:1])
        return tokens, occs

    def forget(self) -> None:
        """Drop the last readings: a large text's tokens do not stay until the next message."""
        self._recent = ()

    def text_memo(self, policy: SanitizePolicy, entities: Sequence[Entity]) -> TextMemo:
        """A memo of one text's lines across its rounds (incremental.py), read under the policy's phrases."""
        phrases = self.phrases_for(policy, entities)
        return TextMemo(LineTerms(lambda t: extract_terms(t, self._lemmatize, phrases, self._norms)))

    def phrases_for(self, policy: SanitizePolicy, entities: Sequence[Entity]) -> PhraseSet:
        own = tuple(sorted({k for t in (*policy.allow, *policy.deny) if " " in (k := self.key(t))}))
        if not own:
            return self._phrases

        def build(cache_key: tuple[tuple[str, ...], tuple[Entity, ...]]) -> PhraseSet:
            phrases = PhraseSet(self._knowledge.phrases())
            for p in (*self._extra, *(k for e in cache_key[1] for k in e.keys), *cache_key[0]):
                phrases.add(p)
            return phrases

        return self._policy_phrases.get((own, tuple(entities)), build)


def _acronyms_only(tokens: list[Token], occs: list[TermOccurrence], acronyms: frozenset[str]) -> list[TermOccurrence]:
    if not acronyms:
        return occs
    return [o for o in occs if o.key not in acronyms or not _not_the_acronym(tokens, o.first_token)]


def _not_the_acronym(tokens: Sequence[Token], i: int) -> bool:
    word = tokens[i].text
    if word.isupper() or word.islower() or acronym_plural(word) is not None:  # "STDs" is the acronym's plural
        return False
    return not (starts_sentence(tokens, i) and word[1:].islower())  # "Hiv" opening a sentence is "hiv"
