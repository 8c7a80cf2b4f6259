"""Names of people, organisations and places: capitalised phrases, judged by a lexicon.

Measured against a packaged spaCy model on the TAB development documents
(README, "Identifiers"), capitalised phrases read with WordNet find as
much at a hundredth of the CPU: English marks names with capitals, and what
a capital does not tell (is "Court" a name? is "Smith"?) a dictionary does.

A phrase is a run of capitalised words, joined through "of", "of the",
"and", "for", "de", "van"... when a capitalised word follows. Then:
  * after a title ("Mr", "Dr.", "Judge") it is a person, title included;
  * with an organisation's head word ("Hospital", "Ministry", "Ltd") an organisation;
  * made only of ordinary words ("Court", "Human Rights") it is no name;
  * made of places the lexicon knows, a place; of nationalities, a demonym;
  * otherwise a person when short and free of ordinary words, else an organisation.
A person found once is found again wherever a part of the name recurs
("Mr Ruslan Kurkaev" ... "Kurkaev"), so one placeholder covers every mention.

In a program's text (a header such as X-Mailer, as the extractor tells; a
log's or a probe's lines pasted into a message) a run found by its capitals
alone is MISC when all its words are the program's vocabulary ("Java Linux");
a word no dictionary knows keeps it a person, as a program may write a
patient's name. Over the whole text, a release number after a word, a
measurement before it, a device report's labels and the message's own domain
names make a capitalised word a thing, unless the census lists it.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import OrderedDict
from collections.abc import Collection, Iterator, Sequence
from typing import Literal, Protocol

from gateway.model.identifiers import kinds as K
from gateway.model.identifiers.finding import Finding, Role

WordClass = Literal["common", "place", "person", "demonym", "proper", "mixed", "unknown"]


class Lexicon(Protocol):
    def word_class(self, word: str) -> WordClass:
        """What a capitalised word is in the language: an ordinary word, a place, a person's name..."""
        ...

    def is_ordinary(self, word: str) -> bool:
        """Whether the word has any ordinary (lower-case) sense, however rare."""
        ...

    def is_given_name(self, word: str) -> bool:
        """Whether the word is a frequent first name ("Rob", "Grace"), whatever else it is."""
        ...

    def is_surname(self, word: str) -> bool:
        """Whether the word is a frequent surname ("Foster", "Baker"), whatever else it is."""
        ...


TITLES = frozenset(
    "mr mrs ms miss mx dr prof professor judge justice sir dame lord lady rev reverend fr father sister brother "
    "hon senator sen rep gov governor mayor nurse capt captain col colonel gen general lt lieutenant sgt sergeant "
    "officer inspector detective det constable pc dc president chancellor minister".split()
)
# Titles that are also ordinary capitalised words at the start of a sentence need a name after them.
_STRONG_TITLES = frozenset("mr mrs ms miss mx dr prof sir dame".split())
ORG_HEADS = frozenset(
    "ltd limited inc incorporated llc llp plc gmbh ag sa corp corporation co company companies bank hospital "
    "hospitals clinic clinics infirmary university college school academy institute institution department "
    "ministry office agency court courts tribunal council committee commission board police service services "
    "centre center association union party group foundation trust authority branch headquarters prison "
    "registry government parliament assembly army navy force forces directorate prosecutor prosecutors "
    "prosecution inspectorate bureau federation society church mosque synagogue laboratory laboratories lab "
    "labs pharmacy practice surgery network unit division chamber chambers firm partners associates "
    "newspaper times post gazette press broadcasting radio television tv station airlines railway railways "
    "municipality administration secretariat embassy consulate mission fund programme program project "
    "cooperative club league team orchestra museum library hotel restaurant store stores shop market".split()
)
_ABBREVIATIONS = TITLES | frozenset("st mt ft inc ltd co corp bros jr sr no nos".split())
_CONNECTORS = frozenset(
    "of of-the for and & de del della der den di du la le van von y al el bin ibn da dos das".split()
)
_PLACE_HEADS = frozenset(
    "street road avenue square park river lake mountain mountains island islands county district province region "
    "city town village valley bay coast sea ocean hill hills heights".split()
)
_CLOSINGS = re.compile(
    r"(?:regards|best|thanks|thank you|cheers|sincerely|yours|cordially|respectfully|warmly|best wishes|"
    r"kind regards|many thanks|all the best)[ \t]*[,.!]?[ \t]*(?:\r?\n)+[ \t]*$",
    re.IGNORECASE,
)
# The last letters of the closings: a line after anything else is after no closing (a test before the search).
_CLOSING_ENDS = frozenset("stuySTUY")


def _may_close(text: str, at: int) -> bool:
    """Could _CLOSINGS end at ``at``: do the blank lines before it follow a word ending as a closing ends?"""
    before = text[max(0, at - 60) : at].rstrip(" \t\r\n").rstrip(",.!").rstrip(" \t")
    return bool(before) and before[-1] in _CLOSING_ENDS


_GREETINGS = re.compile(r"(?:^|\n)[ \t]*(?:dear|hi|hello|hey|good morning|good afternoon)[ \t]+$", re.IGNORECASE)

_NAME_PART = re.compile(r"[^\W\d_][\w’'-]*")
_CLITIC = re.compile(r"['’](?:s|m|re|ve|ll|d|t)$", re.IGNORECASE)
_NAME_PREFIX = re.compile(r"^(?:Mc|Mac|O['’]|D['’]|L['’]|Fitz|Van|De|Di|Le|La)(?=[A-Z])")
_INNER_CAPITAL = re.compile(r"(?<![-'’])[A-Z]")
_COUPLE = re.compile(r" (?:and|&) (?:Mrs|Ms|Mr|Miss|Dr)\b")
_CAP = re.compile(r"[^\W\d_a-z](?<![\w’'-].)(?:[\w’'-]*\w)?\.?")
_CAP_START = re.compile(r"[^\W\d_a-z]")  # what every match of _CAP opens with
_CONNECTOR_GAP = re.compile(
    r" (of|for|and|&|de|del|della|der|den|di|du|la|le|van|von|y|al|el|bin|ibn|da|dos|das)(?: (the))? "
)


