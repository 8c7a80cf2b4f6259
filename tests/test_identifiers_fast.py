"""The identifier pass's fast paths find what the plain definitions find.

Each pattern rewritten to scan fast is checked against the pattern it replaces (its definition) on texts
written to hit its edges; the line cache of the name recognizer against reading without it.
"""

from __future__ import annotations

import re

import pytest
from archive import ARCHIVE, archive_texts

from gateway.model.engine import Engine
from gateway.model.identifiers import Analyzer, NameRecognizer, remove_identifiers, resolve_kinds, sanitize_text
from gateway.model.identifiers import patterns as P
from gateway.model.normalize import fold_with_offsets
from gateway.model.records import SanitizePolicy
from gateway.taxonomy.lexicon import WordNetLexicon
from gateway.taxonomy.wordnet import WordNet

SAFE_HARBOR = resolve_kinds(["safe-harbor"])

# The definitions: what each pattern meant before it was rewritten to open with a character set.
EMAIL = re.compile(r"\b[\w.%+'-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}\b")
URL = re.compile(r"\b(?:(?:https?|ftp)://|www\.)[^\s<>\"'()\[\]]+[^\s<>\"'()\[\].,;:!?]", re.IGNORECASE)
IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){2,7}[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{1,4})*(?![\w:])")
PO_BOX = re.compile(r"\bP\.?\s?O\.?\s+Box\s+\d+\b", re.IGNORECASE)

EDGES = [
    "Write to jane.roe@example.org, or to .lead@example.org and 'quoted'@example.com.",
    "x@y.co a@b.com.c@d.org ...@nothing.org _under_score@host.io ü.ser@münchen.de jo@ex-ample.museum",
    "mail: a+b%c@sub.domain.example.co.uk; bad@@double.org; end@dot.org.",
    "See https://example.org/a?b=c, HTTP://EXAMPLE.ORG/X and www.example.com/path. Also ftp://files.example.net/.",
    "xhttp://no.example wwww.example.org Www.Mixed.Case/ok hTtPs://odd.case/x) (http://in.parens/y)",
    "Link: fe80::1ff:fe23:4567:890a, 2001:db8::8a2e:370:7334 and ::1; a:b:c 12:30:45 deadbeef::cafe",
    "Mail to PO Box 5521, P.O. Box 77 or p. o.  box 12; not SPO Box 3 nor POBox 4.",
]


@pytest.mark.parametrize("text", EDGES)
def test_fast_patterns_find_what_their_definitions_find(text: str) -> None:
    assert [(f.start, f.end) for f in P.emails(text)] == [m.span() for m in EMAIL.finditer(text)]
    assert [(f.start, f.end) for f in P.urls(text)] == [m.span() for m in URL.finditer(text)]
    assert [m.span() for m in P._IPV6.finditer(text)] == [m.span() for m in IPV6.finditer(text)]
    assert [m.span() for m in P._PO_BOX.finditer(text)] == [m.span() for m in PO_BOX.finditer(text)]


def test_the_edges_are_exercised() -> None:
    # The comparison above means something only if the definitions find things in these texts.
    text = " ".join(EDGES)
    assert len(EMAIL.findall(text)) >= 10 and len(URL.findall(text)) >= 6
    assert len(IPV6.findall(text)) >= 3 and len(PO_BOX.findall(text)) >= 3


LETTER = """Hi Margit,

thanks for the logs. Dr. Okonkwo and Mrs Eleanor Vasquez from Fresno looked at them;
> Tomasz Nowak wrote that the Court of Appeal in Springfield had no record.
> Tomasz Nowak wrote that the Court of Appeal in Springfield had no record.

THE FACTS OF THE CASE
Nowak agrees.

Kind regards,

   Priya Raman
Priya Raman
"""


def test_the_line_cache_changes_nothing(wordnet: WordNet) -> None:
    lexicon = WordNetLexicon(wordnet)
    cached = NameRecognizer(lexicon)
    plain = NameRecognizer(lexicon, cache_lines=0)
    want = list(plain(LETTER))
    assert {f.text for f in want} >= {"Margit", "Dr. Okonkwo", "Mrs Eleanor Vasquez", "Tomasz Nowak", "Priya Raman"}
    assert list(cached(LETTER)) == want
    assert list(cached(LETTER)) == want  # now read from the cache
    # The same line means something else after a closing: the cache keeps the two apart.
    other = "Priya Raman said so.\n" + "Priya Raman\n"
    assert list(cached(other)) == list(plain(other))


def test_the_line_cache_holds_no_text(wordnet: WordNet) -> None:
    recognizer = NameRecognizer(WordNetLexicon(wordnet), cache_lines=3)
    list(recognizer(LETTER))
    lines = recognizer._lines
    assert len(lines) == 3  # bounded: the least recently read lines went
    for digest, found in lines.items():
        assert isinstance(digest, bytes) and len(digest) == 16
        assert all(not isinstance(v, str) or v.isupper() or " " in v or v.islower() for f in found for v in f)
        assert b"Raman" not in digest and b"Nowak" not in digest


def test_the_line_cache_keys_are_the_personalised_digests(wordnet: WordNet) -> None:
    import hashlib

    # Each line is keyed by blake2b's digest personalised by the closing bit: b"" (the digest computed without
    # passing a personalisation is that one) or b"closing" after "Regards,".
    recognizer = NameRecognizer(WordNetLexicon(wordnet))
    list(recognizer("Dear Ren\u00e9e M\u00fcller,\nThe Court of Appeal agreed.\n\nKind regards,\nPriya Raman"))
    want = {hashlib.blake2b(line.encode(), digest_size=16, person=b"").digest()
            for line in ("Dear Ren\u00e9e M\u00fcller,", "The Court of Appeal agreed.", "Kind regards,")}  # fmt: skip
    want.add(hashlib.blake2b(b"Priya Raman", digest_size=16, person=b"closing").digest())
    assert set(recognizer._lines) == want


def lines_read(recognizer: NameRecognizer) -> list[str]:
    """The lines the recognizer reads (not taken from its cache) from now on, in order."""
    read: list[str] = []
    real = recognizer._read_line

    def counting(line: str, closing: bool, *, greeting: bool = True) -> tuple[tuple[int, int, str, str, float], ...]:
        read.append(line)
        return real(line, closing, greeting=greeting)

    recognizer._read_line = counting  # type: ignore[method-assign]
    return read


