"""The last check before anything leaves: the raw output, searched for every name of every entity.

It is the guarantee; the extractors are the means. It shares no code with
them: it parses the output itself (``layers``), at every layer, and searches
each view for the entities' names (``needles``). A hit names the term, the
part and the location; the pipeline (``verify_output``) raises it as
``TraceFoundError``, and the message is held. For rewritten mail the
pipeline's own check reads the verifier's parse after the verifier has
walked it (``pipeline.check_and_verify``): the other way round never.
"""

from __future__ import annotations

from email.message import Message

from gateway.verify.layers import OPAQUE_HEADERS, Bounds, View, parse_mail, views
from gateway.verify.needles import Hit, Needles

__all__ = ["OPAQUE_HEADERS", "Bounds", "Hit", "Needles", "View", "find_trace", "parse_mail", "views"]


DEFAULT_BOUNDS = Bounds()


def find_trace(
    data: bytes,
    kind: str,
    needles: Needles,
    *,
    part: str,
    bounds: Bounds = DEFAULT_BOUNDS,
    parsed: Message | None = None,
) -> tuple[View, Hit] | None:
    """``parsed``: ``parse_mail(data)``, made by the caller to share with a reader that walks it after this one."""
    for view in views(data, kind, part=part, bounds=bounds, parsed=parsed):
        hit = needles.find(view.text, strict=view.binary)
        if hit is not None:
            return view, hit
    return None
