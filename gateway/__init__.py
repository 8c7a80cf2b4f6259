"""sanigate: an SMTP gateway that sanitizes outgoing mail under the (alpha, C)-sanitized model.

The public API; everything else is internal and may change::

    from gateway import build_engine, SanitizePolicy
    engine = build_engine()
    result = engine.sanitize("Her HIV test ...", SanitizePolicy(entities=("HIV",), alpha=1.5))

Names are imported on first use, so that ``import gateway`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Engine": "gateway.model.engine",
    "SanitizePolicy": "gateway.model.records",
    "SanitizeResult": "gateway.model.records",
    "Decision": "gateway.model.records",
    "Entity": "gateway.model.records",
    "Knowledge": "gateway.model.knowledge",
    "Estimator": "gateway.model.knowledge",
    "Taxonomy": "gateway.model.taxonomy",
    "LocalIndex": "gateway.knowledge.local",
    "WordNet": "gateway.taxonomy.wordnet",
    "OrgTaxonomy": "gateway.taxonomy.org",
    "EngineConfig": "gateway.assemble",
    "build_engine": "gateway.assemble",
    "Config": "gateway.config",
    "load_config": "gateway.config",
    "Gateway": "gateway.serve",
    "SanigateError": "gateway.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gateway' has no attribute {name!r}")
    return getattr(import_module(module), name)