_CODE_CHARS = frozenset("_0123456789")
_GLUE = frozenset("=+")


def _opaque(text: str, start: int, end: int, word: str) -> bool:
    """A capital inside a machine token: a constant or version ("R_DKIM_ALLOW", "X11"), a product and its version
    ("Mozilla/5.0"), a run of base64 ("bh=Zf+Qq"). Mail headers are full of them and no person is written so."""
    if not _CODE_CHARS.isdisjoint(word):
        return True
    before = text[start - 1] if start else ""
    after, then = text[end : end + 1], text[end + 1 : end + 2]
    return before in _GLUE or (after in _GLUE and then.isalnum()) or (after == "/" and then.isdigit())


class _Tok:
    """A word of a capitalised run; what the judge asks of it is computed once."""

    __slots__ = ("acronym", "capitalised", "end", "initial", "start", "text", "word")

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text = text
        self.start = start
        self.end = end
        word = text.rstrip(".")
        if "'" in word or "’" in word:
            word = _CLITIC.sub("", word)
        self.word = word
        self.initial = len(text) == 2 and text[1] == "." and text[0].isupper()
        self.acronym = 2 <= len(word) <= 8 and word.isupper() and word.isalpha()
        # "B210", "USB3" are product codes and "TwinRX", "MSps" technical terms, not names; "McDonald",
        # "O'Brien" and "Jean-Pierre" are names.
        if not text[:1].isupper() or (not text.isalpha() and any(ch.isdigit() for ch in text)):
            self.capitalised = False
        elif text[1:].islower():  # "Hello": most capitalised words (no prefix applies: it needs a capital after it)
            self.capitalised = True
        else:
            inner = _NAME_PREFIX.sub("", text)[1:]
            self.capitalised = inner.isupper() or inner.islower() or not _INNER_CAPITAL.search(inner)


def _sentence_initial(text: str, start: int) -> bool:
    j = start - 1
    while j >= 0 and text[j] in " \t\r\"“‘'([*->":
        j -= 1
    return j < 0 or text[j] in ".!?:;\n\u2029" or (text[j] == ")" and j > 0 and text[j - 1].isdigit())


def _alone_after(text: str, end: int) -> bool:
    """Nothing but punctuation after ``end`` on its line: "Hi Rob," or a signature's "Mark"."""
    nl = text.find("\n", end)
    return not text[end : nl if nl >= 0 else len(text)].strip(" \t\r,.!:;")


def _shouting(line: str) -> bool:
    """A line in capitals ("THE FACTS"): a heading, whose words are no names."""
    # isupper: some cased letter, none lower case
    return len(line) <= 200 and line.isupper() and sum(ch.isalpha() for ch in line) >= 8


# A style sheet's declaration ("font-family:Calibri", "{mso-style-type:personal;", "@font-face"): a property in
# lower case, hyphens allowed, then a colon. HTML parts carry their style attributes and <style> blocks as text.
# A rule may open on the line, after its selector ("p.MsoNormal, li.MsoNormal {margin:0"), or close before the
# next one's selector ("sans-serif;}span.EmailStyle17"), a piece with no declaration.
_DECLARATION = re.compile(
    r"[ \t{}]*(?:[^{};:]*\{[ \t]*)?(?:-?[a-z][a-z0-9]*(?:-[a-z0-9]+)*[ \t]*:|@[a-z][a-z-]*)|[ \t]*\}[^{};:]*\Z"
)
_HYPHENATED_PROPERTY = re.compile(r"[ \t{}]*-?[a-z][a-z0-9]*(?:-[a-z0-9]+)+[ \t]*:")
# A declaration's property, after the rule's selector where one opens on the line ("a:link, span.x { color:").
_PROPERTY = re.compile(r"[ \t{]*(?:[^{};]*\{[ \t]*)?(-?[a-z][a-z0-9]*(?:-[a-z0-9]+)*)[ \t]*:")

