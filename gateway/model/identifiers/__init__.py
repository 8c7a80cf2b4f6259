"""Identifiers: names, dates, numbers and addresses, found and replaced by kind.

The analyzer finds (``Analyzer.analyze``), the anonymizer decides what each
finding becomes (``anonymize``), and ``sanitize_text`` runs both before the
(alpha, C) engine for a policy that lists identifier kinds.
"""

from gateway.model.identifiers.analyzer import Analyzer
from gateway.model.identifiers.anonymizer import AddressLevel, Replacement, anonymize
from gateway.model.identifiers.finding import Finding
from gateway.model.identifiers.kinds import ALL_KINDS, GROUPS, SAFE_HARBOR, TAB_CATEGORY, resolve_kinds
from gateway.model.identifiers.names import Lexicon, NameRecognizer, WordClass
from gateway.model.identifiers.stage import IdentifierPass, remove_identifiers, residual_identifiers, sanitize_text

__all__ = [
    "ALL_KINDS",
    "GROUPS",
    "SAFE_HARBOR",
    "TAB_CATEGORY",
    "AddressLevel",
    "Analyzer",
    "Finding",
    "IdentifierPass",
    "Lexicon",
    "NameRecognizer",
    "Replacement",
    "WordClass",
    "anonymize",
    "remove_identifiers",
    "residual_identifiers",
    "resolve_kinds",
    "sanitize_text",
]