def test_the_line_cache_keeps_the_lines_read_again(wordnet: WordNet) -> None:
    recognizer = NameRecognizer(WordNetLexicon(wordnet), cache_lines=2)
    read = lines_read(recognizer)
    list(recognizer("Mr Ruslan Kurkaev\nThe Court of Appeal\nMr Ruslan Kurkaev\nDr. Okonkwo\nMr Ruslan Kurkaev"))
    # The first line, read again before a third came, stays; "The Court of Appeal" (read once) went first.
    assert read == ["Mr Ruslan Kurkaev", "The Court of Appeal", "Dr. Okonkwo"]


NO_CAPITALS = "12:30\n-- \n11879739\n3.3.3 ...\n\u2029\n  \u00e9t\u00e9 \u00e0 l'h\u00f4tel"


def test_a_line_without_a_capital_is_not_looked_up(wordnet: WordNet) -> None:
    # A name opens with a capital (_CAP): a line with none, though not lower case (digits, punctuation, blanks)
    # holds no name, and is passed over before its digest is taken.
    recognizer = NameRecognizer(WordNetLexicon(wordnet))
    read = lines_read(recognizer)
    assert list(recognizer(NO_CAPITALS)) == []
    assert read == [] and len(recognizer._lines) == 0
    # A letter outside ASCII that is no lower-case one still is: "Émile" (and "> Émile", quoted) are read.
    texts = [f.text for f in recognizer(NO_CAPITALS + "\n\u00c9mile Zola\n> \u00c9mile Zola")]
    assert texts.count("\u00c9mile Zola") == 2 and read == ["\u00c9mile Zola"] * 2  # quoted: a key of its own
    # Every line still reads as it reads without the cache.
    plain = NameRecognizer(WordNetLexicon(wordnet), cache_lines=0)
    assert list(recognizer(NO_CAPITALS + "\n" + LETTER)) == list(plain(NO_CAPITALS + "\n" + LETTER))


def test_a_finding_is_built_as_a_frozen_dataclass_would_be() -> None:
    import dataclasses

    from gateway.model.identifiers import Finding

    f = Finding(start=3, end=9, kind="PERSON", text="Rybka!", score=0.7, source="capitalised name",
                parts=(("year", "1961"),))  # fmt: skip
    assert (f.start, f.end, f.kind, f.text, f.score, f.source, f.parts) == (
        3, 9, "PERSON", "Rybka!", 0.7, "capitalised name", (("year", "1961"),))  # fmt: skip
    bare = Finding(start=0, end=2, kind="ZIP", text="12")
    assert (bare.score, bare.source, bare.parts) == (1.0, "", ())
    assert f == Finding(**{x.name: getattr(f, x.name) for x in dataclasses.fields(f)}) and hash(f) == hash(
        dataclasses.replace(f)
    )
    assert f.moved(10, 15, "Rybka") == dataclasses.replace(f, start=10, end=15, text="Rybka")
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.start = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        Finding(start=0, end=2, kind="ZIP")  # type: ignore[call-arg]


SHOUTED = "DEAR MR RUSLAN KURKAEV, " + "THE FACTS OF THE CASE ARE THESE " * 5  # 184 characters
# Quoted lines at several depths, with what a quote could change: a greeting or closing inside the quote (no
# greeting or signature of this line), a sentence's start after ">" and brackets, a shouting line whose quote
# marks alone make it longer than 200 characters, a tab, an empty quote, and the same lines unquoted.
QUOTED = (
    "Hi Jakub Rybka,\n> Hi Jakub Rybka,\n> > Hi Jakub Rybka,\n>>Hi Jakub Rybka,\n"
    "Thanks,\nPriya Raman\n> Thanks,\n> Priya Raman\n>> Kind regards,\n>>\n>> Priya Raman\n"
    "> (Mr Corell and Mr Frowein) agreed.\n>\tDr. Okonkwo wrote:\n  > > O'Brien's Court of Appeal\n"
    "> The Court. Nowak agrees.\n> * Tomasz Nowak\n> -> Margit\n>\n> > \n" + f"{'> ' * 10}{SHOUTED}\n{SHOUTED}\n"
)


def test_a_quoted_line_is_read_as_its_text_after_the_quote(wordnet: WordNet) -> None:
    lexicon = WordNetLexicon(wordnet)
    cached = NameRecognizer(lexicon)
    plain = NameRecognizer(lexicon, cache_lines=0)  # every line read as it stands, quote marks and all
    want = list(plain(QUOTED))
    # What tells the quoted lines apart: the unquoted greeting and signature find their names, the quoted ones
    # do not; the long quoted capitals are no shouting line (over 200 characters), the same line unquoted is.
    greeted = [f for f in want if f.source == "greeting or signature"]
    assert [QUOTED.count("\n", 0, f.start) for f in greeted] == [0, 5]
    long_line = QUOTED.split("\n").index("> " * 10 + SHOUTED)
    assert any(QUOTED.count("\n", 0, f.start) == long_line for f in want)
    assert not any(QUOTED.count("\n", 0, f.start) == long_line + 1 for f in want)
    assert list(cached(QUOTED)) == want
    assert list(cached(QUOTED)) == want  # now read from the cache
    quoted = QUOTED.replace("\n> ", "\n> > > ").replace("\n>>", "\n> >>")  # deeper: the same lines read again
    assert list(cached(quoted)) == list(plain(quoted))


def test_a_quoted_line_is_remembered_at_every_depth(wordnet: WordNet) -> None:
    import hashlib

    recognizer = NameRecognizer(WordNetLexicon(wordnet))
    read = lines_read(recognizer)
    text = "Hi Jakub Rybka,\n> Hi Jakub Rybka,\n> > Hi Jakub Rybka,\n >>>Hi Jakub Rybka,"
    found = [f for f in recognizer(text) if f.source != "another mention"]
    assert read == ["Hi Jakub Rybka,", "Hi Jakub Rybka,"]  # once as it stands, once as quoted text
    assert [(f.start, f.text) for f in found] == [(3, "Jakub Rybka"), (21, "Jakub Rybka"), (41, "Jakub Rybka"),
                                                  (61, "Jakub Rybka")]  # fmt: skip
    assert [f.source for f in found] == ["greeting or signature", *["capitalised name"] * 3]
    # The quoted text is keyed apart from the same line unquoted (its greeting does not count).
    assert set(recognizer._lines) == {
        hashlib.blake2b(b"Hi Jakub Rybka,", digest_size=16).digest(),
        hashlib.blake2b(b"Hi Jakub Rybka,", digest_size=16, person=b"quoted").digest(),
    }


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_line_cache_on_archive_texts(wordnet: WordNet) -> None:
    lexicon = WordNetLexicon(wordnet)
    cached = NameRecognizer(lexicon)
    plain = NameRecognizer(lexicon, cache_lines=0)
    texts = archive_texts(300, chars=20_000)
    assert sum(line.lstrip().startswith(">") for t in texts for line in t.split("\n")) > 1000
    for text in texts:
        assert list(cached(text)) == list(plain(text))


