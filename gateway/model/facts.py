"""Facts that single c out: a rank or an exact quantity in a paragraph that names c.

"The 34th-largest state by area, with a population of 11,799,448" names no
term K would flag once c's name is gone, yet a rank among a known set and an
exact count are as good as a name to anyone who can look them up. K cannot
judge them (numbers are not its terms), so they are coarsened by their form,
in the paragraphs that name c (a line, as K's paragraphs are): the text around
a name is about it, and a pronoun ("it is the seventh-most populous") carries
the fact as well as the name did.

  * a rank among superlatives ("the 34th-largest", "seventh-most populous")
    becomes membership ("one of the largest", "one of the most populous");
  * a quantity with three or more significant digits ("11,799,448", "498,715",
    "11.8 million") is rounded to one ("about 10,000,000", "about 500,000",
    "about 10 million"). Years (four digits, no separator) are left: they date,
    they do not count; a date is the identifier pass's (gateway/model/identifiers).

Every change is a decision (reason ``fact``), so the audit shows it and the
rebuilt output is checked like any other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

_ORDINAL_WORDS = (
    "second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
).split()
_ORDINAL = rf"(?:\d+(?:st|nd|rd|th)|{'|'.join(_ORDINAL_WORDS)})"
# "the 34th-largest", "seventh-most populous", "the 38th most populous": an ordinal before a superlative.
_RANK = re.compile(rf"\b(?:(?i:the)\s+)?(?i:{_ORDINAL})[-\s]+(?=(?i:most|least)\b|[A-Za-z]+est\b)")
# 498,715 / 11,799,448 / 11.8 (million) / 2.45 (billion): a count written as one. Not a year, and not a run of
# digits without separators (a code, a postcode, a number: the identifier pass's).
_QUANTITY = re.compile(
    r"(?<![\w.,/:-])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+(?=\s+(?:million|billion|thousand|trillion)\b))"
    r"(?!\w|[,.]\d|[/:-]\w)"
)
_ORDINAL_WORD = re.compile(rf"(?i:{_ORDINAL})")


def is_ordinal(word: str) -> bool:
    """ "second", "34th": a rank."""
    return _ORDINAL_WORD.fullmatch(word) is not None


_HEDGED = re.compile(r"(?i:about|around|approximately|nearly|almost|roughly|some|over|under|than)\s+$")


@dataclass(frozen=True, slots=True)
class Fact:
    start: int
    end: int
    text: str  # what it was
    replacement: str


def coarse(number: str) -> str | None:
    """``number`` rounded to one significant digit, written as it was (separators, decimals); None if it is."""
    digits = number.replace(",", "")
    try:
        value = float(digits)
    except ValueError:
        return None
    if value <= 0:
        return None
    significant = len(digits.replace(".", "").lstrip("0").rstrip("0") if "." in digits else digits.strip("0"))
    if significant < 3 and "." not in digits:
        return None
    magnitude = 10 ** math.floor(math.log10(value))
    rounded = round(value / magnitude) * magnitude
    if "." in digits and rounded >= 1:
        out = f"{rounded:.0f}"
    elif "." in digits:
        out = f"{rounded:.{max(0, -int(math.log10(magnitude)))}f}"
    else:
        out = f"{int(rounded):,}" if "," in number else f"{int(rounded)}"
    return None if out == number else out


def facts(text: str, paragraphs: Collection[int], paragraph: Callable[[int], int]) -> Iterator[Fact]:
    """The ranks and exact quantities of ``text`` in the given paragraphs, with what they become."""
    if not paragraphs:
        return
    for m in _RANK.finditer(text):
        if paragraph(m.start()) in paragraphs:
            yield Fact(m.start(), m.end(), m.group(), "one of the ")
    for m in _QUANTITY.finditer(text):
        if paragraph(m.start()) not in paragraphs:
            continue
        rounded = coarse(m.group(1))
        if rounded is None:
            continue
        hedged = _HEDGED.search(text, max(0, m.start() - 16), m.start()) is not None
        yield Fact(m.start(), m.end(), m.group(), rounded if hedged else f"about {rounded}")
