"""A text in lower case, for the searches of one pass: each value's occurrences are searched for once.

The analyzer looks for every other occurrence of each value it found (``analyzer._recurrences``), and the pass
looks again for each replaced value in any case (``stage._in_other_case``): nearly the same values, over the
same text, one search in its own case and one in lower case. Each search runs over the whole text, and a message
holds about 17 values; the lower case answers both.
"""

from __future__ import annotations


class Lowered:
    """``text.lower()``, computed at its first use, and where each value stands in it. Kept for one text only:
    nothing of it outlives the pass."""

    __slots__ = ("_found", "_low", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._low: str | None = None
        self._found: dict[str, list[int]] = {}

    @property
    def low(self) -> str:
        if self._low is None:
            self._low = self.text.lower()
        return self._low

    def aligned(self) -> bool:
        """Whether each character is lowered alone, one for one: no letter whose lower case is longer ("İ"), and
        no capital sigma (its lower case depends on the letter after it). Then a value found at i in the text is
        found at i in the lower case, lowered as a string of its own."""
        return len(self.low) == len(self.text) and "\u03a3" not in self.text

    def where(self, value: str) -> list[int]:
        """Every start of ``value`` (in lower case) in the lower case, as str.find finds them one after another."""
        found = self._found.get(value)
        if found is None:
            low = self.low
            found = []
            i = low.find(value)
            while i >= 0:
                found.append(i)
                i = low.find(value, i + 1)
            self._found[value] = found
        return found