def test_a_value_in_another_case_gets_the_same_replacement(analyzer: Analyzer) -> None:
    text = ("Thanks, Ettus Nakamura-Oduya helped; Ettus says the files are at files.ettus.com, ask ettus support."
            "\nAn ettus-style layout; see ettus_usrp.conf")  # fmt: skip
    policy = SanitizePolicy(entities=(), identifiers=SAFE_HARBOR)
    result = remove_identifiers(text, analyzer, policy)
    assert "ettus" not in result.text.lower().replace("ettus-style", "")
    person = next(d for d in result.decisions if d.replacement == "[PERSON 1]")
    assert person.surface == "Ettus Nakamura-Oduya"  # as found, not another case: the residual check looks for it
    assert [text[a:b] for a, b in person.spans] == ["Ettus Nakamura-Oduya", "Ettus", "ettus", "ettus", "ettus"]
    # As in the engine's terms: a hyphen joins words (a compound is a word of its own), an underscore parts them.
    assert "An ettus-style layout" in result.text and "[PERSON 1]_usrp.conf" in result.text


def test_a_replaced_value_in_another_case_keeps_the_engine_on_its_fast_path(engine: Engine, analyzer: Analyzer) -> None:
    text = ("Ettus Nakamura-Oduya wrote the driver, Ettus says.\nThe ettus driver builds on linux with cmake; "
            "the manual is on files.ettus.com.\n")  # fmt: skip
    policy = SanitizePolicy(entities=("HIV",), identifiers=SAFE_HARBOR)
    result = sanitize_text(text, policy, engine=engine, identifiers=analyzer)
    assert "ettus" not in result.text.lower()
    assert not [d for d in result.decisions if d.kind is None]  # the engine found nothing to do


@pytest.fixture(scope="module")
def analyzer(wordnet: WordNet) -> Analyzer:
    return Analyzer(lexicon=WordNetLexicon(wordnet))


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("Mozilla/5.0 (X11; rv:102.0) Gecko/20100101 Thunderbird/102.11.0", None),
        ("R_DKIM_ALLOW(-0.20)[ettus.com:s=default]; MIME_GOOD(-0.10)", None),
        ("bh=Zf+Qq9xw=; b=Kx+Wv", None),
        ("Regards,\nAlice Walker", "Alice Walker"),
        ("Please call Mary Jones/Dr. Patel tomorrow.", "Mary Jones"),
    ],
)
# Header values are read as text (issue 11): a product, a constant or base64 in one is not a person.
def test_a_capital_inside_a_machine_token_is_no_name(analyzer: Analyzer, text: str, person: str | None) -> None:
    people = [f.text for f in analyzer.analyze(text, ["PERSON"])]
    assert people == ([person] if person else []) or (person is not None and person in people)


CLOSINGS = [
    "Thanks,\n\nPriya Raman\n",
    "Kind regards,\n   Tomasz Nowak\n",
    "BEST WISHES!\n\nMargit\n",
    "cheers \n\nJo\n",
    "Thank you.\nDr. Chen\n",
    "Regards\n \nNot a signature after a blank line with a blank in it\n",
    "All the best,\r\nEleanor\n",
    "See you,\n\nSam\n",
    "Yours sincerely,\n\n\nA. Person\n",
]


@pytest.mark.parametrize("text", CLOSINGS)
def test_the_closing_pretest_never_hides_a_closing(text: str) -> None:
    from gateway.model.identifiers import names

    for at in range(len(text) + 1):
        if names._CLOSINGS.search(text, max(0, at - 60), at) is not None:
            assert names._may_close(text, at), (text, at)


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_closing_pretest_on_archive_lines() -> None:
    from gateway.model.identifiers import names

    closings = 0
    for text in archive_texts(150, chars=20_000):
        pos = 0
        for line in text.split("\n"):
            at = pos + len(line) - len(line.lstrip(" \t"))
            pos += len(line) + 1
            if names._CLOSINGS.search(text, max(0, at - 60), at) is not None:
                closings += 1
                assert names._may_close(text, at)
    assert closings > 10


def _every_label(text: str) -> list[tuple[int, int]]:
    """The definition of the label scan: the label pattern tried at every word that can open a label."""
    out, pos = [], 0
    for w in P._WORD_START.finditer(text):
        if w.start() >= pos and w.group().lower() in P._LABEL_FIRST_WORDS:
            m = P._LABELLED_AT.match(text, w.start())
            if m is not None:
                pos = m.end()
                out.append(m.span())
    return out


LABELS = [
    "MRN: 00123456, Acct # 44-55-66 and member ID\tXK-88812; SSN 123456789",
    "Patient ID is A12-7, case no. 10424/05; ref.: 7781 / claim number 55512 and ticket #4411",
    "driver's license D1234567 (a/c 0099881), S/N: SN_9981-X, serial no. ab.c-12",
    "Medical record\n12345 (a line end between them) and policy number\n#7788; IMEI: 490154203237518",
    "patient \u0130D 12345, serial \u017f\u212a12 and \u212aey 7, acc\u0131ount 5: letters IGNORECASE matches",
    "file ref. 2021/77, registration no. 8Z-11, NHS number 943 476 5919, reference: _x9, ID: 9",
    "no. 5, #12, ## 7, Ref—9981 (a dash that is no label's), Acct#,1234 and account: (12345)",
]


@pytest.mark.parametrize("text", LABELS)
def test_the_label_pretest_hides_no_label(text: str) -> None:
    assert [m.span() for m in P._labels(text)] == _every_label(text)


def test_the_label_edges_are_exercised() -> None:
    assert sum(len(_every_label(text)) for text in LABELS) >= 15
    assert (0, 16) in _every_label(LABELS[4])  # "patient \u0130D 12345": a run must take the letters IGNORECASE adds
    # Labels whose number is cut off by a line end or a character outside the runs are found by neither.
    assert _every_label("Medical record\n12345") == [] and _every_label("Ref—9981") == []


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_label_pretest_on_archive_texts() -> None:
    found = 0
    for text in archive_texts(300, chars=20_000):
        want = _every_label(text)
        assert [m.span() for m in P._labels(text)] == want
        found += len(want)
    assert found > 20


