"""Turning text into terms: the unit the privacy model counts and rewrites.

The same normalisation is used when the knowledge index is built and when a
message is sanitized, so that a term in a message and a term in K are the
same key. Anything that changes a key here must bump ``NORMALIZATION_VERSION``
(the index records it and refuses to load under a different one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from gateway.model.normalize import INVISIBLE_CLASS, fold

NORMALIZATION_VERSION = 2

Lemmatizer = Callable[[str], str]
"""Maps a lower-case word to its lemma (plural -> singular, verb -> base)."""

MAX_PHRASE_TOKENS = 5
MARKER_WORD = "REDACTED"  # the word inside rewrite.REDACTION_MARKER
# The words of the placeholders the identifier pass writes ("[PERSON 1]", "[HEALTH PLAN ID]", "[MRN]"): like the
# redaction marker they are the gateway's, not the sender's, so the engine does not read them as terms ("PERSON"
# in a group with "tested" and "positive", "MRN" redacted inside "[MRN]"). Only inside a whole placeholder: "[HIV]"
# is read. tests/test_identifiers.py checks that every label the anonymizer writes is here.
PLACEHOLDER_WORDS = frozenset({
    MARKER_WORD, "PERSON", "ORGANIZATION", "PLACE", "ADDRESS", "DATE", "TIME", "AGE", "DURATION", "PHONE", "FAX",
    "EMAIL", "SSN", "MRN", "HEALTH", "PLAN", "ID", "ACCOUNT", "LICENCE", "VEHICLE", "DEVICE", "URL", "IP", "IBAN",
    "CARD", "NATIONAL", "CODE", "DEMOGRAPHIC", "QUANTITY", "MISC", "ZIP",
})  # fmt: skip
PLACEHOLDER = re.compile(r"\[[A-Z][A-Z_]*(?: [A-Z][A-Z_]*)*(?: \d+)?\]")

# Function words: never terms themselves, but kept in the token stream so
# that phrases such as "Days of Our Lives" still match.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also although am among an and another any anything are
    around as at be because been before being below between both but by can cannot could
    did do does doing done down during each either else even ever every few for from
    further had has have having he her here hers herself him himself his how however i if
    in into is it its itself just least less let like many may me might mine more most
    much must my myself neither no none nor not nothing now of off often on once one only onto or
    other others otherwise our ours ourselves out over own per perhaps quite rather
    same several shall she should since so some such than that the their theirs them
    themselves then there thereby therefore these they this those though through thus
    to too toward towards under until up upon us very via was we were what whatever when
    whenever where whereas whether which while who whoever whom whose why will with
    within without would yet you your yours yourself yourselves
    mr mrs ms dr st etc ie eg vs re s t d ll m ve
    """.split()
)

# Abbreviations ("U.S."), then words (inner hyphens and apostrophes, and the
# invisible characters a reader does not see: "H\u00adIV" is one word), then
# numbers. A dot inside a word ends it: "mail.example.com" is three words; so
# does an underscore ("HIV_results.txt" names HIV). Every alternative opens with a letter or a digit, written
# as one character set before them so that the regex engine skips to the next word in C. A word runs on over
# letters and digits, and over connectors (hyphens, apostrophes, invisibles) only where a letter or digit
# follows them: the longest run of both that ends in a letter or digit, read a run of each class at a time
# (one alternation a character, then a step back over trailing connectors, took a third longer).
_CONNECTOR = rf"[\-'\u2019{INVISIBLE_CLASS}]"
_WORD = re.compile(
    rf"[^\W_](?:(?<=[^\W\d_])(?:\.(?:[^\W\d_]\.)+"
    rf"|[^\W_]*(?:{_CONNECTOR}+[^\W_]+)*)"
    r"|(?<=\d)[\w.,:/\-]*)",
    re.UNICODE,
)
# A word glued to letters of a script written without spaces ("患者HIV阳性"): split where the script changes.
_SPACELESS = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\u0e00-\u0e7f\U00020000-\U0002fa1f"
_SCRIPT_RUNS = re.compile(rf"[{_SPACELESS}]+|[^{_SPACELESS}]+")
_HAS_SPACELESS = re.compile(rf"[{_SPACELESS}]")
# A number glued to a word: "43HIV", "1,HIV" (a CSV row), "2/Los": the number, then the word (not "10km", "3rd").
_NUMBER_HEAD = re.compile(r"\d[\d.,:/\-]*")
# "H.I.V.": an acronym of three letters or more, written with dots.
_DOTTED_ACRONYM = re.compile(r"(?:[A-Z]\.){3,}")
# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) and
# white space, or at a blank line / line that starts a new paragraph.
_BLANKS = re.compile(r"[ \t]+")
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+|\n\s*\n|\r\n\s*\r\n")