# The properties CSS defines (CSS 2.1 and the CSS 3 modules mail clients write; the last three are Word's HTML's, as
# Outlook writes them beside its "mso-" ones), by their names. A label a person
# writes looks the same ("next-of-kin: Mary Jones; follow-up: Dr Smith"), and its values are names: a piece is a
# declaration only when its property is one of these or vendor-prefixed ("-webkit-", Outlook's "mso-").
_CSS_PROPERTIES = frozenset(
    """
    accent-color align-content align-items align-self all animation animation-delay animation-direction
    animation-duration animation-fill-mode animation-iteration-count animation-name animation-play-state
    animation-timing-function appearance aspect-ratio backdrop-filter backface-visibility background
    background-attachment background-blend-mode background-clip background-color background-image
    background-origin background-position background-position-x background-position-y background-repeat
    background-size block-size border border-block border-block-color border-block-end border-block-start
    border-block-style border-block-width border-bottom border-bottom-color border-bottom-left-radius
    border-bottom-right-radius border-bottom-style border-bottom-width border-collapse border-color border-image
    border-image-outset border-image-repeat border-image-slice border-image-source border-image-width
    border-inline border-inline-color border-inline-end border-inline-start border-inline-style
    border-inline-width border-left border-left-color border-left-style border-left-width border-radius
    border-right border-right-color border-right-style border-right-width border-spacing border-style border-top
    border-top-color border-top-left-radius border-top-right-radius border-top-style border-top-width
    border-width bottom box-decoration-break box-shadow box-sizing break-after break-before break-inside
    caption-side caret-color clear clip clip-path color color-scheme column-count column-fill column-gap
    column-rule column-rule-color column-rule-style column-rule-width column-span column-width columns contain
    content counter-increment counter-reset cursor direction display empty-cells filter flex flex-basis
    flex-direction flex-flow flex-grow flex-shrink flex-wrap float font font-display font-family
    font-feature-settings font-kerning font-size font-size-adjust font-stretch font-style font-variant
    font-variant-caps font-variant-ligatures font-variant-numeric font-weight gap grid grid-area
    grid-auto-columns grid-auto-flow grid-auto-rows grid-column grid-column-end grid-column-start grid-gap
    grid-row grid-row-end grid-row-start grid-template grid-template-areas grid-template-columns
    grid-template-rows hanging-punctuation height hyphens image-rendering inline-size inset isolation
    justify-content justify-items justify-self layout-grid-mode left letter-spacing line-break line-height
    list-style list-style-image list-style-position list-style-type margin margin-block margin-block-end
    margin-block-start margin-bottom margin-inline margin-inline-end margin-inline-start margin-left
    margin-right margin-top mask max-block-size max-height max-inline-size max-width min-block-size min-height
    min-inline-size min-width mix-blend-mode object-fit object-position opacity order orphans outline
    outline-color outline-offset outline-style outline-width overflow overflow-wrap overflow-x overflow-y
    padding padding-block padding-bottom padding-inline padding-left padding-right padding-top page
    page-break-after page-break-before page-break-inside panose-1 perspective place-content place-items
    pointer-events position quotes resize right row-gap scroll-behavior size speak src tab-size table-layout
    text-align text-align-last text-autospace text-decoration text-decoration-color text-decoration-line
    text-decoration-style text-indent text-justify text-orientation text-overflow text-rendering text-shadow
    text-size-adjust text-transform text-underline-position top transform transform-origin transform-style
    transition transition-delay transition-duration transition-property transition-timing-function
    unicode-bidi unicode-range user-select vertical-align visibility white-space widows width will-change
    word-break word-spacing word-wrap writing-mode z-index zoom
    border-end-end-radius border-end-start-radius border-start-end-radius border-start-start-radius
    content-visibility font-optical-sizing font-palette font-synthesis font-variant-alternates
    font-variant-east-asian font-variant-position font-variation-settings forced-color-adjust
    hyphenate-character inset-block inset-inline line-clamp math-style overscroll-behavior padding-block-end
    padding-block-start padding-inline-end padding-inline-start print-color-adjust ruby-position scroll-margin
    scroll-padding scroll-snap-align scroll-snap-type scrollbar-color scrollbar-gutter scrollbar-width
    text-combine-upright text-decoration-skip-ink text-decoration-thickness text-emphasis text-underline-offset
    text-wrap text-wrap-mode text-wrap-style touch-action white-space-collapse
    punctuation-wrap text-justify-trim text-underline
    """.split()
)
_VENDOR = ("-webkit-", "-moz-", "-ms-", "-o-", "mso-")


def _css_property(piece: str) -> bool:
    """Whether a piece opens with a property CSS defines (an at-rule or a rule's closing brace passes too)."""
    if piece.lstrip(" \t").startswith("}"):
        return True  # a rule closed, then the next one's selector ("}a:link, span.MsoHyperlink"): no label's value
    m = _PROPERTY.match(piece)
    if m is None:
        return True  # "@font-face", "}span.EmailStyle21": _DECLARATION let it through, and it holds no label
    name = m.group(1)
    return name in _CSS_PROPERTIES or name.startswith(_VENDOR)


_PACKED_PROPERTY = re.compile(r"[ \t{]*-?[a-z][a-z0-9]*(?:-[a-z0-9]+)+:[^ \t]")


def _declarations(line: str) -> bool:
    """A line that is a style sheet's declarations, code and not prose: its words are font, colour and language
    names ("Calibri", "Cambria Math", "EN-US"), no one's. Every ";"-separated piece must open with a property,
    and the line must read as CSS and not as a labelled sentence ("follow-up: Dr Smith"): two declarations or
    more, a closing ";" or a brace, or a hyphenated property with no blank at its colon ("font-family:Arial").
    One property at least is hyphenated as CSS's are ("font-size", "mso-style-type"): "cc: John; bcc: Mary" is
    a list of labels, whose values are names."""
    if "-" not in line or (":" not in line and "@" not in line):
        return False
    line = line.rstrip(" \t\r")
    pieces = [p for p in line.split(";") if p.strip(" \t{}")]
    several = len(pieces) >= 2
    if several and pieces[0].islower() and not _DECLARATION.match(pieces[0]):
        # The end of a value wrapped from the line before: "  rgb(0, 0, 0); font-size: 12pt" (with no capital:
        # "Seen by Rob Smith; font-size: 12pt" opens with prose).
        pieces = pieces[1:]
    if not pieces or not all(_DECLARATION.match(p) and _css_property(p) for p in pieces):
        return False
    if not any(_HYPHENATED_PROPERTY.match(p) for p in pieces):
        return False
    return several or line.endswith((";", "}")) or "{" in line or (_PACKED_PROPERTY.match(pieces[0]) is not None)


# A line a program printed, whatever part it stands in: a level of a log's ("[INFO] [UHD] linux; GNU C++ version"),
# the syslog levels; or a tree a probe draws, bars down its left ("|   |   RX Dboard: A", "|   /"). A table a
# person writes in plain text ("| Patient | Mary Jones |") closes its rows with a bar, a drawn tree does not.
_LOG_LEVEL = re.compile(r"\[(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL|ALERT|EMERG)\](?:[ \t]|\r?\Z)")
_TREE = re.compile(r"\|[ \t]+[|/_*]")
_BLANK_OR_QUOTE = " \t\r\xa0>"  # an HTML part indents with no-break spaces
_PRINTED_OPENS = frozenset(" \t\xa0>|[")


def _program_output(line: str) -> bool:
    """Whether a line (quote marks allowed before it) is one a program printed: a log's or a drawn tree's."""
    if line[:1] not in _PRINTED_OPENS:
        return False
    if line[0] != "|" and line[0] != "[":
        line = line.lstrip(_BLANK_OR_QUOTE)
    if _LOG_LEVEL.match(line) is not None:
        return True
    return _TREE.match(line) is not None and not line.rstrip(" \t\r").endswith("|")