def test_the_lemma_summary_is_what_the_lemmas_say(wordnet: WordNet) -> None:
    from gateway.taxonomy.wnreader import WordNetReader

    reader = wordnet._wn
    if not isinstance(reader, WordNetReader):
        pytest.skip("WordNet is read by nltk here: the lexicon does not ask for a summary")
    words = [*list(reader.all_lemma_names())[::97], "thanks", "court", "best", "regards", "hello", "smith",
             "glasses", "galore", "fast", "agreeable", "zzzyx", "court_of_appeal", "u.s.", "o'brien"]  # fmt: skip
    satellites = 0
    for word in words:
        lemmas = reader.lemmas(word)
        lower = [lm for lm in lemmas if lm.name()[:1].islower()]
        capitalised = sum(lm.name()[:1].isupper() for lm in lemmas)
        assert reader.lemma_summary(word) == (len(lemmas), len(lower), capitalised, sum(lm.count() for lm in lower))
        satellites += any(lm.synset().pos() == "s" for lm in lemmas)
    assert satellites > 50  # the keys that name a head synset are exercised


DATED = [
    "On Wed, Apr 27, 2022 at 4:10 PM; March 3rd, 12 Sept. 2019, Dec 2004 and 21st of March",
    "04/12/1961, 4.12.61, 1961-04-12, 10 p.m., 9.15 am, 14:30, 7pm, 23:59:59, 3 of May, 2nd\u2003June, 31\tDec 1999",
    "not dates: 12345, 1961x, 20MSps, 4x4, 2022 alone, 120/80, 3.3.3, v2-1-3, 1st place, 5 apples, 12a",
    "Janet Feb sent it in May. JAN 5 is not a date here, nor Mayday 3; (June 10) and xMay 4, May\n7 2001",
    "Sep 9, Sept 10, Oct. 31 2020, Nov 1st, August 2, Jul 4th, Jun 30, Mar 1 1999",
]


def _dates_by_definition(text: str) -> list[tuple[int, int]]:
    """Dates as the two date patterns find them tried at every digit and every capital that can open them."""
    digit = re.compile(r"\d(?<![\w.]\d)")
    month = re.compile(r"[JFMASOND](?<![\w][JFMASOND])")
    return sorted(m.span() for m in (*P._anchored(digit, P._DATE_AT_DIGIT, text),
                                     *P._anchored(month, P._DATE_AT_MONTH, text)))  # fmt: skip


def _dates_fast(text: str) -> list[tuple[int, int]]:
    return sorted(m.span() for m in (*P._anchored(P._DIGIT_START, P._DATE_AT_DIGIT, text),
                                     *P._anchored(P._MONTH_START, P._DATE_AT_MONTH, text)))  # fmt: skip


@pytest.mark.parametrize("text", DATED)
def test_the_date_pretests_hide_no_date(text: str) -> None:
    assert _dates_fast(text) == _dates_by_definition(text)


def test_the_date_edges_are_exercised() -> None:
    assert sum(len(_dates_by_definition(text)) for text in DATED) >= 25


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_date_pretests_on_archive_texts() -> None:
    found = 0
    for text in archive_texts(300, chars=20_000):
        want = _dates_by_definition(text)
        assert _dates_fast(text) == want
        found += len(want)
    assert found > 300


PHONES = [
    "Call 555-123-4567 or (555) 123-4567; the router is 192.168.10.2, the rate 160000000.0 and 6000.000",
    "tel: 555 1234, fax +44 20 7946 0958, again 192.168.10.2 and 555-123-4567; phone 1 2 3 4 5 6 7 8",
]


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_phone_memory_changes_nothing() -> None:
    remembering = P.Phones(remember=64)  # small: what it forgets is parsed again
    texts = PHONES * 2 + archive_texts(150, chars=20_000)
    found = 0
    for text in texts + texts:
        want = list(P.phones(text))
        assert list(remembering(text)) == want
        found += len(want)
    assert found >= 8 and len(remembering._rejected) == 64


def test_the_phone_memory_holds_no_phone_number() -> None:
    import hashlib

    remembering = P.Phones()
    accepted = [f.text for text in PHONES for f in remembering(text)]
    assert {"555-123-4567", "(555) 123-4567", "+44 20 7946 0958"} <= set(accepted)
    assert remembering._rejected  # "192.168.10.2" and the decimals were turned down
    for phone in accepted:
        assert hashlib.blake2b(phone.encode(), digest_size=16).digest() not in remembering._rejected
    assert hashlib.blake2b(b"192.168.10.2", digest_size=16).digest() in remembering._rejected


class _NotPrepared:
    """The reader seen as one without lemma summaries (as nltk's): the lexicon reads every synset."""

    def __init__(self, reader: object) -> None:
        self._reader = reader

    def __getattr__(self, name: str) -> object:
        return getattr(self._reader, name)


def test_the_lexicon_shortcut_classifies_as_the_synsets_do(wordnet: WordNet) -> None:
    fast = WordNetLexicon(wordnet)
    slow = WordNetLexicon(wordnet)
    slow._wn = _NotPrepared(slow._wn)
    words = ["Thanks", "Court", "Best", "Regards", "Hello", "Smith", "Turkey", "Paris", "Russian", "Doe", "DOE",
             "Glasses", "Galore", "Seen", "Foreigners", "Ettus", "Qt", "Linux", "Mozilla", "Fast"]  # fmt: skip
    if ARCHIVE.exists():
        for text in archive_texts(40, chars=5_000):
            words += re.findall(r"\b[A-Z][a-z]+\b", text)
    classes = {}
    for word in dict.fromkeys(words):
        classes[word] = fast.word_class(word)
        assert classes[word] == slow.word_class(word), word
    assert {"common", "person", "place", "unknown"} <= set(classes.values())


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_identifier_edits_are_what_compose_gives_back(analyzer: Analyzer) -> None:
    # sanitize_text skips compose when the engine made no edit: it would return the identifier edits as they are.
    from gateway.model.rewrite import TextEdit, compose

    policy = SanitizePolicy(entities=(), identifiers=SAFE_HARBOR)
    edited = 0
    for text in archive_texts(100, chars=20_000):
        found = remove_identifiers(text, analyzer, policy)
        base = [TextEdit(e.start, e.end, e.text) for e in found.rewritten.edits]
        assert compose(base, found.text, []) == base
        edited += bool(base)
    assert edited > 50