@dataclass(slots=True)  # not frozen: a frozen dataclass is several times slower to build, and there are many
class Token:
    text: str
    start: int
    end: int
    norm: str
    sentence: int
    is_stop: bool
    is_number: bool
    # Only blanks separate it from the previous token: a phrase may continue.
    joined: bool = False


@dataclass(slots=True)
class TermOccurrence:
    """One occurrence of a term (a word or a phrase) in a text."""

    key: str
    start: int
    end: int
    sentence: int
    first_token: int
    n_tokens: int


def _strip_possessive(word: str) -> str:
    if word.endswith(("'s", "\u2019s")):
        return word[:-2]
    if word.endswith(("'", "\u2019")):
        return word[:-1]
    return word


def normalize_word(word: str, lemmatize: Lemmatizer) -> str:
    """The key of one word: lower case, lemmatised; acronyms are kept whole.

    "AIDS" must not become "aid", so all-capital words are not lemmatised. A
    word is folded first (full width, invisible characters, look-alike
    letters: ``normalize.fold``), and a dotted acronym loses its dots
    ("H.I.V." is "hiv"; two-letter ones such as "U.S." keep them).
    """
    if not word.isascii():
        word = fold(word)
    if "." in word and _DOTTED_ACRONYM.fullmatch(word):
        word = word.replace(".", "")
    if len(word) > 1 and word.isupper() and word.isalpha():
        return word.lower()
    low = word.lower()
    if low in STOPWORDS or not low.isalpha():
        return low
    return lemmatize(low)


def sentence_starts(text: str) -> list[int]:
    starts = [0]
    for m in _SENTENCE_END.finditer(text):
        starts.append(m.end())
    return starts


def tokenize(text: str, lemmatize: Lemmatizer, norms: dict[str, str] | None = None) -> list[Token]:
    """Tokens of a text; ``norms`` (word -> key) may be shared across texts as a cache."""
    # The hot loop of the whole gateway (every token of every message): kept flat.
    starts = sentence_starts(text)
    n_starts = len(starts)
    end_of_text = len(text) + 1
    next_start = starts[1] if n_starts > 1 else end_of_text
    tokens: list[Token] = []
    append = tokens.append
    if norms is None:
        norms = {}  # words repeat: normalise each once per text
    get_norm = norms.get
    stop = STOPWORDS
    blanks = _BLANKS.fullmatch
    code_after, code_before = _CODE_AFTER, _CODE_BEFORE
    placeholders = "[" in text and PLACEHOLDER.search(text) is not None  # most texts have none: one test a text
    sent = 0
    prev_end = -1
    for raw, start, m_end in _words(text):
        if next_start <= start:
            while next_start <= start:
                sent += 1
                next_start = starts[sent + 1] if sent + 1 < n_starts else end_of_text
        if prev_end < 0 or start == prev_end:
            joined = False
        elif start == prev_end + 1:
            joined = text[prev_end] == " " or text[prev_end] == "\t"
        else:
            joined = blanks(text, prev_end, start) is not None
        first = raw[0]
        if first.isdigit():
            append(Token(raw, start, m_end, raw, sent, False, True, joined))
            prev_end = m_end
            continue
        if placeholders and raw in PLACEHOLDER_WORDS and _in_placeholder(text, start, m_end):
            prev_end = m_end
            continue  # our own redaction marker or identifier placeholder is not a word of the text
        last = raw[-1]
        if last == "s" or last == "'" or last == "\u2019":
            word = _strip_possessive(raw)
            if not word:
                continue
            end = start + len(word)
        else:
            word, end = raw, m_end
        if (text[end : end + 1] in code_after or text[start - 1 : start] in code_before) and _is_code(text, start, end):
            # An identifier in program text ("std::cout", "usrp->get_rx()"): not a word.
            append(Token(word, start, end, word, sent, False, True, joined))
            prev_end = end
            continue
        norm = get_norm(word)
        if norm is None:
            norm = normalize_word(word.replace("\u2019", "'"), lemmatize)
            if len(norms) < _MAX_SHARED_NORMS:
                norms[word] = norm
        append(Token(word, start, end, norm, sent, norm in stop, False, joined))
        prev_end = end
    return tokens