# A finding of a line: start and end in the line, kind, source, score.
_AFTER_CLOSING = b"closing"
_QUOTED = b"quoted"
_MACHINE = b"machine"
# A person by nothing but capitals (no title, lexicon, census or greeting says so), and what such a word is in a
# program's text.
_CAPITALS_ONLY = "capitalised name"
_MACHINE_WORD = "capitalised word of a program's text"
_DOMAIN_WORD = "capitalised word of a domain name"
_PRODUCT = "product with a release number"
_LABEL = "label of a device's report"


def _thing(f: Finding, source: str) -> Finding:
    """A finding of a person by its capitals alone, turned out a thing (MISC) by ``source``'s evidence."""
    return Finding(start=f.start, end=f.end, kind=K.MISC, text=f.text, score=0.5, source=source)


_MEASURE = re.compile(r"\d\.\d+[ \t]\Z")
_LABEL_INDENT = " \t\xa0>|"  # an HTML part indents with no-break spaces
_WORD = re.compile(r"[^\W\d_]+")
_RELEASE = re.compile(r" (\d+\.\d+\.\d+(?:\.\d+)*|\d{4}\.\d+(?:\.\d+)*)(?![\w.]|\.\w)")
_DAY_MONTH_YEAR = re.compile(r"\d{1,2}\.\d{1,2}\.(?:\d{2}|\d{4})")
# A quoted line's marks: blanks, then ">" and any more blanks and ">" (all of which _sentence_initial passes over).
_QUOTE = re.compile(r"[ \t]*>[> \t]*")
_QUOTE_OPENS = frozenset(" \t>")
_LineFinding = tuple[int, int, str, str, float]