# Patterns scanned from a rarer character every match holds (patterns._hinted), with how far before it a match may
# start: each is compared with its full scan.
HINTED = [
    (P._IPV6, P._IPV6_HINT, {"back": 4}),
    (P._MAC, P._MAC_HINT, {"back": 2}),
    (P._CASE_NUMBER, P._CASE_NUMBER_HINT, {"back": 6}),
    (P._MIXED_CODE, P._MIXED_CODE_HINT, {"run": P._CODE_CHARS}),
]
HINT_EDGES = [
    "abcd:ef01:2345:6789:abcd:ef01:2345:6789, 2001:db8:85a3:0:0:8a2e:370:7334 and 1:2:3, f:ab:cd, :12:, x12:34:56",
    "at 12:30:45 then ffff:1:2:3:4 and 12ab:cd:: or abc:de (one group), dead:beef:cafe:f00d::1 fe80::1ff:fe23:4567",
    "MAC 00:1A:2b:3C:4d:5E, 00-1a-2b-3c-4d-5e, a0:b1:c2:d3:e4:f5:a6, ab:cd:ef:ab:cd:ef:11:22:33:44:55",
    "xab:cd:ef:01:23:45 (a letter before), 0a:1b:2c:3d:4e:5f",
    "cafe-ba-be-de-ad-00 ab-cd-ef-12-34 12:34:56:78:9a:bc:de and 1-23-45-67-89-ab-cd",
    "123456/2003 first (six digits before its hint), case no. 10424/05, 123456/2003, 1234/20, 120/80",
    "99999/12/3, a1234/56, /1234/56 and 1234567/89 12345/678",
    "SN 58823-AX, X310-B200-2, AB-12, ABCDEFGH-1, 1-2-3-4-5-6, TX-RX, B210-x, UHD_4.1.0.4-0-g25d617ca, -A1-B2-",
    "aB-1234, ÄB-12345, USRP-N310-XG and AB12-CD34-EF56 then ZZZZZZZZZZZZZZZZZZZZ9-1",
]


def _hinted_spans(pattern: re.Pattern[str], hint: re.Pattern[str], text: str, how: dict[str, object]) -> list:
    return [m.span() for m in P._hinted(pattern, hint, text, **how)]  # type: ignore[arg-type]


@pytest.mark.parametrize("text", HINT_EDGES)
def test_a_hinted_scan_finds_what_the_full_scan_finds(text: str) -> None:
    for pattern, hint, how in HINTED:
        assert _hinted_spans(pattern, hint, text, how) == [m.span() for m in pattern.finditer(text)]
        for m in pattern.finditer(text):
            assert hint.search(m.group()) or hint.search(text, m.start(), m.end())  # the hint is inside the match


def test_the_hint_edges_are_exercised() -> None:
    text = "\n".join(HINT_EDGES)
    for pattern, _hint, _how in HINTED:
        assert len(pattern.findall(text)) >= 3, pattern.pattern
    # A match that starts as far before its hint as allowed: an IPv6 group of four, a six-digit case number.
    assert P._IPV6.match(HINT_EDGES[0]) and P._CASE_NUMBER.search("x 123456/2003").span() == (2, 13)


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_hinted_scans_on_archive_texts() -> None:
    found = 0
    for text in archive_texts(300, chars=20_000):
        for pattern, hint, how in HINTED:
            want = [m.span() for m in pattern.finditer(text)]
            assert _hinted_spans(pattern, hint, text, how) == want
            found += len(want)
    assert found > 50


AGES = [
    "Age: 45, aged 93, age of 7, Aged 101, page 12, Page 3, stage 4, AGE 50, agE 3, age123, a ge 4, sage 9",
    "the patient (age 88) and a wage 45; image 3; Age\t:  67 years; ages 5 and age  \n 12; xage 5 age-5",
]


@pytest.mark.parametrize("text", AGES)
def test_the_age_scan_from_ge_finds_what_its_definition_finds(text: str) -> None:
    fast = [((m.start() - 1, m.end()), m.group("a")) for m in P._AGE_AT_GE.finditer(text)]
    assert fast == [(m.span(), m.group("a")) for m in P._AGE_WORD.finditer(text)]
    assert len(fast) >= 3


def test_names_of_some_kinds_are_the_names_of_those_kinds(wordnet: WordNet) -> None:
    recognizer = NameRecognizer(WordNetLexicon(wordnet))
    texts = [LETTER]
    if ARCHIVE.exists():
        texts += archive_texts(60, chars=20_000)
    every = [list(recognizer(text)) for text in texts]
    assert {"PERSON", "ORG", "LOC", "MISC"} <= {f.kind for found in every for f in found}
    for kinds in (SAFE_HARBOR, frozenset({"ORG", "MISC"}), frozenset({"PERSON"})):
        for text, found in zip(texts, every, strict=True):
            assert list(recognizer(text, kinds)) == [f for f in found if f.kind in kinds]


# Patterns scanned only when the text's shape (patterns.shape_of) holds what each of their matches holds: each is
# compared with its full scan. The edges write every separator a pattern allows, digits of other scripts (which
# "\d" matches: outside ASCII, so "9" in the shape), blanks outside ASCII, and "?" (which the shape also reads as
# a digit).
GATE_EDGES = [
    # one case a text, so that a gate that misses one case misses a whole text's match
    "SSN 123-45-6789", "ssn 123 45 6789", "SSN 123-45 6789", "SSN 123 45-6789", "not 123-456789 nor 12-345-6789",
    "SSN 078051120", "SSN: ०७८०५११२०", "١٢٣-٤٥-٦٧٨٩ (Arabic-Indic)", "૧૨૩ ૪૫ ૬૭૮૯", "ssn#١٢٣٤٥٦٧٨٩",
    "Card 4111 1111 1111 1111", "card 4111-1111-1111-1111", "4111111111111111", "3 7 8 2 8 2 2 4 6 3 1 0 0 0 5",
    "5555-5555-5555-4444-123", "٤١١١١١١١١١١١١١١١",
    "IBAN DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432", "NL91 ABNA 0417 1643 00", "DE٨٩ 3704 0044 0532 0130",
    "xDE89370400440532013000", "Codice fiscale RSSMRA85T10A562S", "MRTMTT91D08F205J", "RSSMRA٨٥T10A562S",
    "DNI 12345678Z", "12345678-Z", "١٢٣٤٥٦٧٨Z", "x12345678Z",
    "NIR 1 84 12 76 451 089 46", "184127645108946", "2 55 08 2A 123 456 78", "255082B12345678",
    "1\u00a084\u00a012 76 451\u00a0089\u00a046", "2\u200984\u20091276451089 46", "1\t84\n12\r76\x0b451\x0c089\x1c46",
    "1?84127645108946",
]  # fmt: skip


def _gated_spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in P._gated(pattern, text, P.shape_of(text))]


@pytest.mark.parametrize("text", GATE_EDGES)
def test_a_gated_scan_finds_what_the_full_scan_finds(text: str) -> None:
    for pattern in P._GATES:
        assert _gated_spans(pattern, text) == [m.span() for m in pattern.finditer(text)], pattern.pattern