def _in_placeholder(text: str, start: int, end: int) -> bool:
    bracket = text.rfind("[", max(0, start - 24), start)
    if bracket < 0:
        return False
    m = PLACEHOLDER.match(text, bracket)
    return m is not None and m.end() >= end


def _words(text: str) -> Iterator[tuple[str, int, int]]:
    """Word matches, split where a word is glued to a spaceless script or a number to an acronym."""
    for m in _WORD.finditer(text):
        raw = m.group()
        start = m.start()
        if raw.isascii():
            if raw[0].isdigit() and not raw.isdigit():
                yield from _number_and_word(text, raw, start)
                continue
            yield raw, start, m.end()
        elif _HAS_SPACELESS.search(raw) and _mixed(raw):
            for run in _SCRIPT_RUNS.finditer(raw):
                for w in _WORD.finditer(run.group()):
                    yield w.group(), start + run.start() + w.start(), start + run.start() + w.end()
        else:
            yield raw, start, m.end()


def _number_and_word(text: str, raw: str, start: int) -> Iterator[tuple[str, int, int]]:
    head = _NUMBER_HEAD.match(raw)
    n = head.end() if head else len(raw)
    rest = raw[n:]
    if not rest or not rest[0].isalpha() or not (raw[n - 1] in ".,:/-" or rest[:2].isupper()):
        yield raw, start, start + len(raw)
        return
    number = raw[:n].rstrip(".,:/-")
    yield number, start, start + len(number)
    for w in _WORD.finditer(text, start + n, start + len(raw)):
        yield w.group(), w.start(), w.end()


def _mixed(raw: str) -> bool:
    runs = _SCRIPT_RUNS.findall(raw)
    return len(runs) > 1 and any(any(ch.isascii() and ch.isalpha() for ch in r) for r in runs)


# Words whose key is kept across texts (about 150 bytes each): 17,700 after 750 archive messages.
_MAX_SHARED_NORMS = 30_000
_CODE_AFTER = frozenset({":", "-", "("})
_CODE_BEFORE = frozenset({":", ">"})


def _is_code(text: str, start: int, end: int) -> bool:
    after = text[end : end + 2]
    before = text[max(0, start - 2) : start]
    return (
        after in ("::", "->")
        or before in ("::", "->")
        # "parasite(s)", "patient(es)": prose's optional plural, not a call
        or (after[:1] == "(" and end - start > 1 and not text.startswith(_OPTIONAL_PLURAL, end))
    )


_OPTIONAL_PLURAL = ("(s)", "(es)")


def is_term_token(tok: Token) -> bool:
    return not tok.is_stop and not tok.is_number and len(tok.norm) > 1


def phrase_key(words: Sequence[str], lemmatize: Lemmatizer) -> str:
    """Key of a phrase given as words ("Los Angeles", "blood transfusions")."""
    return " ".join(normalize_word(w, lemmatize) for w in words)


def key_of(text: str, lemmatize: Lemmatizer) -> str:
    """Key of a term typed by a person (an entity, a taxonomy entry): ``phrase_key`` of its tokens' words."""
    # A word's token holds its normalize_word already, but for the apostrophe the tokenizer writes as "'"
    # first; numbers and code keep their text. Those are normalized again; the rest is not (an identifier
    # pass asks the key of each value it replaced: 15 a message).
    return " ".join(
        t.norm if not t.is_number and "\u2019" not in t.text else normalize_word(t.text, lemmatize)
        for t in tokenize(text.replace("_", " "), lemmatize)
    )


