"""Content types in and out: each extractor turns content into text segments and rebuilds it.

``process`` is the entry point: extract, decide once for the whole content, rebuild, verify.
"""

from __future__ import annotations

from extractors.limits import Limits
from extractors.mail import ContentPolicy
from extractors.pipeline import Outcome, detect_kind, process, process_file

__all__ = ["ContentPolicy", "Limits", "Outcome", "detect_kind", "process", "process_file"]
