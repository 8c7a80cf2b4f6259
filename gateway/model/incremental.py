"""What the rounds of one text share, so that a later round re-reads only what an edit changed.

A round rewrites a few terms and the next round reads the rewritten text. Two things make that
cheap without changing any answer:

  * Lines are tokenized on their own. Nothing the tokenizer looks at crosses a line break: a
    phrase continues only over blanks (``Token.joined``), the look-arounds for code and for the
    redaction marker stop at the break, and sentence ends inside a line are found the same way
    in the line alone. So a line the edits left alone keeps its tokens and terms (shifted to
    where it now stands); only changed lines are tokenized again, and sentence numbers are
    taken from the whole text.
  * Judgements that are functions of their arguments are remembered for the whole call (the
    entities and the policy do not change between rounds): which groups were found safe, and
    which units' members were found to form no risky group, so a sentence or paragraph whose
    members are unchanged is not judged again (how each key is classified is kept by the
    worker's ``Detector`` for every text).

``tests/test_incremental.py`` checks that the engine gives exactly the output of a full
re-judge on real texts under several policies.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field

from gateway.model.measure import Conjuncts, Verdict
from gateway.model.terms import TermOccurrence, Token, sentence_starts

Terms = tuple[list[Token], list[TermOccurrence]]
Members = dict[str, tuple[frozenset[str], float]]


@dataclass(slots=True)
class _Line:
    start: int  # where the line began in the text its tokens came from
    tokens: list[Token]
    occs: list[TermOccurrence]
    first_token: int  # index of its first token in that text's tokens


class LineTerms:
    """Tokens and terms of successive versions of one text, re-extracting only the lines that changed."""

    def __init__(self, extract: Callable[[str], Terms]) -> None:
        self._extract = extract
        self._last: tuple[str, list[Token], list[TermOccurrence]] | None = None
        self.lines_extracted = 0  # lines tokenized after the first version (for benchmarks and tests)

    def start_from(self, text: str, tokens: list[Token], occs: list[TermOccurrence]) -> None:
        """Take ``text``'s reading by ``extract`` (its tokens and terms, whole) as the last version."""
        self._last = (text, tokens, occs)

    @property
    def empty(self) -> bool:
        """No version read yet: the next is read whole, as ``extract`` reads it."""
        return self._last is None

    def terms(self, text: str) -> Terms:
        last = self._last
        if last is not None and last[0] is text:
            return last[1], last[2]
        if last is None:
            tokens, occs = self._extract(text)
        else:
            tokens, occs = self._update(text, self._index(*last))
        self._last = (text, tokens, occs)
        return tokens, occs

    @staticmethod
    def _index(text: str, tokens: list[Token], occs: list[TermOccurrence]) -> dict[str, _Line]:
        """The previous version's terms, by line."""
        lines: dict[str, _Line] = {}
        ti = oi = 0
        pos = 0
        n_tok, n_occ = len(tokens), len(occs)
        for line in text.split("\n"):
            end = pos + len(line)
            t0, o0 = ti, oi
            while ti < n_tok and tokens[ti].start < end:
                ti += 1
            while oi < n_occ and occs[oi].start < end:
                oi += 1
            if line and line not in lines:
                lines[line] = _Line(pos, tokens[t0:ti], occs[o0:oi], t0)
            pos = end + 1
        return lines

    def _update(self, text: str, known: dict[str, _Line]) -> Terms:
        starts = sentence_starts(text)
        tokens: list[Token] = []
        occs: list[TermOccurrence] = []
        pos = 0
        for line in text.split("\n"):
            if line:
                found = known.get(line)
                if found is None:
                    ltoks, loccs = self._extract(line)
                    found = _Line(0, ltoks, loccs, 0)
                    self.lines_extracted += 1
                if found.tokens:
                    first = found.tokens[0]
                    d_pos = pos - found.start
                    d_tok = len(tokens) - found.first_token
                    d_sent = bisect.bisect_right(starts, first.start + d_pos) - 1 - first.sentence
                    if d_pos == d_tok == d_sent == 0:
                        tokens.extend(found.tokens)
                        occs.extend(found.occs)
                    else:
                        tokens.extend(
                            Token(
                                t.text,
                                t.start + d_pos,
                                t.end + d_pos,
                                t.norm,
                                t.sentence + d_sent,
                                t.is_stop,
                                t.is_number,
                                t.joined,
                            )
                            for t in found.tokens
                        )
                        occs.extend(
                            TermOccurrence(
                                o.key,
                                o.start + d_pos,
                                o.end + d_pos,
                                o.sentence + d_sent,
                                o.first_token + d_tok,
                                o.n_tokens,
                            )
                            for o in found.occs
                        )
            pos += len(line) + 1
        return tokens, occs