def test_the_gate_edges_are_exercised() -> None:
    for pattern in P._GATES:
        found = [m.group() for text in GATE_EDGES for m in pattern.finditer(text)]
        assert len(found) >= 3, pattern.pattern
        # a match of each with a character outside ASCII in it: its shape is read as the pattern's digit
        assert any(not m.isascii() for m in found), pattern.pattern


def test_a_text_without_what_a_match_holds_is_not_scanned() -> None:
    text = "Ticket 2024, build 12345, part AB1 and 555-1234 of 19 May: nothing any of these patterns takes."
    shape = P.shape_of(text)
    assert all(not gate(shape) for gate in P._GATES.values())
    for pattern in P._GATES:  # what a skipped scan would have found: nothing
        assert not pattern.search(text), pattern.pattern


def test_a_shape_has_a_byte_for_each_character() -> None:
    text = "Ab9?\u00e9\u2029\udc80\U0001f600 \u0663z-"
    shape = P.shape_of(text)
    assert len(shape) == len(text)
    assert shape == b"Ab999999 9z-"


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_gated_scans_on_archive_texts() -> None:
    skipped = scanned = 0
    for text in archive_texts(300, chars=20_000):
        shape = P.shape_of(text)
        for pattern, gate in P._GATES.items():
            assert _gated_spans(pattern, text) == [m.span() for m in pattern.finditer(text)]
            if gate(shape):
                scanned += 1
            else:
                skipped += 1
    assert skipped > 5 * scanned  # most of these scans are ruled out by the shape


def test_the_recognizers_take_the_shape_or_make_it() -> None:
    text = " ".join(GATE_EDGES)
    for _kinds, recognizer in P.STRUCTURED:
        assert list(recognizer(text, P.shape_of(text))) == list(recognizer(text, None))
    assert {f.kind for f in P.ssns(text)} == {"SSN"} and {f.kind for f in P.national_ids(text)} == {"NATIONAL_ID"}
    assert any(f.kind == "CARD" for f in P.cards(text)) and any(f.kind == "IBAN" for f in P.ibans(text))


def test_a_value_is_numbered_once_and_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.model.identifiers import anonymizer

    mentions = ["Mr Tomasz Nowak", "Nowak", "Mrs Nowak", "Nowak", "Mr Tomasz Nowak", "Anna Nowak", "Mrs Nowak",
                "Tomasz", "Anna", "Mrs Anna Nowak", "Nowak"]  # fmt: skip
    want = [1, 1, 2, 1, 1, 3, 2, 1, 3, 3, 1]
    # Each number as the first-match rule gives it, read afresh for every mention.
    fresh = anonymizer._Numbering()
    assert [fresh._number("PERSON", m) for m in mentions] == want
    seen: list[str] = []
    real = anonymizer.name_words
    monkeypatch.setattr(anonymizer, "name_words", lambda text: seen.append(text) or real(text))
    numbering = anonymizer._Numbering()
    assert [numbering.number("PERSON", m) for m in mentions] == want
    assert sorted(seen) == sorted(set(mentions))  # each value's words read once


def test_a_phone_number_a_text_repeats_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import phonenumbers

    text = ("Call me on (415) 555-0132 or 020 7946 0958.\n\n\u2029\n\nCall me on (415) 555-0132 or 020 7946 0958."
            "\nFax: (415) 555-0133, fax (415) 555-0133 again; not 12345678 nor 2024-03-05 14:22")  # fmt: skip
    want = [(f.start, f.end, f.kind) for f in P.Phones(remember=0)(text)]
    assert [k for _s, _e, k in want] == ["PHONE", "PHONE", "FAX", "FAX"]
    parsed: list[str] = []
    real = phonenumbers.parse
    monkeypatch.setattr(P.phonenumbers, "parse", lambda raw, region: parsed.append(raw) or real(raw, region))
    for remember in (0, 4096):
        parsed.clear()
        assert [(f.start, f.end, f.kind) for f in P.Phones(remember=remember)(text)] == want
        assert sorted(parsed) == sorted(set(parsed)) and "(415) 555-0132" in parsed


# The walk over runs outside ASCII, as fold_with_offsets takes it when the fast path does not apply: " é" is read
# as written (the blank keeps "é" a run of its own), so the text with it at its end is walked and folds as the
# text does, with " é" at its end.
def _walked(text: str) -> tuple[str, list[int], list[int]] | None:
    view = fold_with_offsets(text + " \u00e9")
    if view is None:
        return None
    folded, starts, ends = view
    assert folded.endswith(" \u00e9") and starts[-2:] == [len(text), len(text) + 1]
    return folded[:-2], starts[:-2], ends[:-2]


@pytest.mark.parametrize(
    "text",
    [
        "Hi\u2029there\u00a0Jo\u202fe", "\u2029\u2029\u00a0", "a\u2029\u00a0\u202fb" * 40,  # blanks only
        "SSN 123\u200b-45-6789\u2029", "\uff15\uff15\uff15-123-4567\u00a0", "\u041dIV\u2029test",  # and one to fold
        "\ufb01le\u2029\u00a0", "ok\u2029\u2028", "x\u3000y\u2029", "\u00a0\u0301\u2029",
    ],
)  # fmt: skip
def test_folding_takes_the_blanks_of_a_message_as_the_walk_does(text: str) -> None:
    assert fold_with_offsets(text) == _walked(text)


def test_a_text_outside_ascii_only_by_its_blanks_folds_to_nothing() -> None:
    text = "John Doe\u00a0(SSN 123-45-6789)\n\n\u2029\n\nphone\u202f555-123-4567"
    assert not text.isascii() and fold_with_offsets(text) is None and _walked(text) is None


def test_each_value_is_anonymized_once_and_as_each_finding_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.model.identifiers import Finding, anonymize, anonymizer

    values = [("PERSON", "Mr Tomasz Nowak", ()), ("PERSON", "Nowak", ()), ("DATE", "3 May 2004", (("year", "2004"),)),
              ("DATE", "3 May 2004", ()), ("PHONE", "555-123-4567", ()), ("AGE", "aged 93", (("age", "93"),)),
              ("ZIP", "02139", (("zip", "02139"),)), ("PERSON", "Mrs Nowak", ())]  # fmt: skip
    findings = [Finding(start=10 * i, end=10 * i + len(text), kind=kind, text=text, parts=parts)
                for i, (kind, text, parts) in enumerate(values * 3)]  # fmt: skip
    operated: list[tuple[str, str, object]] = []
    real = anonymizer._operate
    monkeypatch.setattr(anonymizer, "_operate", lambda f, *a: operated.append((f.kind, f.text, f.parts)) or real(f, *a))
    got = anonymize(findings)
    assert sorted(operated) == sorted(set(values))  # each value once (the DATE twice: its parts differ)
    assert [r.finding for r in got] == findings
    monkeypatch.setattr(anonymizer, "_operate", real)
    # As each finding gets it when none is worked out from another: the same numbers, texts, actions and groups.
    fresh = anonymizer._Numbering()
    numbered = anonymizer.NUMBERED
    order = sorted(range(len(findings)), key=lambda i: (findings[i].kind not in numbered, -findings[i].length))
    alone = {i: real(findings[i], fresh, "none", True) for i in order}
    assert [(r.text, r.action, r.group) for r in got] == [(alone[i].text, alone[i].action, alone[i].group)
                                                          for i in range(len(findings))]  # fmt: skip
    assert [r.text for r in got[:8]] == ["[PERSON 1]", "[PERSON 1]", "2004", "[DATE]", "[PHONE]", "aged 90 or older",
                                         "021**", "[PERSON 2]"]  # fmt: skip


