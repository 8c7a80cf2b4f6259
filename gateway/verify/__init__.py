"""The last check before anything leaves: the raw output, searched for every name of every entity.

It is the guarantee; the extractors are the means. It shares no code with
them: it parses the output itself (``layers``), at every layer, and searches
each view for the entities' names (``needles``). A hit names the term, the
part and the location; the pipeline (``verify_output``) raises it as
``TraceFoundError``, and the message is held.
"""

from __future__ import annotations

from gateway.verify.layers import OPAQUE_HEADERS, Bounds, View, views
from gateway.verify.needles import Hit, Needles

__all__ = ["OPAQUE_HEADERS", "Bounds", "Hit", "Needles", "View", "find_trace", "views"]


DEFAULT_BOUNDS = Bounds()


def find_trace(
    data: bytes, kind: str, needles: Needles, *, part: str, bounds: Bounds = DEFAULT_BOUNDS
) -> tuple[View, Hit] | None:
    for view in views(data, kind, part=part, bounds=bounds):
        hit = needles.find(view.text, strict=view.binary)
        if hit is not None:
            return view, hit
    return None
