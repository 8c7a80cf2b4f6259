"""Identifiers with a structure: found by a pattern, confirmed by a checksum or a field library.

A regular expression proposes; ``phonenumbers`` and ``python-stdnum``
dispose where they can (a Luhn digit, an IBAN's mod-97, the SSA's rules for
SSNs). Numbers without a checksum (record, account, licence numbers) need a
label before them ("MRN", "Acct #"), since a bare number is not an identifier.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence

import phonenumbers
from stdnum import imei as std_imei
from stdnum import luhn
from stdnum.es import dni as es_dni
from stdnum.fr import nir as fr_nir
from stdnum.gb import nhs as gb_nhs
from stdnum.it import codicefiscale as it_cf
from stdnum.nl import bsn as nl_bsn
from stdnum.us import ssn as us_ssn

from gateway.model.identifiers import kinds as K
from gateway.model.identifiers.finding import Finding
from gateway.model.terms import STOPWORDS

_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec"
)
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:1[6-9]\d\d|20\d\d)"
_YEAR_RE = re.compile(_YEAR)
_M = rf"(?:{_MONTHS})\.?"
# Python's regular expressions scan fast only for a pattern whose first character is a fixed set; one that
# opens with \b, a look-behind or a choice of words is tried at every position. So a date is looked for
# where it can start (a digit, a month's capital, a year after a season) and matched there.
_DATE_AT_DIGIT = re.compile(
    rf"{_DAY}(?:\s+of)?\s+{_M}(?:,?\s+(?P<y1>{_YEAR}))?\b"  # 21 March 2005, 21st of March
    rf"|(?:0?[1-9]|[12]\d|3[01])(?P<sep>[/.-])(?:0?[1-9]|[12]\d|3[01])(?P=sep)(?P<y4>{_YEAR}|\d\d)\b"  # 04/12/1961
    # 1961-04-12, 2024/03/05, and a time after it as ISO 8601 and logs write it: 2024-03-05T09:00:00+01:00
    rf"|(?P<y5>{_YEAR})(?P<isep>[-/.])(?:0[1-9]|1[0-2])(?P=isep)(?:0[1-9]|[12]\d|3[01])"
    r"(?:[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d+)?)?(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?(?![\d:]))?(?!\d)"
    # a time of day: 10 p.m., 14:30, 9.15 am
    r"|(?P<t>(?:[01]?\d|2[0-3])(?:[:.][0-5]\d)?\s?(?:a\.m\.|p\.m\.|am\b|pm\b)|(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?\b)"
)
_DATE_AT_MONTH = re.compile(rf"{_M}\s+(?:{_DAY}(?:,?\s+(?P<y2>{_YEAR}))?|(?P<y3>{_YEAR}))\b")  # March 21, 2005
# A date opens with one or two digits and then a blank, a separator, an ordinal's or "am"/"pm"'s letter, or with
# a year and "-": other numbers are not tried.
_DIGIT_START = re.compile(r"\d(?<![\w.]\d)(?=\d?[\s/.:\-snrtap]|\d{3}[-/.])")
# Every month's name and abbreviation opens with one of these twelve: other capitals are not tried.
_MONTH_START = re.compile(r"[JFMASOND](?<![\w][JFMASOND])(?=an|eb|ar|pr|ay|un|ul|ug|ep|ct|ov|ec)")
# A year standing alone: four digits after no word character, ".", "/", "," or "-", and before no digit, "/" or
# "-", that _YEAR reads as a year. Opening with the year's first two characters, the scan jumps to a "1" or "2"
# rather than trying every digit (four in ten of the tokens it tried were no year).
_YEAR_TOKEN = re.compile(r"(?:1[6-9]|20)(?<![\w./,-]..)\d\d(?![\d/-])")
# What may stand before a year: "summer 2004", "Q3 2019" (a date); "in 1983", "born 1961" (a year alone).
_SEASON_BEFORE = re.compile(r"(?:[Ss]pring|[Ss]ummer|[Aa]utumn|[Ff]all|[Ww]inter|Q[1-4])\s+(?:of\s+)?$")
_YEAR_WORD_BEFORE = re.compile(r"\b(?i:in|since|of|from|until|to|by|before|after|and|year|born)\s+$")
# A year in brackets or closing a range ("(1994)", "1994–2004"), and the end of a range it opens
# ("2010–present", "2008–15"): how reference works and CVs write the years of an event.
_YEAR_BRACKET_BEFORE = re.compile(r"(?:\(|[–—]\s*)$")
_YEAR_RANGE_AFTER = re.compile(r"\s*[–—]\s*(?:present\b|(?:1[6-9]|20)?\d\d(?![\d.,]))")
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    "seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|a few|several|a"
)
_AMOUNT = rf"(?:\d[\d,.]*|(?:{_NUMBER_WORDS})(?:[- ](?:{_NUMBER_WORDS}))*)"
_DURATION = re.compile(
    rf"\b{_AMOUNT}[- ](?:and a half[- ])?(?:years?|months?|weeks?|days?|hours?|minutes?)(?:['’]s?)?"
    rf"(?:\s+(?:and|or)\s+{_AMOUNT}[- ](?:years?|months?|weeks?|days?|hours?))?\b",
    re.IGNORECASE,
)
_AGE_WORD = re.compile(r"[Aa](?<!\w[Aa])ge(?:d| of)?\s*:?\s*(?P<a>\d{1,3})\b")
# _AGE_WORD as the scan runs it: from the literal "ge" (the regex engine jumps to it in C) rather than from
# every "a" of the text; the match starts one character before the one this finds.
_AGE_AT_GE = re.compile(r"ge(?<=[Aa]ge)(?<!\w[Aa]ge)(?:d| of)?\s*:?\s*(?P<a>\d{1,3})\b")
_AGE_NUMBER = re.compile(
    r"\d(?<!\w\d)\d{0,2}(?:[- ](?:years?|yrs?|y/?o)[- ](?:old|of[- ]age)\b|\s*(?:yo|y/o|y\.o\.)(?=\W)|-year-old\b)",
    re.IGNORECASE,
)
# What every match of _AGE_NUMBER holds: after its digits and a blank or "-", "y" or "Y" and how each of its words
# goes on ("year", "yr", "yrs " or "yrs-", "yo", "y/o", "y.o."), in any case (the case-insensitive "s" also takes
# "ſ", and no other letter of them another character). A search from that letter, where the scan of every digit
# finds an age in 1 text in 400 of the archive's and tries each of them.
_AGE_AFTER = r"(?:[eE][aA][rR]|[rR][sSſ]?[- ]|/?[oO](?!\w)|\.[oO]\.)"
_AGE_AFTER_LOWER_Y = re.compile(rf"y(?<=[\d\s-]y){_AGE_AFTER}")
_AGE_AFTER_CAPITAL_Y = re.compile(rf"Y(?<=[\d\s-]Y){_AGE_AFTER}")
# An age over 89 in words ("aged ninety", "ninety-two years old", "a hundred and one"): Safe Harbor's rule is
# for the age, however written; under 90 a word says no more than the digits would, which may stay.
_OVER_89_WORDS = (
    r"(?:ninety(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?"
    r"|(?:one |a )?hundred(?:(?: and)? (?:one|two|three|four|five|six|seven|eight|nine|ten))?)"
)
_AGE_IN_WORDS = re.compile(
    rf"\b(?:(?:aged?|age of)\s*:?\s+{_OVER_89_WORDS}\b(?:[- ]years?[- ](?:old|of[- ]age)\b)?"
    rf"|{_OVER_89_WORDS}[- ]years?[- ](?:old|of[- ]age)\b)",
    re.IGNORECASE,
)
AGE_WORDS = re.compile(_OVER_89_WORDS, re.IGNORECASE)
_CURRENCY = (
    r"euros?|EUR|dollars?|USD|US\$|pounds?(?: sterling)?|GBP|kronor|kroner|krona|SEK|NOK|DKK|francs?|CHF|"
    r"lira|liras|TRY|roubles?|rubles?|RUB|zlotys?|PLN|forints?|HUF|lei|leva|hryvnias?|UAH|kunas?|"
    r"drachmas?|escudos?|pesetas?|marks?|DEM|ATS|schillings?|yen|rupees?|"
    r"square metres?|square meters?|metres?|meters?|kilometres?|kilometers?|km|hectares?|acres?|tonnes?"
)
_QUANTITY = re.compile(
    rf"(?:[€$£¥]\s?\d[\d,.]*(?:\s?(?:million|billion|thousand))?"
    rf"|\b(?:{_CURRENCY})\s?\d[\d,.]*(?:\s?(?:million|billion|thousand))?"
    # the currency's country may stand between: "1,336 Swedish kronor", "500 Swiss francs"
    rf"|\b\d[\d,.]*(?:(?:,\s*|\s+and\s+|\s+to\s+)\d[\d,.]*)*(?:\s?(?:million|billion|thousand))?\s?"
    rf"(?P<country>(?-i:[A-Z][a-z]+\s))?(?:{_CURRENCY})\b"
    rf"|\b\d[\d,.]*\s?(?:%|per\s?cent|percent)"
    rf"|\b(?:{_NUMBER_WORDS})(?:[- ](?:{_NUMBER_WORDS}))*\s(?:million\s|thousand\s|hundred\s)?(?:{_CURRENCY})\b)",
    re.IGNORECASE,
)
# An address is found from its "@" (a literal the scan jumps to), and its local part read backwards from there:
# a pattern that opens with the local part is tried at every letter of the text.
_EMAIL_DOMAIN = re.compile(r"@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}\b")
_LOCAL_PUNCT = frozenset(".%+'-")
_URL = re.compile(
    r"[HhFfWw](?<![\w][HhFfWw])(?:(?<=[Hh])[Tt][Tt][Pp][Ss]?://|(?<=[Ff])[Tt][Pp]://|(?<=[Ww])[Ww][Ww]\.)"
    r"[^\s<>\"'()\[\]]+[^\s<>\"'()\[\].,;:!?]"
)
# Each pattern opens with a set of characters and checks what stands before it after that (see _DATE_AT_DIGIT).
_IP_LABEL = re.compile(
    r"(?:\b(?:IP|IPv4|inet|addr|address|host|server|gateway|router|client)\b[\s:=]*|\[)\Z", re.IGNORECASE
)
_IPV4 = re.compile(r"\d(?<![\d.]\d)\d{0,2}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?!\d|\.\d)")
_VERSION_BEFORE = re.compile(r"(?:version|release|firmware|fpga|uhd|driver|kernel|v)[\s:=]*\S{0,12}$", re.IGNORECASE)
_IPV6 = re.compile(
    r"[0-9A-Fa-f](?<![\w:][0-9A-Fa-f])[0-9A-Fa-f]{0,3}:(?:[0-9A-Fa-f]{1,4}:){1,6}[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{1,4})*"
    r"(?![\w:])"
)
# What every match of _IPV6 holds (its first two groups' colons) and of _MAC (its first two separators), found
# from a colon or hyphen (rare characters: the scan jumps to them) where the patterns are tried at every
# hexadecimal letter of the text (_hinted). An IPv6 address starts at most 4 characters before it, a MAC
# address 2. Most texts have colons (times, headers): five in six have no such hint, three in four no MAC's.
# What a match of _MAC holds in the shape (its digits as "9", its capitals as "A"), from each separator as a literal
# the search of the bytes jumps to: a third of the texts hold one, against three in four for _MAC_HINT's scan of the
# text, which tries every ":" and "-".
_MAC_SHAPE_COLON = re.compile(rb":[9Aa-f]{2}[:-]")
_IPV4_SHAPE = re.compile(rb"9\.9{1,3}\.9{1,3}\.9")  # what every match of _IPV4 holds in the shape
_MAC_SHAPE_HYPHEN = re.compile(rb"-[9Aa-f]{2}[:-]")
_IPV6_HINT = re.compile(r":(?<=[0-9A-Fa-f]:)[0-9A-Fa-f]{1,4}:")
_MAC_HINT = re.compile(r"[:-](?<=[0-9A-Fa-f]{2}[:-])[0-9A-Fa-f]{2}[:-]")
_SSN = re.compile(r"\d(?<![\d-]\d)\d\d[- ]\d\d[- ]\d{4}(?![\d-])")
_SSN_LABELLED = re.compile(
    r"(?:[Ss][Ss][Nn]|[Ss]ocial [Ss]ecurity(?: [Nn]umber| [Nn]o\.?)?)(?:[\s:#]|\s(?:is|was|number|no\.?)\b)*(\d{9})\b"
)
_CARD = re.compile(r"\d(?<![\d-]\d)(?:[ -]?\d){12,18}(?![\d-])")
_IBAN = re.compile(r"[A-Z](?<!\w[A-Z])[A-Z]\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b")
# A number is written on one line: the blanks inside a candidate are spaces, tabs and no-break spaces, never a line
# end, or the last digit of "rgb(0,0,0)" takes in the signature's number on the next lines, which phonenumbers then
# turns down whole.
_PHONE_CANDIDATE = re.compile(
    r"[+(\d](?<![\w+/.(-][+(\d])[\d \t\xa0().-]{5,19}\d(?:[ \t\xa0]*(?:x|ext\.?)[ \t\xa0]*\d{1,5})?(?![\w/-])"
)
_PHONE_CONTEXT = re.compile(r"(?:phone|tel|telephone|mobile|cell|call|ph|fax|pager|contact|reach|number)\b[^\n]{0,20}$",
                            re.IGNORECASE)  # fmt: skip
_FAX_CONTEXT = re.compile(r"fax\b[^\n]{0,12}$", re.IGNORECASE)
_US_STATES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|"
    "OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR"
)
_FIVE_DIGITS = re.compile(r"\d(?<!\w\d)\d{4}(?:-\d{4})?\b")
_ZIP_BEFORE = re.compile(rf"(?:\b(?:{_US_STATES})\.?,?[ \t]+|\b(?i:zip code|zip|postal code|zipcode)[ \t]*:?[ \t]*)$")
_STREET_TYPES = (
    r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|Circle|Cir|"
    r"Parkway|Pkwy|Highway|Hwy|Square|Sq|Trail|Trl|Alley|Row|Close|Crescent|Gardens|Strasse|Straße|Rue|Via|Calle"
)
_ADDRESS = re.compile(
    rf"\d(?<!\w\d)\d{{0,5}}[A-Za-z]?\s+(?:[NSEW]\.?\s+)?(?:[A-Z][\w'.-]*\s+){{1,4}}(?:{_STREET_TYPES})\b\.?"
    rf"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Room|Rm|Floor|Fl|#)\.?\s*#?\s*[\w-]+)?"
    rf"(?:,\s+(?P<city>[A-Z][a-z]+(?:[ -][A-Z][a-z]+){{0,2}}))?"
    rf"(?:,?\s+(?P<state>{_US_STATES})\b)?"
    rf"(?:\s+(?P<zip>\d{{5}})(?:-\d{{4}})?\b)?"
)
_PO_BOX = re.compile(r"[Pp](?<!\w[Pp])\.?\s?[Oo]\.?\s+[Bb][Oo][Xx]\s+\d+\b")

# Labelled numbers: the label says what the number is. The number is a run with at least one digit.
_LABELLED = [
    (
        K.MRN,
        r"MRN|medical record(?: number| no\.?| #)?|med(?:ical)? rec(?:ord)? (?:no\.?|#)|patient ID|hospital number|"
        r"chart (?:number|no\.?|#)|case (?:number|no\.?)",
    ),
    (
        K.HEALTH_PLAN,
        r"member ID|member (?:number|no\.?|#)|health plan(?: ID| number| no\.?)?|insurance ID|"
        r"policy (?:number|no\.?|#)|subscriber ID|group (?:number|no\.?|#)|beneficiary (?:number|ID)|"
        r"Medicare(?: ID| number)?|Medicaid(?: ID| number)?",
    ),
    (
        K.ACCOUNT,
        r"account(?: number| no\.?| #)?|acct\.?(?: no\.?| #)?|a/c|billing (?:number|ID)|invoice (?:number|no\.?)",
    ),
    (
        K.LICENSE,
        r"licen[cs]e(?: number| no\.?| #)?|certificate(?: number| no\.?| #)?|DEA(?: number| no\.?| #)?|NPI|"
        r"driver'?s licen[cs]e(?: number| no\.?)?|passport(?: number| no\.?)?|registration (?:number|no\.?)",
    ),
    (K.VEHICLE, r"VIN|vehicle identification number|licen[cs]e plate|plate(?: number| no\.?)?|registration plate"),
    (K.DEVICE, r"serial(?: number| no\.?| #)?|S/N|SN|device ID|UDI|IMEI|MAC(?: address)?|implant ID"),
    (
        K.NATIONAL_ID,
        r"NHS(?: number| no\.?)?|national ID|ID card(?: number| no\.?)?|personnummer|BSN|NINO|"
        r"national insurance(?: number| no\.?)?|SIN|tax ID|TIN|EIN",
    ),
    (
        K.CODE,
        r"application(?:s)? nos?\.?|case nos?\.?|file (?:number|no\.?|ref\.?)|reference(?: number| no\.?)?|"
        r"ref\.?|ticket(?: number| no\.?| #)?|claim(?: number| no\.?| #)?|ID|no\.|#",
    ),
]
_LABEL_VALUE = (
    r"[ \t]*(?:[:#]|is|was|number)?[ \t]*(?:no\.?|#)?[ \t]*"
    r"(?P<value>\d{2,5}(?:-\d{1,5}|[ ]\d{2,5}){1,4}\b|[A-Z]{2,4}[ ]\d{4,}(?:[/_.-]?[A-Z0-9]+)*\b|"
    r"[A-Z0-9][A-Z0-9/_.-]*\d[A-Z0-9/_.-]*|"
    r"\d[\w/.-]*)"
)
_KIND_GROUP = {kind: f"k{i}" for i, (kind, _label) in enumerate(_LABELLED)}
_LABELLED_AT = re.compile(
    r"(?:"
    + "|".join(f"(?P<{_KIND_GROUP[kind]}>{label})" for kind, label in _LABELLED)
    + rf")(?<!\.)(?:\b|(?<=#)){_LABEL_VALUE}",
    re.IGNORECASE,
)
# The words a label can start with: the label pattern is tried only where one stands (one scan of the words,
# not a choice among fifty labels at every position).
_LABEL_FIRST_WORDS = frozenset(
    "mrn medical med patient hospital chart case member health insurance policy subscriber group beneficiary "
    "medicare medicaid account acct a/c billing invoice license licence certificate dea npi driver driver's "
    "drivers passport registration vin vehicle plate serial s/n sn device udi imei mac implant nhs national id "
    "personnummer bsn nino sin tax tin ein application applications file reference ref ticket claim no #".split()
)
_WORD_START = re.compile(r"[A-Za-z](?<![\w#][A-Za-z])[A-Za-z'/]*|#")
_GROUP_KIND = {g: k for k, g in _KIND_GROUP.items()}
# Case numbers of courts and registries: 10424/05, 12345/2003.
_CASE_NUMBER = re.compile(r"\d(?<![\w/]\d)\d{3,5}/(?:\d{2}|\d{4})(?![\w/])")  # not "120/80"
_VIN = re.compile(r"[A-HJ-NPR-Z0-9](?<!\w[A-HJ-NPR-Z0-9])[A-HJ-NPR-Z0-9]{16}\b")
_MAC = re.compile(r"[0-9A-Fa-f](?<!\w[0-9A-Fa-f])[0-9A-Fa-f][:-](?:[0-9A-Fa-f]{2}[:-]){4}[0-9A-Fa-f]{2}\b")
# A code a person would only write to identify one thing: letters and digits mixed, 6+ characters.
_MIXED_CODE = re.compile(r"[A-Z0-9](?<![\w-][A-Z0-9])[A-Z0-9]+(?:-[A-Z0-9]+)+\b")
# What every match of _CASE_NUMBER holds (its "/" between digits, at most 6 characters after its start) and of
# _MIXED_CODE (its first "-" between capitals or digits, after its first part's capitals and digits), found from
# that rare character (_hinted): 98 % of the archive's texts have no case number's, two in five no code's.
_CASE_NUMBER_HINT = re.compile(r"/(?<=\d\d\d\d/)\d\d")
_MIXED_CODE_HINT = re.compile(r"-(?<=[A-Z0-9]-)[A-Z0-9]")
_CODE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

# A recognizer reads a text, and may be given its shape (``shape_of``) to skip the scans it rules out.
Recognizer = Callable[[str, bytes | None], Iterator[Finding]]
LABELLED = "labelled number"  # the source of a number its label names


def _f(m: re.Match[str], kind: str, source: str, score: float = 0.85, group: int | str = 0,
       parts: tuple[tuple[str, str], ...] = ()) -> Finding:  # fmt: skip
    return Finding(start=m.start(group), end=m.end(group), kind=kind, text=m.group(group), score=score,
                   source=source, parts=parts)  # fmt: skip


def _hinted(pattern: re.Pattern[str], hint: re.Pattern[str], text: str, *, back: int = 0,
            run: frozenset[str] = frozenset()) -> Iterator[re.Match[str]]:  # fmt: skip
    """``pattern.finditer(text)``, for a pattern each of whose matches holds a match of ``hint`` and starts at most
    ``back`` characters (and then characters of ``run``) before it: none in a text without the hint, and the scan
    starts at the first one. A look-behind still sees what stands before where the scan starts."""
    h = hint.search(text)
    if h is None:
        return iter(())
    start = max(0, h.start() - back)
    while start > 0 and text[start - 1] in run:
        start -= 1
    return pattern.finditer(text, start)


def _anchored(starts: re.Pattern[str], pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """Matches of ``pattern`` at the positions ``starts`` finds, none overlapping the one before."""
    pos = 0
    for s in starts.finditer(text):
        if s.start() < pos:
            continue
        m = pattern.match(text, s.start())
        if m is not None and m.end() > m.start():
            pos = m.end()
            yield m


# A text as one byte a character, for a test before a scan (``shape_of``): each digit is "9", and so is each
# character outside ASCII (any script's digits are "\d"; the encoder writes "?" for each of them, so "?" is "9"
# too), each capital A-Z is "A", the rest of ASCII is itself. A match of a pattern made of digits, capitals and
# ASCII punctuation stands in the shape as one of a few fixed strings; a text whose shape holds none of them has no
# match, and the pattern is not scanned. Such a scan tries every digit or every capital of the text; the test is a
# substring search over a byte string. Where blanks or separators may stand between a match's digits, they are
# taken out of the shape first (a character outside ASCII that the pattern reads as a blank is then one more "9",
# which only lengthens a run of them).
_SHAPE = bytes.maketrans(b"0123456789?ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"9" * 11 + b"A" * 26)
_ASCII_BLANKS = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"  # what "\s" matches in ASCII


def shape_of(text: str) -> bytes:
    """The text's shape: one byte for each character (see _SHAPE)."""
    return text.encode("ascii", "replace").translate(_SHAPE)