@dataclass(slots=True)
class Classified:
    """A key's verdict and its riskiest word (a phrase's), as ``Detector.classify`` found them."""

    verdict: Verdict
    part: Verdict | None


@dataclass(slots=True)
class GroupMemo:
    """Groups and units found safe, for the rounds of one text (one set of entities, one policy)."""

    judged: set[Conjuncts] = field(default_factory=set)  # groups judged not risky
    units: set[frozenset[tuple[str, tuple[frozenset[str], float]]]] = field(default_factory=set)
    # Units, by their keys in order, whose members were all safe terms as ``classify`` found them and formed no
    # risky group: while none of their keys is risky, their members are those again (a key's verdict is kept for
    # the whole call), so such a unit is found in ``units`` without building its members.
    plain: set[tuple[str, ...]] = field(default_factory=set)
    remembered: frozenset[tuple[str, tuple[frozenset[str], float]]] = frozenset()
    # Units (as ``unit_key``) whose own members form no risky group among themselves: kept when the remembered
    # members change (``remembering``), as no group of the text's own terms holds one. The memory's first round
    # asks only its groups of those units the text's own rounds found safe.
    own: set[frozenset[tuple[str, tuple[frozenset[str], float]]]] = field(default_factory=set)

    def remembering(self, remembered: Members) -> None:
        """The stream's remembered members for this round: what was found safe with others is forgotten."""
        sig = frozenset(remembered.items())
        if sig != self.remembered:
            self.units.clear()
            self.plain.clear()
            self.remembered = sig

    @staticmethod
    def unit_key(own: Members) -> frozenset[tuple[str, tuple[frozenset[str], float]]]:
        """The key under which a unit with these members was found safe (with the members ``remembering`` set)."""
        return frozenset(own.items())


@dataclass(frozen=True, slots=True)
class Layout:
    """The keys of each sentence and of each paragraph of a text, in the order of its terms by key: the units
    groups are judged in (``units``) and the units the evidence sums (``paragraphs``)."""

    sentences: list[list[str]]
    paragraphs: list[list[str]]

    @property
    def units(self) -> list[list[str]]:
        # A paragraph of one key adds nothing to the groups its sentences are judged in.
        return [*self.sentences, *(keys for keys in self.paragraphs if len(keys) > 1)]


@dataclass(slots=True)
class Reading:
    """One round's reading of its text, for the next round when it reads the same text: the memory's first round
    reads the text the text's own rounds left, which the last of them read (and found nothing in)."""

    text: str
    tokens: list[Token]
    by_key: dict[str, list[TermOccurrence]]
    layout: Layout
    context: dict[str, float]  # Engine._sense_evidence
    # What ``Detector.classify`` found safe when it found nothing risky, with the keys it avoided: a function of
    # these (the entities and policy are the call's), so the same again for the same avoided keys.
    safe: tuple[frozenset[str], dict[str, Verdict]] | None = None


@dataclass(slots=True)
class TextMemo:
    """Everything the rounds of one ``Engine.sanitize`` call share."""

    lines: LineTerms
    groups: GroupMemo = field(default_factory=GroupMemo)
    last: Reading | None = None