class NameRecognizer:
    """``cache_lines``: how many distinct lines' findings to remember (mailing lists quote the same lines again
    and again, and a multipart/alternative message says everything twice); 0 remembers none."""

    def __init__(self, lexicon: Lexicon, *, cache_lines: int = 20_000) -> None:
        self._lexicon = lexicon
        self._cache_lines = cache_lines
        # Keyed by a digest of the line (personalised by the closing bit), so what is remembered holds no text
        # of anyone's mail; the least recently read line goes first. An OrderedDict, not a dict: a dict read in
        # this order (every line read is moved to the end) leaves a deleted entry behind at each move, and
        # finding its oldest key walks over all of them (tens of thousands once the cache is full: 2 us a line
        # that is not kept, against 0.3 us here).
        self._lines: OrderedDict[bytes, tuple[_LineFinding, ...]] = OrderedDict()

    def __call__(
        self,
        text: str,
        kinds: Collection[str] | None = None,
        roles: Sequence[Role] = (),
        shown: Collection[str] = (),
    ) -> Iterator[Finding]:
        """The names of a text; ``kinds``: only those of these kinds (the others are not even built); ``roles``:
        who wrote each part of the text (parts are separated by U+2029), none given: people; ``shown``: words (in
        lower case) that the text's readers see anyway, as they stand, beside it (its header's domain names)."""
        # A name never spans lines and is judged by its own line, but for one thing: a signature's name
        # follows a closing ("Regards,") on the line before. So each line is read on its own, with that bit.
        found: list[Finding] = []
        pos = 0
        part = 0
        machine = bool(roles) and roles[0] == "machine"
        # A paragraph that showed a line a program printed ("[INFO] ...", a probe's tree) goes on in its words:
        # the lines after it up to the next blank one are read as a program's ("  RX Dboard: A").
        printed = False
        # A person by capitals alone may turn out a thing (MISC) once the whole text is read (_shown, _products,
        # _labels): when only MISC is asked for, those persons are kept until then.
        things = kinds is not None and K.MISC in kinds and K.PERSON not in kinds
        for line in text.split("\n"):
            start = pos
            pos += len(line) + 1
            if not line or line == "\u2029":
                printed = False
                if roles and line:  # the separator's own line (extractors.base.SEPARATOR)
                    part += 1
                    machine = part < len(roles) and roles[part] == "machine"
                continue
            if printed:
                if not line.strip(_BLANK_OR_QUOTE):  # a blank line (quote marks aside) ends the paragraph
                    printed = False
                    continue
            elif ("[" in line or "|" in line) and _program_output(line):  # substring tests first: they are cheap
                printed = True
            if line.islower() or _CAP_START.search(line) is None:
                continue  # no capital, no name: not even looked up in the cache (a fifth of the lines with text)
            indent = len(line) - len(line.lstrip(" \t"))
            s = start + indent
            closing = (
                indent < len(line)
                and line[indent].isupper()
                and _may_close(text, s)
                and (_CLOSINGS.search(text, max(0, s - 60), s) is not None)
            )
            shift, line_found = self._line(line, closing, machine or printed)
            base = start + shift
            for a, b, kind, source, score in line_found:
                if kinds is None or kind in kinds or (source == _CAPITALS_ONLY and things):
                    found.append(Finding(start=base + a, end=base + b, kind=kind, text=text[base + a : base + b],
                                         score=score, source=source))  # fmt: skip
        if shown:
            found = [self._shown(f) if f.source == _CAPITALS_ONLY and f.text.lower() in shown else f for f in found]
        found = self._labels(text, self._products(text, found))
        if kinds is not None and found:
            found = [f for f in found if f.kind in kinds]
        yield from found
        if kinds is None or K.PERSON in kinds:  # every other mention is a person's, of a person found here
            yield from self._mentions(text, found)

    def _products(self, text: str, found: list[Finding]) -> list[Finding]:
        """A word found as a person by its capital alone that the text writes with a release number after it
        ("Ubuntu 18.04.5", "Vivado 2019.1") names a product, there and wherever else it stands in the text. Only
        a number no date or measurement is written as: three parts or more that are no day, month and year
        ("12.03.61" is one), or a year's four digits and a release ("37.5" is a temperature, "20.04" a date).
        After a measurement with a decimal part it is a unit ("25.000000 Msps"), there and elsewhere too."""
        products = {
            f.text
            for f in found
            if f.source == _CAPITALS_ONLY
            and (
                (
                    text[f.end : f.end + 1] == " "
                    and (m := _RELEASE.match(text, f.end)) is not None
                    and _DAY_MONTH_YEAR.fullmatch(m.group(1)) is None
                )
                or _MEASURE.search(text, max(0, f.start - 16), f.start) is not None
            )
            and " " not in f.text
            and not self._census(f.text)
        }
        if not products:
            return found
        return [_thing(f, _PRODUCT)
                if f.source == _CAPITALS_ONLY and f.text in products else f for f in found]  # fmt: skip

    def _labels(self, text: str, found: list[Finding]) -> list[Finding]:
        """A device's report labels its lines with an acronym and a word ("RX Dboard: A", "TX Subdev: E3xx",
        "TX Channel: 1"): an acronym that opens the labels of two words or more at the start of lines, with a value
        that is a code (no word of the language in it), is a program's labelling, and a label of two words found
        as a person by capitals alone is none. A list of people by their initials ("JR Okonkwo: 4417") gives each
        initials one surname, and a ward's note ("JR Okonkwo: stable") has words in its values."""
        heads: dict[str, bool] = {}
        out = found
        for n, f in enumerate(found):
            if f.source != _CAPITALS_ONLY or text[f.end : f.end + 1] != ":":
                continue
            acronym, _, word = f.text.partition(" ")
            if not (2 <= len(acronym) <= 5 and acronym.isalpha() and acronym.isupper()) or " " in word or not word:
                continue
            line_start = text.rfind("\n", 0, f.start) + 1
            if text[line_start : f.start].strip(_LABEL_INDENT) or not self._code_value(text, f.end + 1):
                continue
            if self._census(word):
                continue
            if acronym not in heads:
                label = re.compile(rf"^[ \t\xa0>|]*{acronym} ([^\W\d_][\w-]*):", re.MULTILINE)
                words = {m.group(1) for m in label.finditer(text)}
                heads[acronym] = len(words) >= 2
            if heads[acronym]:
                if out is found:
                    out = list(found)
                out[n] = _thing(f, _LABEL)
        return out

    def _code_value(self, text: str, at: int) -> bool:
        """Whether the rest of the line from ``at`` is a value a program writes: something, and no word of the
        language ("A", "E3xx", "UBX TX", "n/a", "0.000000 MHz")."""
        end = text.find("\n", at)
        value = text[at : end if end >= 0 else len(text)].strip()
        if not value:
            return False
        return not any(len(w) >= 3 and self._lexicon.is_ordinary(w) for w in _WORD.findall(value))

    def _census(self, word: str) -> bool:
        """Whether the census lists the word as a first name or a surname: evidence of a person wherever it stands."""
        return self._lexicon.is_given_name(word) or self._lexicon.is_surname(word)

    def _shown(self, f: Finding) -> Finding:
        """A word found as a person by its capital alone that the message's own addresses show as a domain's name
        ("Ettus" beside usrp-users@lists.ettus.com): an organisation's name as likely as a person's, and one the
        message shows its readers unchanged whatever the text says (an address in a header is never rewritten),
        so replacing it hides nothing. A word the census lists as a first name or surname stays a person."""
        if self._census(f.text):
            return f
        return _thing(f, _DOMAIN_WORD)

    def _line(self, line: str, closing: bool, machine: bool = False) -> tuple[int, tuple[_LineFinding, ...]]:
        """The line's findings, as offsets from the first character after what is returned with them
        (``machine``: a program wrote the line's part)."""
        if not self._cache_lines:
            return 0, self._read_line(line, closing, machine=machine)
        if machine:
            key = hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=16, person=_MACHINE).digest()
            known = self._lines.get(key)
            if known is None:
                return 0, self._remember(key, self._read_line(line, closing, machine=True))
            self._lines.move_to_end(key)
            return 0, known
        shift = 0
        # Quote marks open with a blank or ">" (a test before the pattern: most lines open with neither).
        quote = _QUOTE.match(line) if line[:1] in _QUOTE_OPENS else None
        if quote is not None and not closing:
            # A quoted line ("> > Hi John") is read as the text after its quote marks, with no greeting, and is
            # remembered so: a thread quotes the same line at every depth. Its findings are the same either way:
            # no closing or greeting can stand before ">" (both need the line to open with a word), a signature
            # needs a closing, and what else a name's reading looks at before a word (a sentence's start, a
            # glue character, a letter before a capital) passes over blanks and ">" as over the line's start.
            # Only a shouting line (200 characters at most) can be told apart by its length: a quoted line whose
            # text after the marks shouts is read as it stands (it shouts too, or its marks make it too long to).
            shift = quote.end()
            if _shouting(line[shift:]):
                shift = 0
        if shift:
            line = line[shift:]
            key = hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=16, person=_QUOTED).digest()
        else:
            data = line.encode("utf-8", "surrogatepass")
            # Without a personalisation the digest is the one an empty one gives (a third of the call's time is
            # passing it): only a line after a closing, or a quoted one, is told apart by it.
            key = (hashlib.blake2b(data, digest_size=16, person=_AFTER_CLOSING) if closing
                   else hashlib.blake2b(data, digest_size=16)).digest()  # fmt: skip
        lines = self._lines
        known = lines.get(key)
        if known is not None:
            lines.move_to_end(key)  # last: read most recently
            return shift, known
        return shift, self._remember(key, self._read_line(line, closing, greeting=not shift))

    def _remember(self, key: bytes, known: tuple[_LineFinding, ...]) -> tuple[_LineFinding, ...]:
        lines = self._lines
        if len(lines) >= self._cache_lines:
            lines.popitem(last=False)
        lines[key] = known
        return known

    def _read_line(
        self, text: str, closing: bool, *, greeting: bool = True, machine: bool = False
    ) -> tuple[_LineFinding, ...]:
        """The names of one line: runs of capitalised words, each judged (``closing``: "Regards," before it;
        ``greeting``: whether a greeting may open it; ``machine``: a program wrote the line's part)."""
        if _shouting(text) or _declarations(text):
            return ()
        # Only capitalised words can start or carry a name: the rest of the text is never tokenized.
        caps = []
        for cap in _CAP.finditer(text):
            word = cap.group()
            if word[0].isupper():
                a, b = cap.span()
                if not _opaque(text, a, b, word):
                    caps.append(_Tok(word, a, b))
        found: list[Finding] = []
        i = 0
        n = len(caps)
        while i < n:
            t = caps[i]
            i += 1
            if not t.capitalised or (len(t.word) == 1 and not t.initial):
                continue
            run = [t]
            while i < n:
                prev, nxt = run[-1], caps[i]
                if prev.text.endswith(".") and not prev.initial and prev.word.lower() not in _ABBREVIATIONS:
                    break  # "in Istanbul. The Government": a full stop, not an abbreviation
                if prev.text.endswith(("’s", "'s")) or not nxt.capitalised:
                    break
                gap = text[prev.end : nxt.start]
                if gap in (" ", "-", ""):
                    run.append(nxt)
                    i += 1
                    continue
                # "of the", "and" between capitalised words ("Court of Appeal"), but not before a title
                # ("Mr Corell and Mr Frowein" are two people) nor between two first names ("John Smith and Mary
                # Baker" are two people too, and one placeholder for both would give Smith's number to Baker).
                m = _CONNECTOR_GAP.fullmatch(gap)
                if m is None or nxt.word.lower() in TITLES:
                    break
                if m.group(1) in ("and", "&") and self._two_people(run, nxt):
                    break
                run.extend(_Tok(m.group(g), prev.end + m.start(g), prev.end + m.end(g)) for g in (1, 2) if m.group(g))
                run.append(nxt)
                i += 1
            found.extend(self._judge(text, run, closing, greeting))
        if machine:
            # A capital alone is how a program writes its words too ("Microsoft Exchange Server"): such a finding
            # is something proper (MISC), as an unknown product is, when its words are all the program's vocabulary.
            # Programs write people's names too ("X-Patient: Xiomara Quetzaltenango", "[INFO] patient Ngozi
            # Okonkwo-Baptiste discharged"), and MISC is no Safe Harbor kind: a word no dictionary knows keeps the
            # finding a person, and so does a word the census lists (a field that spells a sender,
            # "Carl.L.Wolsieffer@", may be where the first name is found).
            return tuple((f.start, f.end, K.MISC, _MACHINE_WORD, 0.5) if f.source == _CAPITALS_ONLY
                         and self._program_words(f.text) else
                         (f.start, f.end, f.kind, f.source, f.score) for f in found)  # fmt: skip
        return tuple((f.start, f.end, f.kind, f.source, f.score) for f in found)

    def _program_words(self, phrase: str) -> bool:
        """Whether every word of a phrase found by its capitals alone is of a program's vocabulary (a word the
        dictionary knows, an acronym) and none the census lists: only positive evidence of a thing makes it no
        person, never the mere want of a person's evidence. One word no dictionary knows keeps it a person:
        "Patient Xiomara Quetzaltenango" is a label and a name ("Primary Hostname", a label and a word, stays one
        too: the dictionary cannot tell "Hostname" from "Okonkwo")."""
        words = [w.strip(".,;:'\"()[]") for w in phrase.split()]
        if any(self._census(w) for w in words if w):
            return False
        lex = self._lexicon
        return all((w.isupper() and w.isalpha() and len(w) >= 2) or lex.word_class(w) != "unknown"
                   for w in words if w)  # fmt: skip

    def _two_people(self, run: Sequence[_Tok], nxt: _Tok) -> bool:
        first = next((t for t in run if t.word.lower() not in TITLES), None)
        lex = self._lexicon
        if first is None or first is run[-1]:
            return False
        return lex.is_given_name(first.word) and lex.is_given_name(nxt.word)

    def _first_name(self, text: str, run: Sequence[_Tok], closing: bool) -> bool:
        """Whether a sentence's first word, an ordinary one, is someone's first name: a frequent one, before a
        word no dictionary holds ("Rob Kossler wrote", where "Rob" is also a verb), or alone on a line after a
        closing ("Regards,\nMark")."""
        first = run[0]
        if not self._lexicon.is_given_name(first.word):
            return False
        if len(run) > 1:
            return self._full_name(run[:2])
        return closing and not text[: first.start].strip(" \t") and _alone_after(text, first.end)

    def _full_name(self, run: Sequence[_Tok]) -> bool:
        """A first name and a surname, whatever else the words are: "Nick Foster", "Rob Kossler"."""
        if len(run) not in (2, 3) or any(t.acronym or not t.capitalised for t in run):
            return False
        if any(b.start - a.end != 1 for a, b in itertools.pairwise(run)):
            return False  # "Grace-Baker", "Bill of Rights"
        lex, last = self._lexicon, run[-1].word
        if last.lower() in ORG_HEADS or last.lower() in _PLACE_HEADS or not lex.is_given_name(run[0].word):
            return False
        return lex.is_surname(last) or lex.word_class(last) in ("unknown", "proper", "person")

    def _judge(self, text: str, run: Sequence[_Tok], closing: bool, greeting: bool = True) -> list[Finding]:
        """``text`` is one line; ``closing``: a closing ("Regards,") stands on the lines just before it;
        ``greeting``: a greeting may open the line."""
        lex = self._lexicon
        run = list(run)
        # Strip a sentence-initial ordinary word ("The", "However", "Fearing").
        title: _Tok | None = None
        while run:
            first = run[0]
            low = first.word.lower()
            if (low in _CONNECTORS or low == "the") and not first.capitalised:
                run = run[1:]  # left first by a sentence's first word: "Claim for Maria Gonzales"
                continue
            if low in TITLES:
                if len(run) == 1:
                    # "Mr and Mrs T.": the first title belongs to the name after the second.
                    if low in _STRONG_TITLES and _COUPLE.match(text, first.end):
                        return [self._finding(text, first.start, first.end, K.PERSON, "title and name")]
                    return []
                if low in _STRONG_TITLES or not _sentence_initial(text, first.start) or run[1].capitalised:
                    title = first
                    run = run[1:]
                break
            if _sentence_initial(text, first.start) and not first.acronym:
                # A capital that only starts a sentence: "The", "However", "Born in 1948" (Max Born aside).
                cls = lex.word_class(first.word)
                if (
                    cls == "common" or low in _CONNECTORS or (len(run) == 1 and lex.is_ordinary(first.word))
                ) and not self._first_name(text, run, closing):
                    run = run[1:]
                    continue
            break
        if title is not None:
            # The name is the capitalised words after the title; a connector starts another phrase
            # ("Mr Corell for the Government").
            k = 0
            while k < len(run) and run[k].capitalised and run[k].word.lower() not in _CONNECTORS:
                k += 1
            if k == 0:
                return []
            end = run[k - 1].end
            if run[k - 1].text.endswith(".") and not run[k - 1].initial:
                end -= 1
            person = Finding(start=title.start, end=end, kind=K.PERSON, text=text[title.start : end], score=0.9,
                             source="title and name")  # fmt: skip
            rest = run[k:]
            while rest and (rest[0].word.lower() in _CONNECTORS or rest[0].word.lower() == "the"):
                rest = rest[1:]
            return [person, *(self._judge(text, rest, closing, greeting) if rest else [])]
        while run and (run[-1].word.lower() in _CONNECTORS or run[-1].word.lower() == "the"):
            run.pop()
        if not run:
            return []
        start, end = run[0].start, run[-1].end
        if run[-1].text.endswith(".") and not run[-1].initial and run[-1].word.lower() not in ORG_HEADS:
            end -= 1  # a full stop ends the sentence, not the name
        if text[end - 2 : end] in ("’s", "'s"):
            end -= 2
        toks = [t for t in run if t.word.lower() not in _CONNECTORS and t.word.lower() != "the"]
        words = [t.word for t in toks]
        classes = [lex.word_class(w) for w in words]
        if len(words) > 1:
            # A place's abbreviation ("TX", "ID": states) is no evidence of a place inside a longer phrase: "TX DSP"
            # and "NOC ID" are a device's parts, and a state alone is no Safe Harbor place anyway.
            classes = ["unknown" if c == "place" and t.acronym else c for c, t in zip(classes, toks, strict=True)]
        lows = [w.lower() for w in words]
        if len(words) > 1 and (whole := lex.word_class(" ".join(words))) in ("place", "person"):
            kind = K.LOC if whole == "place" else K.PERSON  # "United Kingdom", "New York", "Alice Walker"
            return [self._finding(text, start, end, kind, "name in the lexicon")]
        greeted = greeting and start <= 24 and _GREETINGS.search(text, 0, start) is not None
        signed = closing and not text[:start].strip(" \t")
        if (
            (greeted or signed)
            and len(words) <= 3
            and not any(low in ORG_HEADS for low in lows)
            # "Hello All", "Dear Community" are no names; "Hi Rob, see below" and "Cheers,\nGrace" are.
            and (
                not all(lex.is_ordinary(w) for w in words)
                or (
                    lex.is_given_name(words[0])
                    and (_alone_after(text, end) or (greeted and text[end : end + 1] in ",!:"))
                )
            )
        ):
            return [self._finding(text, start, end, K.PERSON, "greeting or signature")]
        if any(low in ORG_HEADS for low in lows):
            # "the Court" names no particular body; "the Court of Appeal", "the Home Office" do.
            if len(words) == 1 and classes[0] in ("common", "demonym"):
                return []
            return [self._finding(text, start, end, K.ORG, "organisation head word")]
        if len(words) == 1 and run[0].acronym:
            return [self._finding(text, start, end, K.MISC, "acronym", 0.5)]
        if all(c in ("common", "demonym") for c in classes) and len(run) == len(words) and self._full_name(run):
            return [self._finding(text, start, end, K.PERSON, "first name and surname", 0.7)]
        if all(c in ("common", "demonym") for c in classes):
            if len(words) == 1 and classes[0] == "demonym":
                return [self._finding(text, start, end, K.DEM, "nationality")]
            if len(words) > 1 and not _sentence_initial(text, start):
                # "Widow's Bereavement Allowance": a proper name made of ordinary words.
                return [self._finding(text, start, end, K.MISC, "capitalised phrase", 0.4)]
            return []
        if any(c == "person" for c in classes) and len(words) <= 4:
            return [self._finding(text, start, end, K.PERSON, "personal name", 0.75)]
        if all(c == "place" or low in _PLACE_HEADS or c == "common" for c, low in zip(classes, lows, strict=True)):
            return [self._finding(text, start, end, K.LOC, "place name")]
        if len(words) == 1 and len(words[0]) <= 2:
            # "Qt", "Ip", "Cy": two letters alone are a product, a unit or a syllable as often as a name. A person
            # of two letters is found with a title, a greeting or a signature (above), not by a capital alone; as
            # another mention ("Li" after "Mr Li") a part needs three letters too (_mentions).
            return [self._finding(text, start, end, K.MISC, "capitalised phrase", 0.5)]
        if len(words) == 1 and classes[0] == "proper" and not (lex.is_given_name(words[0]) or lex.is_surname(words[0])):
            # The dictionary knows the word as the name of a thing, neither a person nor a place ("Linux",
            # "Helvetica": a product, a typeface), and no census lists it as a first name or surname: a capital
            # alone is no evidence of a person then. With a title, a greeting or a signature it is one (above).
            return [self._finding(text, start, end, K.MISC, "capitalised phrase", 0.5)]
        if all(c in ("unknown", "proper") for c in classes) and len(words) <= 4 and not any(t.acronym for t in run):
            return [self._finding(text, start, end, K.PERSON, _CAPITALS_ONLY, 0.7)]
        if any(c == "place" for c in classes) and len(words) <= 2:
            return [self._finding(text, start, end, K.LOC, "place name", 0.6)]
        if len(words) <= 3 and classes[-1] in ("unknown", "proper") and not run[-1].acronym:
            return [self._finding(text, start, end, K.PERSON, _CAPITALS_ONLY, 0.6)]
        return [self._finding(text, start, end, K.ORG if len(words) > 1 else K.MISC, "capitalised phrase", 0.5)]

    def _ordinary(self, run: Sequence[_Tok]) -> bool:
        return all(self._lexicon.word_class(t.word) == "common" for t in run)

    @staticmethod
    def _finding(text: str, start: int, end: int, kind: str, source: str, score: float = 0.8) -> Finding:
        return Finding(start=start, end=end, kind=kind, text=text[start:end], score=score, source=source)

    def _mentions(self, text: str, found: Sequence[Finding]) -> Iterator[Finding]:
        """Every other mention of a person's name or surname, wherever it stands."""
        names: set[str] = set()
        for f in found:
            if f.kind != K.PERSON:
                continue
            parts = [w for w in _NAME_PART.findall(f.text) if w.lower() not in TITLES]
            for w in parts:
                w = _CLITIC.sub("", w)
                if len(w) > 2 and w[0].isupper() and self._lexicon.word_class(w) != "common":
                    names.add(w)
        if not names:
            return
        for name in names:
            i = text.find(name)
            while i >= 0:
                j = i + len(name)
                before = text[i - 1] if i else " "
                after = text[j] if j < len(text) else " "
                if not (before.isalnum() or before in "_’'-") and not (after.isalnum() or after in "_-"):
                    yield Finding(start=i, end=j, kind=K.PERSON, text=name, score=0.6, source="another mention")
                i = text.find(name, j)