@runtime_checkable
class PhraseSource(Protocol):
    """A large, shared set of multi-word keys (K's), asked word-prefix by word-prefix."""

    @property
    def first_words(self) -> frozenset[str]: ...

    def is_phrase(self, key: str) -> bool: ...

    def is_prefix(self, key: str) -> bool: ...


class PhraseSet:
    """A set of multi-word keys, matched over a token stream.

    Phrases may contain function words inside ("days of our lives") but never
    start or end with one, and never cross a sentence. Given a ``PhraseSource``
    (K's phrases, memory-mapped), it is asked rather than copied; phrases
    added later (entities, policy lists, taxonomy terms) are held here.
    """

    def __init__(self, phrases: Iterable[str] | PhraseSource = ()) -> None:
        self._phrases: set[str] = set()
        self._prefixes: set[str] = set()
        self._base: PhraseSource | None = None
        self._asked: dict[str, bool] = {}  # the base's answers: words repeat, lookups cost a hash and a probe
        self.first_words: set[str] = set()
        if isinstance(phrases, PhraseSource):
            self._base = phrases
            self.first_words = set(phrases.first_words)
            return
        for p in phrases:
            self.add(p)

    def add(self, phrase: str) -> None:
        words = phrase.split(" ")
        if len(words) < 2 or len(words) > MAX_PHRASE_TOKENS:
            return
        self._phrases.add(phrase)
        self.first_words.add(words[0])
        for i in range(1, len(words)):
            self._prefixes.add(" ".join(words[:i]))

    def __contains__(self, phrase: object) -> bool:
        if not isinstance(phrase, str):
            return False
        return phrase in self._phrases or (self._base is not None and self._base.is_phrase(phrase))

    def starts_phrase(self, norm: str) -> bool:
        return norm in self.first_words

    def _ask(self, key: str, prefix: bool) -> bool:
        base = self._base
        if base is None:
            return False
        cache_key = key + ("\0" if prefix else "\1")
        found = self._asked.get(cache_key)
        if found is None:
            found = base.is_prefix(key) if prefix else base.is_phrase(key)
            if len(self._asked) < _MAX_ASKED:
                self._asked[cache_key] = found
        return found

    def matches_at(self, tokens: Sequence[Token], i: int) -> Iterator[int]:
        """Lengths (>= 2) of the phrases that start at token i, shortest first."""
        first = tokens[i]
        if first.is_stop or first.is_number:
            return
        key = first.norm
        j = i + 1
        while j < len(tokens) and j - i < MAX_PHRASE_TOKENS:
            if key not in self._prefixes and not self._ask(key, True):
                return
            tok = tokens[j]
            if not tok.joined or tok.is_number:
                return
            key = key + " " + tok.norm
            j += 1
            if key in self._phrases or self._ask(key, False):
                yield j - i


# K's answers kept (about 120 bytes each): 43,000 after 750 archive messages, where they stopped mattering.
_MAX_ASKED = 20_000


def extract_terms(
    text: str,
    lemmatize: Lemmatizer,
    phrases: PhraseSet,
    norms: dict[str, str] | None = None,
) -> tuple[list[Token], list[TermOccurrence]]:
    """Terms of a text, longest phrase first, each token in at most one term."""
    tokens = tokenize(text, lemmatize, norms)
    terms: list[TermOccurrence] = []
    append = terms.append
    firsts = phrases.first_words
    n = len(tokens)
    i = 0
    while i < n:
        tok = tokens[i]
        if tok.norm in firsts:
            longest = 0
            for k in phrases.matches_at(tokens, i):
                longest = k
            if longest:
                last = tokens[i + longest - 1]
                key = " ".join(t.norm for t in tokens[i : i + longest])
                append(TermOccurrence(key, tok.start, last.end, tok.sentence, i, longest))
                i += longest
                continue
        if not tok.is_stop and not tok.is_number and len(tok.norm) > 1:  # is_term_token, inlined
            append(TermOccurrence(tok.norm, tok.start, tok.end, tok.sentence, i, 1))
        i += 1
    return tokens, terms