# Recognizers that skip a scan where the shape rules it out (a date of birth written as one number, a MAC or IPv4
# address, a ZIP code):
# each text finds with its shape what it finds without (None: every scan runs). Labels and separators as the
# patterns allow them, blanks outside ASCII and of the information separators between label and number, digits
# of other scripts, capitals and small hexadecimal letters.
SHAPE_SKIP_EDGES = [
    "DOB 19610412", "DOB:19610412.", "D.O.B. 20011231", "D.O.B19991001", "Date of Birth: 19700101",
    "date of birth\u00a019850615", "date of Birth :\t19500505", "Born 20000229", "born\u2009\u00a020101010",
    "born\x1c:\x1f19610412", "Born\u00a0: 19610412", "date of birth\u2009:\u200919700101",
    "DOB \u0661\u0669\u0666\u0661\u0660\u0664\u0661\u0662", "DOB 19\u0666\u06610412",
    "Born:19610412x", "reborn 19610412", "DOB 1961-04-12 and 19610412 alone",
    "MAC 00:1A:2b:3C:4d:5E", "aa-bb-cc-dd-ee-ff", "00-11:22-33:44-55 mixed", "AB:CD:EF:01:23:45.",
    "x00:11:22:33:44:55", "00:11:22:33:44", "12:30:45 and 2024-03-05-10", "fe80::1:2:3:4 00:00:5e:00:53:af",
    "Springfield, IL 62704", "IL. 62704-1234", "IL,\t62704", "zip: 02139", "ZIP:02139", "Zip Code\t02139",
    "postal code 12345", "zipcode 90210", "zip:\u0661\u0662\u0663\u0664\u0665", "CA\u00a090210", "NY\n10001",
    "zip12345", "ref 12345 in IL",
    "IP 10.0.0.1", "[192.168.1.151]", "host: 172.104.30.75.", "version 3.15.0.0", "1.2.3 and 1.2.3.4.5",
    "gateway 10.\u0661.0.1", "server\u00a0255.255.255.0", "a1.2.3.4 b", "inet 127.0.0.1/8",
    "a 45-year-old man", "45 years old", "45 yrs old", "45 yr-old", "45 yo.", "45y/o,", "45 y.o. male", "45 Y/O.",
    "45 YEARS OLD", "45-YEAR-OLD", "45 yr\u017f old", "45\u00a0yo,", "\u0664\u0665 years old", "aged 45 yo!",
    "45 you", "45 yoyo", "45\tYrs-old", "1 Yo)", "x45 years old",
]  # fmt: skip


@pytest.mark.parametrize("text", SHAPE_SKIP_EDGES)
def test_a_scan_skipped_by_the_shape_would_have_found_nothing(text: str) -> None:
    for recognizer in (P.dates, P.ips, P.zips):
        assert list(recognizer(text, P.shape_of(text))) == list(recognizer(text, None)), recognizer
    # the age scan is skipped by a search of the text itself: compared with the pattern's own scan
    ages = [m.span() for m in P._AGE_NUMBER.finditer(text)]
    assert [(f.start, f.end) for f in P.ages(text) if f.source == "age pattern" and f.text[0].isdigit()] == ages


def test_the_shape_skip_edges_are_exercised() -> None:
    births = [f.text for text in SHAPE_SKIP_EDGES for f in P.dates(text) if f.source == "date of birth"]
    macs = [f.text for text in SHAPE_SKIP_EDGES for f in P.ips(text) if f.source == "MAC address"]
    zips = [f.text for text in SHAPE_SKIP_EDGES for f in P.zips(text)]
    assert len([f for text in SHAPE_SKIP_EDGES for f in P.ips(text) if f.source == "ipaddress"]) >= 4
    ages = [m.group() for text in SHAPE_SKIP_EDGES for m in P._AGE_NUMBER.finditer(text)]
    assert len(ages) >= 14 and any(not a.isascii() for a in ages) and "45 yr\u017f old" in ages
    assert len(births) >= 10 and any(not b.isascii() for b in births) and len(macs) >= 5
    assert len(zips) >= 7 and any(not z.isascii() for z in zips)
    # and both are skipped where nothing of them stands
    text = "Born in 1961, id 19610412; at 12:30 on 5 March; ab-cd and aa:bb"
    assert not P._may_hold_compact_birth(text, P.shape_of(text))
    assert not (P._MAC_SHAPE_COLON.search(P.shape_of(text)) or P._MAC_SHAPE_HYPHEN.search(P.shape_of(text)))


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_shape_skips_on_archive_texts() -> None:
    for text in archive_texts(300, chars=20_000):
        for recognizer in (P.dates, P.ips, P.zips):
            assert list(recognizer(text, P.shape_of(text))) == list(recognizer(text, None))
        ages = [m.span() for m in P._AGE_NUMBER.finditer(text)]
        assert [(f.start, f.end) for f in P.ages(text) if f.source == "age pattern" and f.text[0].isdigit()] == ages


# Texts whose values recur in their own case and in others: a capital sigma (lowered by the letter after it), a
# letter whose lower case is longer ("İ"), a value inside a longer word and after an underscore.
LOWERED_TEXTS = [
    "Call Ettus Nakamura at 555-123-4567; ETTUS NAKAMURA and ettus nakamura agree, xettus nakamura does not. "
    "ettus.nakamura@example.org",
    "Ο ΟΔΟΣ Papadopoulos met ΟΔΟΣ and Papadopoulos; PAPADOPOULOS wrote to papadopoulos@example.gr on 3 May 2004.",
    "İstanbul: Mr Kemal Yılmaz, KEMAL YILMAZ, kemal yılmaz and Yılmaz phoned 020 7946 0958 on 3 May 2004.",
    "Dr. Okonkwo saw Okonkwo; okonkwo.ref and OKONKWO-7 remain. SSN 078-05-1120, ssn 078-05-1120 again.",
]


