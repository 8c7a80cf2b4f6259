"""The last check before anything leaves: the raw output, searched for every name of every entity.

It is the guarantee; the extractors are the means. It shares no code with
them: it parses the output itself (``layers``), at every layer, and searches
each view for the entities' names (``needles``). A hit raises
``TraceFoundError`` naming the term, the part and the location, and the
message is held.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from gateway.errors import TraceFoundError
from gateway.model.records import Entity
from gateway.verify.layers import OPAQUE_HEADERS, Bounds, View, views
from gateway.verify.needles import Hit, Needles

__all__ = ["OPAQUE_HEADERS", "Bounds", "Hit", "Needles", "View", "find_trace", "verify", "views"]


DEFAULT_BOUNDS = Bounds()


def find_trace(
    data: bytes, kind: str, needles: Needles, *, part: str, bounds: Bounds = DEFAULT_BOUNDS
) -> tuple[View, Hit] | None:
    for view in views(data, kind, part=part, bounds=bounds):
        hit = needles.find(view.text, strict=view.binary)
        if hit is not None:
            return view, hit
    return None


def verify(
    data: bytes,
    kind: str,
    entities: Iterable[Entity],
    *,
    part: str,
    is_plain_word: Callable[[str], bool],
    bounds: Bounds = DEFAULT_BOUNDS,
) -> None:
    """Raise ``TraceFoundError`` if any entity is still named anywhere in ``data``."""
    found = find_trace(data, kind, Needles(entities, is_plain_word=is_plain_word), part=part, bounds=bounds)
    if found is not None:
        view, hit = found
        raise TraceFoundError(term=hit.term, entity=hit.entity, part=view.part, location=view.location)