_PUNCTUATION = ",.;:!?()[]<>\"'“”‘’*"
# Words that stand before a name without being part of it ("Hi Rob", "Thanks Baker").
_BEFORE_NAMES = frozenset("hi hello hey dear thanks thank cheers".split())


def ordinary_mentions(text: str, found: Sequence[Finding], lexicon: Lexicon) -> list[Finding]:
    """Every other mention of a person's name part that is also an ordinary word: "Rob" of "Rob Kossler",
    "Baker" of "Mary Baker". A reading of capitals takes no such word alone, so without this "I asked Baker"
    keeps the surname that [PERSON 1] hid. Only a frequent first name or surname (a word of "IO Error", read as
    a person, is not one), and only where it stands as a name stands: capitalised inside a sentence ("and
    Baker agreed") or alone on its line ("Rob,"), with no capitalised word beside it ("Baker Street")."""
    out = _surnames_first(text, found, lexicon)
    parts: set[str] = set()
    people = {f.text for f in (*found, *out) if f.kind == K.PERSON and not f.source.startswith("another mention")}
    for name in people:
        for w in name.split():
            w = w.strip(_PUNCTUATION)
            if "'" in w or "’" in w:
                w = _CLITIC.sub("", w)
            low = w.lower()
            if (
                len(w) > 2
                and w[0].isupper()
                and w[1:].islower()
                and w.isalpha()
                and low not in TITLES
                and low not in _CONNECTORS
                and (lexicon.is_given_name(w) or lexicon.is_surname(w))
                and lexicon.word_class(w) == "common"
            ):
                parts.add(w)
    for part in parts:
        i = text.find(part)
        while i >= 0:
            j = i + len(part)
            if _stands_as_name(text, i, j):
                out.append(Finding(start=i, end=j, kind=K.PERSON, text=part, score=0.6, source="another mention"))
            i = text.find(part, j)
    return out


