"""Scans run from the shape (``patterns.shape_of``) find what the scans of the text find.

The runs before a digit that open a label are found backwards from their digits; VINs, mixed codes, IP and MAC
addresses and phone numbers' candidates are scanned only inside the runs of the shape that can hold one. Each is
compared with the plain scan it stands for on texts written to hit its edges, on random texts over an alphabet of
those edges, and on archive texts.
"""

from __future__ import annotations

import random
import re

import pytest
from archive import ARCHIVE, archive_texts

from gateway.model.identifiers import patterns as P

RUN_EDGES = [
    "MRN 4471, Acct # 0043318821 and a/c 12-34; SN:58823-AX, S/N 9 and patient ID 77",
    "1 starts the text, ends it 2",
    "x\u00e9 3 and caf\u00e9 4, na\u00efve 5 (letters outside ASCII before a digit and in the run)",
    "Arabic-Indic \u0663\u0664 and fullwidth \uff15\uff15 digits; what? 7 and ?8 and 9?",
    "NUL\x00 5, a paragraph\u2029 6, a tab\t7, a no-break\u00a08, a line\n9 and #10 ##11 'q'12 _13 -14 .15 :16",
    "\u0130D 12345, \u0131d 2, \u017fn 3 and \u212aey 4: letters outside ASCII a label may open with",
    "",
    "no digit at all",
    "12345",
]

VIN_EDGES = [
    "VIN 1HGCM82633A004352 and 1M8GDM9AXKP042788, 1HGCM82633A00435 (16), 1HGCM82633A0043521 (18)",
    "1HGCM82633A0043521HGCM82633A004352 two in one run; 11111111111111111 and AAAAAAAAAAAAAAAAA",
    "x1HGCM82633A004352, 1HGCM82633A004352_ and 1HGCM82633A004352\u00e9, \u00c91HGCM82633A004352",
    "1HGCM82633A004352",
    "1HGCM82633A004352 2HGCM82633A004352-3HGCM82633A004352.4HGCM82633A004352:5HGCM82633A00435\u0663",
    "IOQ in it: 1HGCM82633I004352; lower case 1hgcm82633a004352; ABCDEFGHJKLMNPRSTUVWXYZ0123456789",
    "\u0663HGCM82633A004352 and 1HGCM82633A00435\u0663 (a digit outside ASCII)",
]

CODE_EDGES = [
    "SN 58823-AX, X310-B200-2, AB-12, ABCDEFGH-1, 1-2-3-4-5-6, TX-RX, B210-x, UHD_4.1.0.4-0-g25d617ca, -A1-B2-",
    "aB-1234, \u00c4B-12345, USRP-N310-XG and AB12-CD34-EF56 then ZZZZZZZZZZZZZZZZZZZZ9-1",
    "AB--CD-12, A-B-1, AB-12-, --AB-12, 2024-03-05 and 555-123-4567, X-Mailer-2",
    "AB-12",
    "\u0663\u0664-AB12 and AB12-\u0663\u0664, ab-AB-12, AB-12\u00e9 and 12-AB_",
]

