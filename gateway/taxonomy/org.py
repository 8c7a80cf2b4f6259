"""An organisation's own taxonomy, asked before WordNet.

For the terms WordNet lacks: drug brands, local clinics, internal project
names. The file maps a term to its parent::

    [parents]
    "Truvada" = "antiretroviral drug"
    "antiretroviral drug" = "drug"
    "St. Mary's Clinic" = "clinic"

A chain follows parents until a term has none; WordNet then continues from
that last term (see ``ChainedTaxonomy``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

from gateway.errors import ConfigError
from gateway.model.taxonomy import Generalization, Sense
from gateway.model.terms import Lemmatizer, key_of

MAX_CHAIN = 32


class OrgTaxonomy:
    def __init__(self, parents: Mapping[str, str], *, lemmatize: Lemmatizer, source: str = "org") -> None:
        self._lemmatize = lemmatize
        self._source = source
        self._parent: dict[str, str] = {}
        self._display: dict[str, str] = {}
        for child, parent in parents.items():
            ck, pk = key_of(child, lemmatize), key_of(parent, lemmatize)
            if not ck or not pk or ck == pk:
                raise ConfigError(f"{source}: parents[{child!r}] = {parent!r} is not a usable pair of terms")
            self._parent[ck] = pk
            self._display.setdefault(ck, child)
            self._display.setdefault(pk, parent)
        for start in self._parent:  # reject cycles at load time, not at mail time
            seen = {start}
            k = start
            while k in self._parent:
                k = self._parent[k]
                if k in seen:
                    raise ConfigError(f"{source}: the parents of {self._display[start]!r} form a cycle")
                seen.add(k)

    @classmethod
    def load(cls, path: Path, *, lemmatize: Lemmatizer) -> OrgTaxonomy:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read taxonomy ({exc.strerror})") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML ({exc})") from exc
        parents = data.get("parents", {})
        if not isinstance(parents, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in parents.items()
        ):
            raise ConfigError(f"{path}: key 'parents' must be a table of term = \"parent term\"")
        return cls(parents, lemmatize=lemmatize, source=str(path))

    def terms(self) -> Iterable[str]:
        return self._display.values()

    def senses(self, term: str) -> list[Sense]:
        k = key_of(term, self._lemmatize)
        if k not in self._parent:
            return []
        name = self._display[k]
        return [Sense(id=f"org:{k}", lemmas=(name,), gloss=self._display[self._parent[k]], proper=name[:1].isupper())]

    def has_senses(self, term: str) -> bool:
        return key_of(term, self._lemmatize) in self._parent

    def other_senses(self, term: str) -> list[Sense]:
        return []  # an organisation's taxonomy names things

    def generalizations(self, term: str, sense: str | None = None) -> list[Generalization]:
        k = key_of(term, self._lemmatize)
        chain: list[Generalization] = []
        while k in self._parent and len(chain) < MAX_CHAIN:
            k = self._parent[k]
            chain.append(Generalization(term=self._display[k], source=f"org:{self._source}"))
        return chain