_SURNAME_FIRST = re.compile(r"([A-Z][a-z]+(?:-[A-Z][a-z]+)?), $")


def _surnames_first(text: str, found: Sequence[Finding], lexicon: Lexicon) -> list[Finding]:
    """A name written surname first, as directories and mail programs write it: "Long, Jeffrey P.". The first
    name is found and the surname, an ordinary word, is not; a comma does not join them as a capital does."""
    out = []
    for f in found:
        if f.kind != K.PERSON or f.start < 3 or text[f.start - 2 : f.start] != ", ":
            continue
        m = _SURNAME_FIRST.search(text, max(0, f.start - 40), f.start)
        if m is None or (m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "-'’")):
            continue
        # One of the two must be a frequent name as the census lists them: a style sheet's "Calibri, Helvetica"
        # and a sentence's "Block, Python" are no one's surname and first name.
        first, surname = f.text.split(" ", 1)[0], m.group(1)
        given_first = lexicon.is_given_name(first) and (
            lexicon.is_surname(surname) or lexicon.word_class(surname) in ("unknown", "proper", "person")
        )
        if given_first or (lexicon.is_surname(surname) and lexicon.word_class(first) in ("unknown", "person")):
            out.append(Finding(start=m.start(), end=f.end, kind=K.PERSON, text=text[m.start() : f.end],
                               score=f.score, source="surname, first name"))  # fmt: skip
    return out


def _stands_as_name(text: str, i: int, j: int) -> bool:
    before = text[i - 1] if i else " "
    after = text[j] if j < len(text) else " "
    if before.isalnum() or before in "_’'-" or after.isalnum() or after in "_-":
        return False  # inside a word
    if after == " " and text[j + 1 : j + 2].isupper():
        return False  # "Baker Street", "Rob Kossler" (found as a whole already)
    if before == " ":
        k = i - 1
        while k > 0 and text[k - 1].isalpha():
            k -= 1
        prev = text[k : i - 1]
        if prev[:1].isupper() and prev.lower() not in _BEFORE_NAMES:
            return False  # "Little Baker": a longer capitalised phrase
    if _sentence_initial(text, i):
        return _alone_after(text, j) and not text[text.rfind("\n", 0, i) + 1 : i].strip(" \t>")
    return True