IP_EDGES = [
    "IP 10.0.0.1, [192.168.1.20] and 8.8.8.8; 192.168.001.010.5, 1.2.3.4.5 and 1234.5.6.7.8; 10.0.0.1. 10.0.0.1.2",
    "x10.0.0.1 \u00e910.0.0.1 .10.0.0.1 -10.0.0.1 \u0663.0.0.1 and 10.0.0.\u0663 end 255.255.255.255",
    "fe80::1ff:fe23:4567:890a, 2001:db8::8a2e:370:7334 and ::1; a:b:c 12:30:45 deadbeef::cafe xfe80::1 FE80::1x",
    "2001:0db8:85a3:0000:0000:8a2e:0370:7334 \u00e9fe80::1 fe80::1\u00e9 abcd:ef01:2345:6789:abcd:ef01:2345:6789:1",
    "MAC 00:1A:2b:3C:4d:5E, 00-1a-2b-3c-4d-5e, a0:b1:c2:d3:e4:f5:a6, ab:cd:ef:ab:cd:ef:11:22:33:44:55",
    "xab:cd:ef:01:23:45 (a letter before), 0a:1b:2c:3d:4e:5f, cafe-ba-be-de-ad-00 ab-cd-ef-12-34 1-23-45-67-89-ab-cd",
    "00:1A:2b:3C:4d:5E",
    "12:34:56:78:9a:bc:de and 2024-03-05 14:22:01, \u00e900:1a:2b:3c:4d:5e and 00:1a:2b:3c:4d:5e\u00e9",
]
PHONE_EDGES = [
    "Call 555-123-4567 x 12, 555-123-4567 ext. 123, 555-123-4567 ext12, 555-123-4567  x  7 and (555) 123-4567",
    "+1 (555) 123-4567, +44 20 7946 0958, 0044\u00a020\u00a07946\u00a00958, 020 7946 0958ext 4 and 555.123.4567.",
    "a555-123-4567, 555-123-4567a, 555-123-4567/8, /555-123-4567, 555-123-4567-, rgb(0, 0, 0) and 1234567",
    "\u0665\u0665\u0665-\u0661\u0662\u0663-\u0664\u0665\u0666\u0667 and 555\u2009123\u20094567, 12       34",
    "5551234567",
    "text 555-1234 next 1 2 3 4 5 6 7 text exe 555 123 4567 ex 1",
]
_IN_RUNS = [
    (P._IPV4, (P._IPV4_SHAPE,), P._IPV4_BYTES, 2),
    (P._IPV6, (P._IPV6_SHAPE,), P._IPV6_BYTES, 1),
    (P._MAC, (P._MAC_SHAPE_COLON, P._MAC_SHAPE_HYPHEN), P._MAC_BYTES, 1),
]

_ALPHABET = "A1Z9aq -#/:._'\t\n?\u00e9\u0130\u0131\u017f\u212a\u0663\u00a0\x00\u2029IO"


def _random_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 60))) for _ in range(n)]


def _runs(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in P._BEFORE_A_DIGIT.finditer(text)]


def _vins(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in P._VIN.finditer(text)]


def _codes(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in P._MIXED_CODE.finditer(text)]


def _same(text: str) -> None:
    shape = P.shape_of(text)
    assert P._runs_before_a_digit(text, shape) == _runs(text)
    assert [m.span() for m in P._vins(text, shape)] == _vins(text)
    assert [m.span() for m in P._codes(text, shape)] == _codes(text)
    for pattern, hints, run, after in _IN_RUNS:
        assert [m.span() for m in P._in_runs(pattern, text, shape, hints, run, after)] == [
            m.span() for m in pattern.finditer(text)
        ], pattern.pattern
    assert [m.span() for m in P._phone_candidates(text, shape)] == [m.span() for m in P._PHONE_CANDIDATE.finditer(text)]


@pytest.mark.parametrize("text", RUN_EDGES + VIN_EDGES + CODE_EDGES + IP_EDGES + PHONE_EDGES)
def test_the_shape_scans_find_what_the_text_scans_find(text: str) -> None:
    _same(text)


def test_the_edges_are_exercised() -> None:
    assert sum(len(_runs(t)) for t in RUN_EDGES) >= 25
    assert sum(len(_vins(t)) for t in VIN_EDGES) >= 8
    assert sum(len(_codes(t)) for t in CODE_EDGES) >= 12
    for pattern, _hints, _run, _after in _IN_RUNS:
        assert sum(len(pattern.findall(t)) for t in IP_EDGES) >= 6, pattern.pattern
    phones = [m.group() for t in PHONE_EDGES for m in P._PHONE_CANDIDATE.finditer(t)]
    assert len(phones) >= 15 and any("x" in p for p in phones) and any(not p.isascii() for p in phones)
    # A run before a digit outside ASCII (its shape is a "9" as every character outside ASCII is), a run after a "?"
    # (a "9" in the shape that is no digit), and runs holding a run character outside ASCII (scanned as it stands).
    text = RUN_EDGES[3]
    assert any(not text[b].isascii() and text[b].isdecimal() for _a, b in _runs(text))
    assert any(text[a - 1] == "?" for a, _b in _runs(text))
    assert any(not RUN_EDGES[5][a:b].isascii() for a, b in _runs(RUN_EDGES[5]))