def _holds(shape: bytes, *strings: bytes) -> bool:
    return any(s in shape for s in strings)


# For each pattern tested before its scan, what the shape of a text holding a match holds (tests compare the scans
# with and without the test on crafted edges and archive texts).
_GATES: dict[re.Pattern[str], Callable[[bytes], bool]] = {}


def _gated(pattern: re.Pattern[str], text: str, shape: bytes) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)``, or nothing where the shape rules every match out."""
    return pattern.finditer(text) if _GATES[pattern](shape) else iter(())


def _calendar_version(m: re.Match[str], text: str) -> bool:
    """ "version 2019.12.31", "2023.03.01.4": a release named by its date is a version, not anyone's date."""
    if text.startswith(".", m.end()) and text[m.end() + 1 : m.end() + 2].isdigit():
        return True
    return _VERSION_BEFORE.search(text, max(0, m.start() - 24), m.start()) is not None


def _dotted_version(m: re.Match[str], text: str) -> bool:
    """ "2.1.33", "1.2.13.4": a version, not a date. Dotted numbers are dates when written as dates are: day
    and month with two digits where the year has two ("02.01.33"), and no further ".4" after them."""
    if m.group("sep") != ".":
        return False
    if text.startswith(".", m.end()) and text[m.end() + 1 : m.end() + 2].isdigit():
        return True
    day, month, year = m.group().split(".", 2)
    return len(year) == 2 and (len(day) == 1 or len(month) == 1)


