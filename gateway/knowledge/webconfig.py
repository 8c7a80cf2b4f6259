"""What configures K from hit counts: plain data, so the configuration can hold it without loading the client."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True, kw_only=True)
class WebCountConfig:
    endpoint: str
    total_docs: int  # N: documents the service searches (p(t) = count / N)
    count_path: str  # "count" (Elasticsearch), "webPages.totalEstimatedMatches" (Bing)
    method: str = "GET"
    query_param: str = "q"  # GET: the parameter holding the query
    params: Mapping[str, str] = field(default_factory=dict)  # GET: fixed extra parameters
    body: str = ""  # POST: a JSON template; {query} is replaced by the query as a JSON string
    headers: Mapping[str, str] = field(default_factory=dict)  # values may hold ${ENV_VAR}
    term: str = '"{term}"'
    any_of: str = " OR "
    all_of: str = " AND "
    missing_is_zero: bool = True  # a reply without the count path means no match (Bing omits webPages)
    timeout: float = 10.0
    retries: int = 3
    backoff: float = 0.5  # seconds, doubled at each retry
    rate: float = 5.0  # calls a second at most, across threads
    cache: Path | None = None
    cache_days: float = 30.0
    min_support: int = 3

    def query(self, conjuncts: Sequence[Collection[str]]) -> str:
        parts = []
        for alternatives in conjuncts:
            terms = [self.term.replace("{term}", t) for t in sorted(alternatives)]
            parts.append(terms[0] if len(terms) == 1 else "(" + self.any_of.join(terms) + ")")
        return self.all_of.join(parts)