def test_random_texts_over_the_edges_alphabet() -> None:
    texts = _random_texts(3000, seed=14)
    for text in texts:
        _same(text)
    assert sum(len(_runs(t)) for t in texts) > 1000  # the comparison compared something


def test_random_vins_and_codes() -> None:
    rng = random.Random(1412)
    alphabet = "AB19IOaé\u0663-_ "
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(15, 45))) for _ in range(3000)]

    # Runs of capitals and digits about a VIN's length, between the edges' characters, so that VINs are found.
    def run() -> str:
        return rng.choice(" -:" + alphabet) + "".join(rng.choice("AB19") for _ in range(rng.randint(15, 19)))

    texts += ["".join(run() for _ in range(3)) for _ in range(500)]
    for text in texts:
        _same(text)
    assert sum(len(_vins(t)) for t in texts) > 50 and sum(len(_codes(t)) for t in texts) > 100


def test_random_addresses() -> None:
    rng = random.Random(1414)
    # Pieces of addresses and what may stand beside them, joined at random.
    pieces = ["1", "12", "192", "1234", "0a", "fe80", "AB", "f", ".", ".", ".", ":", ":", "::", "-", " ", "x", "_"]
    pieces += ["\u00e9", "\u0663", "g", "10.0.0.1", "1.2.3", "255.1", "00:1a:2b", ":3c:4d", "-5e"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(3, 30))) for _ in range(6000)]
    for text in texts:
        _same(text)
    for pattern, _hints, _run, _after in _IN_RUNS:
        assert sum(len(pattern.findall(t)) for t in texts) >= 10, pattern.pattern


def test_random_phone_candidates() -> None:
    rng = random.Random(1415)
    pieces = ["5", "55", "555", "1234", " ", " ", "-", ".", "(", ")", "+", "\t", "\u00a0", "x", "ext", "ext.", "e"]
    pieces += ["a", "/", "_", "\u0665", "\n", "555-123-4567"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(3, 40))) for _ in range(6000)]
    for text in texts:
        _same(text)
    found = [m.group() for t in texts for m in P._PHONE_CANDIDATE.finditer(t)]
    assert len(found) > 1000 and sum("x" in p for p in found) > 50


def test_phones_with_and_without_the_shape() -> None:
    text = "\n".join(PHONE_EDGES)
    found = list(P.Phones()(text, P.shape_of(text)))
    assert found == list(P.Phones()(text, None))
    assert len(found) >= 4 and any("x" in f.text for f in found)


def test_ips_with_and_without_the_shape() -> None:
    text = "\n".join(IP_EDGES)
    found = list(P.ips(text, P.shape_of(text)))
    assert found == list(P.ips(text, None))
    assert sum(f.kind == "IP" for f in found) >= 5 and sum(f.kind == "DEVICE" for f in found) >= 4


def test_labelled_numbers_with_and_without_the_shape() -> None:
    text = "\n".join(RUN_EDGES + VIN_EDGES + CODE_EDGES)
    found = list(P.labelled_numbers(text, P.shape_of(text)))
    assert found == list(P.labelled_numbers(text, None))
    assert {f.kind for f in found} >= {"MRN", "ACCOUNT", "DEVICE", "VEHICLE", "CODE"}


@pytest.mark.skipif(not ARCHIVE.exists(), reason="the shared mailing-list archive is not here")
def test_the_shape_scans_on_archive_texts() -> None:
    runs = vins = codes = addresses = phones = 0
    for text in archive_texts(300, chars=20_000):
        text = text.replace("\u2029", "\x00")  # as the analyzer hands it to the recognizers
        _same(text)
        runs += len(_runs(text))
        vins += len(re.findall(r"[A-Z0-9]{17}", text))
        codes += len(_codes(text))
        addresses += sum(len(pattern.findall(text)) for pattern, _hints, _run, _after in _IN_RUNS)
        phones += len(P._PHONE_CANDIDATE.findall(text))
    assert runs > 5000 and vins > 10 and codes > 100 and addresses > 100 and phones > 500