def dates(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    for m in (*_anchored(_DIGIT_START, _DATE_AT_DIGIT, text), *_anchored(_MONTH_START, _DATE_AT_MONTH, text)):
        if m.re is _DATE_AT_DIGIT and m.group("sep") and _dotted_version(m, text):
            continue
        if m.re is _DATE_AT_DIGIT and m.group("isep") == "." and _calendar_version(m, text):
            continue
        if m.group("t") if "t" in m.re.groupindex else None:
            yield _f(m, K.DATE, "time pattern", 0.8, parts=(("time", m.group("t")),))
            continue
        year = next((m.group(g) for g in ("y1", "y2", "y3", "y4", "y5") if g in m.re.groupindex and m.group(g)), None)
        if year is not None and len(year) == 2:
            year = None  # "4/12/61": the century is a guess; a placeholder, not a wrong year
        yield _f(m, K.DATE, "date pattern", parts=(("year", year),) if year else ())
    for m in _YEAR_TOKEN.finditer(text):
        y = m.group()
        window = text[max(0, m.start() - 16) : m.start()]
        if (s := _SEASON_BEFORE.search(window)) is not None:
            start = m.start() - len(window) + s.start()
            yield Finding(start=start, end=m.end(), kind=K.DATE, text=text[start : m.end()], score=0.85,
                          source="date pattern", parts=(("year", y),))  # fmt: skip
        elif text.startswith("s", m.end()) and not text[m.end() + 1 : m.end() + 2].isalnum():
            # A decade ("the 1990s") says no more than a year: a year part, kept where a year may stay.
            decade = text[m.start() : m.end() + 1]
            yield Finding(start=m.start(), end=m.end() + 1, kind=K.DATE, text=decade, score=0.5, source="year",
                          parts=(("year", decade),))  # fmt: skip
        elif (
            (r := _YEAR_RANGE_AFTER.match(text, m.end())) is not None
            or _YEAR_WORD_BEFORE.search(window)
            or _YEAR_BRACKET_BEFORE.search(window)
        ):
            # The years alone ("2008–15", "2010–present" included) are the year part: they stay where a year may.
            end = r.end() if r is not None else m.end()
            years = text[m.start() : end]
            yield Finding(start=m.start(), end=end, kind=K.DATE, text=years, score=0.5, source="year",
                          parts=(("year", years),))  # fmt: skip

    # A month and day without a year ("seen on 3/15", "discharged 10-5") is a date element Safe Harbor names;
    # alone, "3/4" is as often a fraction or a ratio, so only after a word that introduces a date.
    if (shape is None or b"9/9" in shape or b"9-9" in shape) and (
        _MONTH_DAY_AT_SLASH.search(text) or _MONTH_DAY_AT_HYPHEN.search(text)
    ):
        for m in _MONTH_DAY.finditer(text):
            month, day = (int(x) for x in re.split(r"[/-]", m.group()))
            if (
                1 <= month <= 12
                and 1 <= day <= 31
                and _DATE_WORD_BEFORE.search(text, max(0, m.start() - 24), m.start())
            ):
                yield _f(m, K.DATE, "month and day", 0.75)
    # A date of birth written as one number ("DOB 19610412").
    if shape is None or _may_hold_compact_birth(text, shape):
        for m in _COMPACT_BIRTH.finditer(text):
            yield _f(m, K.DATE, "date of birth", 0.9, group="d", parts=(("year", m.group("d")[:4]),))


_MONTH_DAY = re.compile(r"\d(?<![\w./:-]\d)\d?[/-]\d\d?(?![\w/:]|[.-]\d)")


def _month_day_at(sep: str) -> re.Pattern[str]:
    """_MONTH_DAY's matches with this separator, found from it (a literal the scan jumps to, where _MONTH_DAY's scan
    tries every digit): one or two digits before it after no word character, ".", "/", ":" or "-" (or at the text's
    start), and its own end after it. A match of this exists where one of _MONTH_DAY does (ISO dates, phone numbers
    and versions, the "9/9" and "9-9" of three texts in five, have none)."""
    s = re.escape(sep)
    return re.compile(
        rf"{s}(?:(?<=[^\w./:-]\d{s})|(?<=[^\w./:-]\d\d{s})|(?<=^\d{s})|(?<=^\d\d{s}))\d\d?(?![\w/:]|[.-]\d)"
    )


_MONTH_DAY_AT_SLASH = _month_day_at("/")
_MONTH_DAY_AT_HYPHEN = _month_day_at("-")
_DATE_WORD_BEFORE = re.compile(
    r"\b(?:on|since|until|till|from|by|before|after|dated?|DOB|born|seen|visit|visited|admitted|discharged|"
    r"scheduled(?: for)?|appointment|due|surgery|birthday|between)[\s:,]+(?:(?:on|the)\s+)?\Z",
    re.IGNORECASE,
)
_COMPACT_BIRTH = re.compile(
    r"(?:DOB|D\.O\.B\.?|[Dd]ate of [Bb]irth|[Bb]orn)[\s:]*"
    r"(?P<d>(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))\b"
)
# What a match of _COMPACT_BIRTH holds in the shape: "Born" or "Date of Birth" as "[Ab]orn" and "[Ad]ate of [Ab]irth"
# (the capitals as "A"), then blanks or ":" ("\s" outside ASCII is a "9"), then eight digits. Literal-led searches
# of the bytes: eight digits in a row are in two texts in five (message ids), the label before them in almost none.
_BORN_SHAPE = re.compile(rb"orn[ \t\n\r\x0b\x0c\x1c-\x1f:9]*99999999")
_BIRTH_SHAPE = re.compile(rb"ate of [Ab]irth[ \t\n\r\x0b\x0c\x1c-\x1f:9]*99999999")


def _may_hold_compact_birth(text: str, shape: bytes) -> bool:
    if b"99999999" not in shape:
        return False
    return "DOB" in text or "D.O.B" in text or bool(_BORN_SHAPE.search(shape) or _BIRTH_SHAPE.search(shape))


def durations(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    for m in _DURATION.finditer(text):
        yield _f(m, K.DURATION, "duration pattern", 0.6)


def ages(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    for m in _AGE_AT_GE.finditer(text):
        value = m.group("a")
        if 0 < int(value) < 130:
            start = m.start() - 1  # the "a" before the "ge" the match opens with
            yield Finding(start=start, end=m.end(), kind=K.AGE, text=text[start : m.end()], score=0.85,
                          source="age pattern", parts=(("age", value),))  # fmt: skip
    for m in _AGE_NUMBER.finditer(text) if _AGE_AFTER_LOWER_Y.search(text) or _AGE_AFTER_CAPITAL_Y.search(text) else ():
        value = re.match(r"\d+", m.group())[0]  # type: ignore[index]
        if 0 < int(value) < 130:
            yield _f(m, K.AGE, "age pattern", parts=(("age", value),))
    # A substring test first: the pattern's scan tries every letter, and nearly no text holds these words.
    if any(w in text for w in ("inety", "INETY", "undred", "UNDRED")):
        for m in _AGE_IN_WORDS.finditer(text):
            words = AGE_WORDS.search(m.group())
            over = "100" if words is not None and "hundred" in words.group().lower() else "90"
            yield _f(m, K.AGE, "age in words", 0.85, parts=(("age", over),))


def quantities(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    for m in _QUANTITY.finditer(text):
        # With its country's adjective the amount is surer than the adjective read alone as a nationality.
        yield _f(m, K.QUANTITY, "quantity pattern", 0.85 if m.group("country") else 0.6)


def emails(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    """``[\\w.%+'-]+@domain`` with a word boundary before it, as a left-to-right scan would find it; and an
    address spelt out to pass filters ("jane dot doe at gmail dot com", "jane [at] example [dot] org")."""
    if ("dot" in text or "DOT" in text or "Dot" in text) and _SPELT_DOT.search(text) is not None:
        for m in _SPELT_EMAIL.finditer(text):
            # "Look at the dot com bubble": an address's words are names, not "the" or "my".
            if STOPWORDS.isdisjoint(w for w in map(str.lower, _SPELT_WORDS.findall(m.group())) if w not in _SPELT):
                yield _f(m, K.EMAIL, "e-mail spelt out", 0.9)
    if "@" not in text:
        return
    pos = 0  # matches do not overlap: a local part starts after the previous address
    for m in _EMAIL_DOMAIN.finditer(text):
        at = m.start()
        i = at
        while i > pos:  # _word inlined: the local part is walked a character at a time
            ch = text[i - 1]
            if not (ch.isalnum() or ch == "_" or ch in _LOCAL_PUNCT):
                break
            i -= 1
        # The word boundary: past leading punctuation (".john@", "'jo@") to the first word character.
        while i < at and not _word(text[i]) and not (i > 0 and _word(text[i - 1])):
            i += 1
        if i < at:
            pos = m.end()
            yield Finding(start=i, end=pos, kind=K.EMAIL, text=text[i:pos], score=1.0, source="e-mail pattern")


# "dot" as a word, or bracketed: what every spelt-out address holds before its top-level domain (a scan that
# finds nothing in nearly every text, before the pattern is tried).
_SPELT_DOT = re.compile(r"[\s\[(]dot[\s\])]", re.IGNORECASE)
_SPELT_WORDS = re.compile(r"[^\W_]+")
_SPELT = frozenset({"at", "dot"})
# A literal "." only between letters: ". " ends a sentence.
_DOT = r"(?:\.|\s*[\[(]\s*dot\s*[\])]\s*|\s+dot\s+)"
_AT = r"(?:\s*@\s*|\s*[\[(]\s*at\s*[\])]\s*|\s+at\s+)"
_SPELT_EMAIL = re.compile(
    rf"(?<![\w.@-])[a-z0-9][\w%+-]*(?:{_DOT}[\w%+-]+)*{_AT}[a-z][\w-]*(?:{_DOT}[a-z0-9][\w-]*)*"
    rf"(?:\s*[\[(]\s*dot\s*[\])]\s*|\s+dot\s+)"
    r"(?:com|org|net|edu|gov|mil|int|info|biz|io|co|uk|us|ca|au|de|fr|nl|es|it|ie|nz|in|ch|se|no|dk|be|at)\b",
    re.IGNORECASE,
)


_BARE_URL_TLD = re.compile(
    r"\.(?:com|org|net|edu|gov|io|info|health|co\.uk|org\.uk|nhs\.uk|ac\.uk|de|fr|eu)/(?=[\w~%-])"
)
_URL_PATH = re.compile(r"[^\s<>\"'()\[\]]*[^\s<>\"'()\[\].,;:!?]")


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def urls(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    for m in _URL.finditer(text):
        yield _f(m, K.URL, "URL pattern", 1.0)


def bare_urls(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    """A link written without its scheme ("example-clinic.org/records/998"): found from its domain's end and a
    path (a domain alone names an organisation, not a page about someone), read backwards to its first label."""
    for m in _BARE_URL_TLD.finditer(text):
        i = m.start()
        while i > 0 and (text[i - 1].isalnum() or text[i - 1] in ".-"):
            i -= 1
        if i == m.start() or text[i : i + 1] in ".-" or (i > 0 and text[i - 1] in "/@:"):
            continue  # no domain before it, or part of a URL with a scheme, an address or a path
        if text[i : i + 4].lower() == "www.":
            continue  # urls() has it
        path = _URL_PATH.match(text, m.end())
        end = path.end() if path is not None else m.end()
        yield Finding(start=i, end=end, kind=K.URL, text=text[i:end], score=0.9, source="URL without scheme")


def ips(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    # Four groups of digits and their dots: in the shape a literal-led search (a third of the texts hold one).
    ipv4s = _IPV4.finditer(text) if shape is None else _in_runs(_IPV4, text, shape, (_IPV4_SHAPE,), _IPV4_BYTES, 2)
    for m in ipv4s:
        try:
            ipaddress.IPv4Address(m.group())
        except ValueError:
            continue
        octets = m.group().split(".")
        before = max(0, m.start() - 30)
        if _VERSION_BEFORE.search(text, before, m.start()) or (
            sum(len(o) == 1 for o in octets) >= 3 and not _IP_LABEL.search(text, before, m.start())
        ):
            continue  # "4.1.0.4", "version 3.15.0.0": a version number; "IP 10.0.0.1", "[10.1.2.3]": an address
        yield _f(m, K.IP, "ipaddress", 0.9)
    if "::" in text or text.count(":") >= 4:
        ipv6s = (_hinted(_IPV6, _IPV6_HINT, text, back=4) if shape is None
                 else _in_runs(_IPV6, text, shape, (_IPV6_SHAPE,), _IPV6_BYTES, 1))  # fmt: skip
        for m in ipv6s:
            try:
                ipaddress.IPv6Address(m.group())
            except ValueError:
                continue
            yield _f(m, K.IP, "ipaddress", 0.9)
    macs = (_hinted(_MAC, _MAC_HINT, text, back=2) if shape is None
            else _in_runs(_MAC, text, shape, (_MAC_SHAPE_COLON, _MAC_SHAPE_HYPHEN), _MAC_BYTES, 1))  # fmt: skip
    for m in macs:
        yield _f(m, K.DEVICE, "MAC address", 0.9)


# What the characters of a match of _IPV4, _IPV6 and _MAC are in the shape (digits and characters outside ASCII as
# "9", capitals as "A"): a match stands inside a run of these bytes, one that holds a match of its hints.
_IPV4_BYTES = (frozenset(b"9."), re.compile(rb"[^9.]"))
_IPV6_BYTES = (frozenset(b"9Aabcdef:"), re.compile(rb"[^9Aa-f:]"))
_MAC_BYTES = (frozenset(b"9Aabcdef:-"), re.compile(rb"[^9Aa-f:-]"))
_IPV6_SHAPE = re.compile(rb":(?<=[9Aa-f]:)[9Aa-f]{1,4}:")  # _IPV6_HINT in the shape


def _in_runs(pattern: re.Pattern[str], text: str, shape: bytes, hints: Sequence[re.Pattern[bytes]],
             run: tuple[frozenset[int], re.Pattern[bytes]], after: int) -> Iterator[re.Match[str]]:  # fmt: skip
    """``pattern.finditer(text)``, for a pattern whose matches are made of characters whose shape is one of the
    bytes ``run`` holds (as a set, and as the pattern of any other byte) and hold a match of one of ``hints``
    (patterns of the shape made of those bytes, led by a literal: their scans jump). Each run of those bytes that
    holds a hint is scanned, from its start to its end and ``after`` characters more (what the pattern looks at
    after a match): no match crosses a run's end, and no other run holds one."""
    inside, outside = run
    size = len(shape)
    pending = [h.search(shape) for h in hints]  # the next match of each hint
    while True:
        hits = [m.start() for m in pending if m is not None]
        if not hits:
            return
        start = at = min(hits)
        while start > 0 and shape[start - 1] in inside:
            start -= 1
        stop = outside.search(shape, at)
        end = size if stop is None else stop.start()
        yield from pattern.finditer(text, start, min(size, end + after))
        pending = [m if m is None or m.start() >= end else h.search(shape, end)
                   for m, h in zip(pending, hints, strict=True)]  # fmt: skip


def ssns(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    shape = shape_of(text) if shape is None else shape
    for m in _gated(_SSN, text, shape):
        if us_ssn.is_valid(_NOT_DIGIT.sub("", m.group())):
            yield _f(m, K.SSN, "stdnum.us.ssn", 0.95)
    for m in _gated(_SSN_LABELLED, text, shape):
        if us_ssn.is_valid(m.group(1)):
            yield _f(m, K.SSN, "stdnum.us.ssn", 0.95, group=1)


def cards(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    shape = shape_of(text) if shape is None else shape
    for m in _gated(_CARD, text, shape):
        digits = _NOT_DIGIT.sub("", m.group())
        if 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn.is_valid(digits):
            yield _f(m, K.CARD, "stdnum.luhn", 0.95)


def ibans(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    shape = shape_of(text) if shape is None else shape
    for m in _gated(_IBAN, text, shape):
        # Imported at the first candidate: stdnum.iban reads its bank-code database at import (2.9 MB in
        # every worker), and most mail holds nothing shaped like an IBAN.
        from stdnum import iban as std_iban

        if std_iban.is_valid(m.group()):
            yield _f(m, K.IBAN, "stdnum.iban", 1.0)


_IT_CF = re.compile(r"[A-Z](?<!\w[A-Z])[A-Z]{5}\d\d[A-Z]\d\d[A-Z]\d{3}[A-Z]\b")
_ES_DNI = re.compile(r"\d(?<!\w\d)\d{7}-?[A-Z]\b")
_FR_NIR = re.compile(r"[12](?<!\w[12])\s?\d\d\s?\d\d\s?(?:\d\d|2[AB])\s?\d{3}\s?\d{3}\s?\d\d\b")
_NATIONAL: list[tuple[re.Pattern[str], Callable[[str], bool], str]] = [
    (_IT_CF, it_cf.is_valid, "stdnum.it.codicefiscale"),
    (_ES_DNI, es_dni.is_valid, "stdnum.es.dni"),
    (_FR_NIR, fr_nir.is_valid, "stdnum.fr.nir"),
]
_NEEDS_LABEL: list[tuple[Callable[[str], bool], str]] = [
    (gb_nhs.is_valid, "stdnum.gb.nhs"),
    (nl_bsn.is_valid, "stdnum.nl.bsn"),
    (std_imei.is_valid, "stdnum.imei"),
]


_SSN_SHAPE = re.compile(rb"999[- ]99[- ]9999")
_IBAN_SHAPE = re.compile(rb"AA99(?: ?[A9]{4}){2}")

_GATES.update({
    # 123-45-6789: three digits, a hyphen or blank, two, a hyphen or blank, four
    _SSN: lambda shape: _SSN_SHAPE.search(shape) is not None,
    _SSN_LABELLED: lambda shape: b"9" * 9 in shape,  # nine digits after the label
    # 13 to 19 digits, a hyphen or blank between any two
    _CARD: lambda shape: b"9" * 13 in shape.translate(None, b" -"),
    # a country's two capitals, two check digits and at least two groups of four (a literal-led search)
    _IBAN: lambda shape: _IBAN_SHAPE.search(shape) is not None,
    _IT_CF: lambda shape: b"AAAAAA99A99A999A" in shape,
    _ES_DNI: lambda shape: _holds(shape, b"99999999A", b"99999999-A"),
    # 15 digits with blanks between groups, or "2A" / "2B" (Corsica) for the department's two digits
    _FR_NIR: lambda shape: _holds(shape.translate(None, _ASCII_BLANKS), b"9" * 15, b"999999A99999999"),
})  # fmt: skip


def national_ids(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    shape = shape_of(text) if shape is None else shape
    for pattern, valid, source in _NATIONAL:
        for m in _gated(pattern, text, shape):
            if valid(m.group()):
                yield _f(m, K.NATIONAL_ID, source, 0.95)


def _labels(text: str, shape: bytes | None = None) -> Iterator[re.Match[str]]:
    pos = 0
    for a, b in _runs_before_a_digit(text, shape):
        if _LABEL_FIRST_WORDS.isdisjoint(map(str.lower, _WORD_START.findall(text, a, b))):
            continue  # no word of the run can open a label (most runs): its words are not looked at one by one
        for w in _WORD_START.finditer(text, a, b):
            if w.start() < pos or w.group().lower() not in _LABEL_FIRST_WORDS:
                continue
            m = _LABELLED_AT.match(text, w.start())
            if m is not None:
                pos = m.end()
                yield m


# A label, the words between it and its number, and the number up to its first digit are written with these
# characters only (the labels' letters, blanks, "'", "/", "#", ".", the gap's ":" and a code's "_" and "-"; the
# four letters outside ASCII that IGNORECASE lets [a-z] match), and none of them is a digit or a line end. So
# a label starts inside a run of them that a digit ends: the words of the other runs (four fifths of a
# message) are never looked at.
_LABEL_RUN_CHARS = "A-Za-z\u0130\u0131\u017f\u212a \t'/#:._\\-"
_BEFORE_A_DIGIT = re.compile(rf"[{_LABEL_RUN_CHARS}](?<![{_LABEL_RUN_CHARS}].)[{_LABEL_RUN_CHARS}]*+(?=\d)")
# _BEFORE_A_DIGIT read backwards, in the shape: a digit, then the run. Its scan jumps from "9" to "9" (a literal),
# where _BEFORE_A_DIGIT's tries every letter and blank of the text. In the shape every run character of ASCII is
# one of these bytes and no other character is; the four outside ASCII are not, so a text holding one is scanned
# as it stands. A "9" that is no digit (a character outside ASCII, a "?") is told apart by the text.
_DIGIT_THEN_RUN = re.compile(rb"9[A-Za-z \t'/#:._\-]++")
_RUN_CHARS_OUTSIDE_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


def _runs_before_a_digit(text: str, shape: bytes | None) -> list[tuple[int, int]]:
    """The spans of ``_BEFORE_A_DIGIT.finditer(text)``, in order; ``shape``: the text's (``shape_of``)."""
    if shape is None or any(ch in text for ch in _RUN_CHARS_OUTSIDE_ASCII):
        return [m.span() for m in _BEFORE_A_DIGIT.finditer(text)]
    last = len(text) - 1
    runs = []
    for m in _DIGIT_THEN_RUN.finditer(shape[::-1]):
        digit, end = m.span()  # in the shape read backwards: the run's end, then its start
        if text[last - digit].isdecimal():  # "\d" is a decimal digit of any script
            runs.append((last + 1 - end, last - digit))
    runs.reverse()
    return runs


def labelled_numbers(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    for m in _labels(text, shape):
        kind = next(_GROUP_KIND[g] for g in _GROUP_KIND if m.group(g) is not None)
        value = m.group("value").rstrip(".-/")
        if len(value) < 3 or not any(ch.isdigit() for ch in value) or (kind == K.CODE and len(value) < 4):
            continue
        found_kind = kind
        source = LABELLED
        score = 0.8
        digits = _NOT_DIGIT.sub("", value)
        for valid, lib in _NEEDS_LABEL if kind in (K.CODE, K.NATIONAL_ID, K.DEVICE) else ():
            if valid(digits):
                found_kind = K.DEVICE if lib == "stdnum.imei" else K.NATIONAL_ID if kind == K.CODE else kind
                source = lib
                score = 0.97  # a label and a checksum: surer than a bare checksum (a Luhn-valid IMEI is no card)
                break
        start = m.start("value")
        yield Finding(start=start, end=start + len(value), kind=found_kind, text=value, score=score, source=source)
    for m in _hinted(_CASE_NUMBER, _CASE_NUMBER_HINT, text, back=6):
        yield _f(m, K.CODE, "case number", 0.7)
    for m in _vins(text, shape):
        if any(ch.isdigit() for ch in m.group()) and any(ch.isalpha() for ch in m.group()) and _vin_ok(m.group()):
            yield _f(m, K.VEHICLE, "VIN check digit", 0.9)
    for m in _codes(text, shape):
        code = m.group()
        if len(code) >= 6 and any(c.isdigit() for c in code) and any(c.isalpha() for c in code):
            yield _f(m, K.CODE, "code pattern", 0.5)


# A VIN's 17 characters are capitals and digits: 17 of them in a row in the shape once its capitals are read as
# digits, a substring found by bytes.find (the scan of _VIN tries every capital and digit of the text).
_CAPITALS_AS_DIGITS = bytes.maketrans(b"A", b"9")
_SEVENTEEN = b"9" * 17
_NOT_NINE = re.compile(rb"[^9]")


def _vins(text: str, shape: bytes | None) -> Iterator[re.Match[str]]:
    """``_VIN.finditer(text)``, scanned only over the runs of capitals and digits (in the shape) long enough to
    hold a VIN. No match crosses such a run's end, and its ``\\b`` sees the character after that end."""
    if shape is None:
        yield from _VIN.finditer(text)
        return
    mask = shape.translate(_CAPITALS_AS_DIGITS)
    start = mask.find(_SEVENTEEN)
    while start >= 0:
        after = _NOT_NINE.search(mask, start + 17)
        end = len(mask) if after is None else after.start()
        yield from _VIN.finditer(text, start, end + 1)
        start = mask.find(_SEVENTEEN, end)


_CODE_HINT = b"9-9"
_NOT_IN_CODE = re.compile(rb"[^9-]")


def _codes(text: str, shape: bytes | None) -> Iterator[re.Match[str]]:
    """``_MIXED_CODE.finditer(text)``, scanned only over the runs of capitals, digits and "-" (in the shape, its
    capitals read as digits) that hold what every code holds, "9-9": a substring found by bytes.find. A code
    starts in the run of capitals and digits before the first such hint of its run (an earlier start would hold
    an earlier hint) and ends inside the run."""
    if shape is None:
        yield from _hinted(_MIXED_CODE, _MIXED_CODE_HINT, text, run=_CODE_CHARS)
        return
    mask = shape.translate(_CAPITALS_AS_DIGITS)
    hint = mask.find(_CODE_HINT)
    while hint >= 0:
        start = hint
        while start > 0 and mask[start - 1] == 57:  # "9"
            start -= 1
        after = _NOT_IN_CODE.search(mask, hint + 3)
        end = len(mask) if after is None else after.start()
        yield from _MIXED_CODE.finditer(text, start, end + 1)
        hint = mask.find(_CODE_HINT, end)


_VIN_VALUES = dict(zip("ABCDEFGHJKLMNPRSTUVWXYZ", (1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 7, 9, 2, 3, 4, 5, 6, 7, 8, 9),
                       strict=True))  # fmt: skip
_VIN_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)


def _vin_ok(vin: str) -> bool:
    """The North American check digit (position 9)."""
    total = sum((int(c) if c.isdigit() else _VIN_VALUES[c]) * w for c, w in zip(vin, _VIN_WEIGHTS, strict=True))
    check = total % 11
    return vin[8] == ("X" if check == 10 else str(check))


def phones(text: str, shape: bytes | None = None, region: str = "US") -> Iterator[Finding]:
    """Phone numbers: what the pattern proposes and ``phonenumbers`` accepts (``Phones``, remembering nothing)."""
    return Phones(region=region, remember=0)(text)


class Phones:
    """The phone recognizer of one analyzer. ``remember``: how many candidates ``phonenumbers`` turned down to
    remember, so that a number-like string a thread repeats (an IP address, "160000000.0": four parses in five
    on the archive) is not parsed again. What it turned down is no phone number; it is remembered by a digest."""

    def __init__(self, *, region: str = "US", remember: int = 4096) -> None:
        self._region = region
        self._remember = remember
        # Oldest first (popitem(last=False): a dict's first key is found by walking over every deleted entry).
        self._rejected: OrderedDict[bytes, None] = OrderedDict()

    def __call__(self, text: str, shape: bytes | None = None) -> Iterator[Finding]:
        # What phonenumbers made of each candidate in this text, and whether it is valid: a message says its
        # numbers twice (text and HTML), and a parse with its validation is the costly part. Kept for this text
        # only (a number accepted is an identifier, not remembered across messages).
        parsed: dict[str, tuple[phonenumbers.PhoneNumber, bool]] = {}
        for m in _PHONE_CANDIDATE.finditer(text) if shape is None else _phone_candidates(text, shape):
            raw = m.group().strip()
            digits = _NOT_DIGIT.sub("", raw)
            if (not 7 <= len(digits) <= 15 or _DATE_AT_DIGIT.fullmatch(raw) or _CASE_NUMBER.fullmatch(raw)
                    or _ISO_DATE_START.match(raw)):  # fmt: skip
                continue  # "2024-03-05 14:22": a date and a time, which phonenumbers would take for a number
            before = text[max(0, m.start() - 30) : m.start()]
            labelled = _PHONE_CONTEXT.search(before) is not None
            grouped = _GROUPED_DIGITS.fullmatch(_EXTENSION.sub("", raw)) is not None
            if not (labelled or grouped):
                continue  # neither a label nor grouped digits: no number is taken for a phone's (nothing to parse)
            key = hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            if key in self._rejected:
                continue
            known = parsed.get(raw)
            if known is None:
                try:
                    number = phonenumbers.parse(raw, self._region)
                except phonenumbers.NumberParseException:
                    self._reject(key)
                    continue
                known = parsed[raw] = (number, phonenumbers.is_valid_number(number))
            number, valid = known
            if valid:
                ok = grouped or labelled
            elif labelled and raw[0] == "0" and "." not in raw and self._valid_abroad(raw):
                ok = True  # "Mobile 07700 900123": a label and a country's trunk prefix; decimals ("0.2968") aside
            elif phonenumbers.is_possible_number(number):
                # Written in international form ("+1-555-123-4567"), a number of a phone's length is one,
                # whether or not its area code is assigned (the fictional 555 is not).
                ok = labelled or (grouped and raw.startswith("+"))
            else:
                self._reject(key)  # neither valid nor possible: no label would make it a phone number
                continue
            if ok:
                kind = K.FAX if _FAX_CONTEXT.search(before) else K.PHONE
                start = m.start() + (len(m.group()) - len(m.group().lstrip()))
                yield Finding(start=start, end=start + len(raw), kind=kind, text=raw, score=0.9, source="phonenumbers")

    @staticmethod
    def _valid_abroad(raw: str) -> bool:
        """A national number with a trunk prefix ("07700 900123"): valid in one of the countries whose mail is
        most often written to, tried after the analyzer's own region turned it down."""
        for region in _TRUNK_REGIONS:
            try:
                if phonenumbers.is_valid_number(phonenumbers.parse(raw, region)):
                    return True
            except phonenumbers.NumberParseException:
                return False
        return False

    def _reject(self, key: bytes) -> None:
        if not self._remember:
            return
        if len(self._rejected) >= self._remember:
            self._rejected.popitem(last=False)
        self._rejected[key] = None


_NOT_DIGIT = re.compile(r"\D")
# A candidate's characters up to its extension are digits, blanks, "(", ")", ".", "-" and a leading "+", seven at
# least (in the shape all of them "9" once these are); its extension adds blanks, digits and "x" or "ext.".
_PHONE_CORE = bytes.maketrans(b" \t().+-", b"9999999")
_SEVEN = b"9" * 7
_NOT_IN_PHONE = re.compile(rb"[^9 \t().+\-ext]")


def _phone_candidates(text: str, shape: bytes) -> Iterator[re.Match[str]]:
    """``_PHONE_CANDIDATE.finditer(text)``, scanned only over the runs of a candidate's characters (in the shape)
    that hold seven of its core's in a row (bytes.find), from there to the run's end and the character after it:
    a candidate starts where seven of them do, and no candidate crosses such a run's end."""
    mask = shape.translate(_PHONE_CORE)
    at = mask.find(_SEVEN)
    while at >= 0:
        stop = _NOT_IN_PHONE.search(shape, at)
        end = len(shape) if stop is None else stop.start()
        yield from _PHONE_CANDIDATE.finditer(text, at, min(len(text), end + 1))
        at = mask.find(_SEVEN, end)


_ISO_DATE_START = re.compile(r"(?:1[6-9]|20)\d\d([-/])(?:0[1-9]|1[0-2])\1(?:0[1-9]|[12]\d|3[01])(?!\d)")
# Regions whose numbers open with a trunk "0", tried for a number the analyzer's region turns down.
_TRUNK_REGIONS = ("GB", "DE", "FR", "IT", "ES", "NL", "IE", "AU", "IN", "TR", "RU", "PL", "SE", "CH", "AT", "BE")
_EXTENSION = re.compile(r"\s*(?:x|ext\.?)\s*\d{1,5}$")
_GROUPED_DIGITS = re.compile(r"(?:\+|00)?[\d().]*\d[\s().-]+\d[\d\s().-]*")


def zips(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    # A ZIP code's five digits start after no word character (_FIVE_DIGITS), and _ZIP_BEFORE ends in a blank, a tab
    # or ":" there: so the shape holds one of these before five digits (a fourth of the texts; 1 in 40 a ZIP code).
    if shape is not None and not (b" 99999" in shape or b"\t99999" in shape or b":99999" in shape):
        return
    for m in _FIVE_DIGITS.finditer(text):
        if _ZIP_BEFORE.search(text, max(0, m.start() - 20), m.start()):
            yield _f(m, K.ZIP, "ZIP after a state", 0.85, parts=(("zip", m.group()[:5]),))


def addresses(text: str, shape: bytes | None = None) -> Iterator[Finding]:
    for m in _ADDRESS.finditer(text):
        parts = tuple((k, v) for k in ("city", "state", "zip") if (v := m.group(k)))
        yield _f(m, K.ADDRESS, "street address", 0.85, parts=parts)
    for m in _PO_BOX.finditer(text):
        yield _f(m, K.ADDRESS, "post office box", 0.9)
    # A British or Canadian postcode names a few streets (no state-level part to keep, as a ZIP code's first
    # three digits are): found from its second half, a digit and two capitals ("1AA"), rare in other text.
    if shape is not None and b" 9AA" not in shape and b" 9A9" not in shape:
        return  # no blank, digit and two capitals (or capital and digit): no postcode's second half
    for m in _POSTCODE_INWARD.finditer(text):
        start = m.start()
        found = _UK_OUTWARD.search(text, max(0, start - 5), start) or _CA_FIRST.search(text, max(0, start - 4), start)
        if found is not None:
            yield Finding(start=found.start(), end=m.end(), kind=K.ADDRESS, text=text[found.start() : m.end()],
                          score=0.85, source="postcode")  # fmt: skip


_POSTCODE_INWARD = re.compile(r"\d(?<![\w]\d)(?:[ABD-HJLNP-UW-Z]{2}|[A-Z]\d)(?![\w])")
_UK_OUTWARD = re.compile(r"(?<![\w])[A-Z]{1,2}\d[A-Z\d]? \Z")
_CA_FIRST = re.compile(r"(?<![\w])[ABCEGHJ-NPRSTVXY]\d[A-Z] ?\Z")


def structured() -> tuple[tuple[frozenset[str], Recognizer], ...]:
    """The recognizers of structured identifiers, with the kinds each produces (one set for each analyzer: the
    phone recognizer remembers what it turned down)."""
    return tuple((kinds, Phones() if recognizer is phones else recognizer) for kinds, recognizer in STRUCTURED)


STRUCTURED: tuple[tuple[frozenset[str], Recognizer], ...] = (
    (frozenset({K.DATE}), dates),
    (frozenset({K.DURATION}), durations),
    (frozenset({K.AGE}), ages),
    (frozenset({K.QUANTITY}), quantities),
    (frozenset({K.EMAIL}), emails),
    (frozenset({K.URL}), urls),
    (frozenset({K.URL}), bare_urls),
    (frozenset({K.IP, K.DEVICE}), ips),
    (frozenset({K.SSN}), ssns),
    (frozenset({K.CARD}), cards),
    (frozenset({K.IBAN}), ibans),
    (frozenset({K.NATIONAL_ID}), national_ids),
    (
        frozenset({K.MRN, K.HEALTH_PLAN, K.ACCOUNT, K.LICENSE, K.VEHICLE, K.DEVICE, K.NATIONAL_ID, K.CODE}),
        labelled_numbers,
    ),
    (frozenset({K.PHONE, K.FAX}), phones),
    (frozenset({K.ZIP}), zips),
    (frozenset({K.ADDRESS}), addresses),
)