@pytest.mark.parametrize("text", LOWERED_TEXTS)
def test_the_lower_case_searches_find_what_the_searches_of_each_case_find(analyzer: Analyzer, text: str) -> None:
    from gateway.model.identifiers import analyzer as A
    from gateway.model.identifiers import anonymize
    from gateway.model.identifiers import stage as S
    from gateway.model.identifiers.lowered import Lowered

    findings, lowered = analyzer.analyze_lowered(text, SAFE_HARBOR)
    assert findings == analyzer.analyze(text, SAFE_HARBOR) and lowered.text is text
    values = {f.text for f in findings} | {"Ettus", "ΟΔΟΣ", "Kemal Yılmaz", "xyz"}
    if lowered.aligned():
        assert A._words_in(lowered, values) == A.find_words(text, values)
    assert A._recurrences(text, findings, Lowered(text)) == A._recurrences(text, findings)
    policy = SanitizePolicy(entities=(), identifiers=SAFE_HARBOR)
    replacements = [r for r in anonymize(findings) if r.changes]
    assert S._in_other_case(text, findings, replacements, lowered) == S._in_other_case(text, findings, replacements)
    assert remove_identifiers(text, analyzer, policy).text.count("[PERSON") >= 2


def test_a_capital_sigma_or_a_longer_lower_case_is_searched_in_its_own_case() -> None:
    from gateway.model.identifiers.lowered import Lowered

    assert Lowered("Ettus and ETTUS").aligned()
    assert not Lowered("ΟΔΟΣ Ettus").aligned()  # "ΟΔΟΣ".lower() ends in a final sigma, "ΟΔΟΣX".lower() does not
    assert "ΟΔΟΣ".lower()[-1] != "ΟΔΟΣΑ".lower()[3]
    assert not Lowered("İstanbul").aligned() and len("İ".lower()) == 2
    assert Lowered("aAa AA").where("aa") == [0, 1, 4]  # every start, overlapping ones too, as str.find finds them


def test_each_value_is_searched_for_once_in_a_pass(analyzer: Analyzer, monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.model.identifiers.lowered import Lowered

    text = LOWERED_TEXTS[0] + "\n" + LOWERED_TEXTS[3]
    searched: list[str] = []
    real = str.find

    class Counting(str):
        def find(self, value: str, *args: int) -> int:  # type: ignore[override]
            if not args:
                searched.append(value)  # a search from the start: one a value
            return real(self, value, *args)

    def counting_low(self: Lowered) -> str:
        if self._low is None:
            self._low = Counting(self.text.lower())
        return self._low

    monkeypatch.setattr(Lowered, "low", property(counting_low))
    policy = SanitizePolicy(entities=(), identifiers=SAFE_HARBOR)
    result = remove_identifiers(text, analyzer, policy)
    # Replaced in every case (the pass's search in lower case), each value searched for once (the analyzer's too).
    assert result.text.count("[PERSON 1]") == 3 and "okonkwo" not in result.text.lower()
    assert len(searched) == len(set(searched)) and {"ettus nakamura", "okonkwo"} <= set(searched)


MONTH_DAY_EDGES = [
    "seen on 3/15", "discharged 10-5.", "3/15 at the start", "12/31", "on 3/15/2024", "1/2/3", "on \u0661/\u0662",
    "x3/15", "on 3/15x", "on 3/15.5", "on 3/15-4", "2024-03-05", "555-123-4567", "a.1/2", ":1/2", "-1/2", "(3/15)",
    "on\u00a03/15", "10/100 Mbps", "on 3-15-", "3/15:", "on 3/1 5", "v1.2/3", "9\n3/15", "03/15\n", "123/4", "1/234",
]  # fmt: skip


@pytest.mark.parametrize("text", MONTH_DAY_EDGES)
def test_the_month_and_day_search_from_the_separator_finds_where_the_pattern_does(text: str) -> None:
    from_separator = P._MONTH_DAY_AT_SLASH.search(text) or P._MONTH_DAY_AT_HYPHEN.search(text)
    assert bool(from_separator) == bool(P._MONTH_DAY.search(text))


def test_the_month_and_day_edges_are_exercised() -> None:
    found = [t for t in MONTH_DAY_EDGES if P._MONTH_DAY.search(t)]
    assert 10 <= len(found) <= len(MONTH_DAY_EDGES) - 10  # both ways
    assert [f.text for f in P.dates("seen on 3/15 and discharged 10-5.") if f.source == "month and day"] == [
        "3/15",
        "10-5",
    ]


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_month_and_day_search_on_archive_texts() -> None:
    for text in archive_texts(300, chars=20_000):
        from_separator = P._MONTH_DAY_AT_SLASH.search(text) or P._MONTH_DAY_AT_HYPHEN.search(text)
        assert bool(from_separator) == bool(P._MONTH_DAY.search(text))


# Every run of four digits standing alone, as the year scan tried them before it opened with a year's digits.
FOUR_DIGITS = re.compile(r"\d(?<![\w./,-]\d)\d\d\d(?![\d/-])")
YEAR_EDGES = [
    "2004 at the start", "in 1994, 1994-2004 and 1994–2004", "x1994 .1994 1,1994 -1994 /1994 _1994",
    "19945 1994/ 1994-",
    "2099 1599 1600 1999 2100 3000", "\u0662\u0660\u0662\u0664 and 20\u0662\u0664", "\n2004\n(1994) 1994s 1994.",
    "\u00e91994 \u00a01994 \u20291994", "12 2004 12004 0204",
]  # fmt: skip


@pytest.mark.parametrize("text", YEAR_EDGES)
def test_the_year_scan_finds_the_four_digits_that_are_years(text: str) -> None:
    want = [m.span() for m in FOUR_DIGITS.finditer(text) if P._YEAR_RE.fullmatch(m.group())]
    assert [m.span() for m in P._YEAR_TOKEN.finditer(text)] == want


def test_the_year_edges_are_exercised() -> None:
    tokens = [m.group() for text in YEAR_EDGES for m in FOUR_DIGITS.finditer(text)]
    years = [t for t in tokens if P._YEAR_RE.fullmatch(t)]
    assert len(years) >= 12 and len(tokens) - len(years) >= 5 and any(not y.isascii() for y in years)


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_year_scan_on_archive_texts() -> None:
    for text in archive_texts(300, chars=20_000):
        want = [m.span() for m in FOUR_DIGITS.finditer(text) if P._YEAR_RE.fullmatch(m.group())]
        assert [m.span() for m in P._YEAR_TOKEN.finditer(text)] == want
