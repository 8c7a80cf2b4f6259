"""The second source of relatedness: word vectors on the paper's scale (gateway/model/related.py),
the packaged GloVe vectors mapped (gateway/knowledge/vectors.py), and what the evidence does with it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gateway.assemble import build_engine
from gateway.config import parse_config
from gateway.knowledge.vectors import load_word_vectors
from gateway.model.engine import Engine
from gateway.model.records import Entity, SanitizePolicy
from gateway.model.related import Relatedness, Vector


class SmallVectors:
    """A handful of real unit vectors, with chance read from them as the packaged source reads its common words."""

    def __init__(self, table: dict[str, list[float]], common: tuple[str, ...] = ()) -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) / np.linalg.norm(v) for k, v in table.items()}
        self.common = common or tuple(self.table)

    def vector(self, key: str) -> Vector | None:
        found = [self.table[w] for w in key.split(" ") if w in self.table]
        if not found:
            return None
        v = np.mean(found, axis=0)
        return (v / np.linalg.norm(v)).astype(np.float32)

    def chance(self, v: Vector, quantile: float) -> float:
        return float(np.quantile(np.stack([self.table[w] for w in self.common]) @ v, quantile))


def _entity(name: str) -> Entity:
    return Entity(name=name, keys=frozenset({name}), n_docs=100, ic=8.0)


def test_c_itself_is_all_of_c_and_chance_is_nothing() -> None:
    vectors = SmallVectors({"malaria": [1, 0, 0], "mosquito": [0.9, 0.3, 0], "fever": [0.6, 0.8, 0],
                            "chair": [0, 0, 1], "table": [0, 0.2, 1], "window": [0.1, 0, 1]})  # fmt: skip
    rel = Relatedness(vectors, quantile=0.5)
    e = _entity("malaria")
    assert rel.share(frozenset({"malaria"}), e) == pytest.approx(1.0)
    near, mid, far = (rel.share(frozenset({w}), e) for w in ("mosquito", "fever", "chair"))
    assert 1.0 > near > mid > 0.0 == far
    # On the scale of PMI: a term as near as c discloses IC(c).
    assert rel.pmis(frozenset({"malaria"}), [e]) == pytest.approx((e.ic,))
    # A term written several ways counts as the nearest of them; an unknown word counts nothing.
    assert rel.share(frozenset({"chair", "mosquito"}), e) == pytest.approx(near)
    assert rel.share(frozenset({"sporozoite"}), e) == 0.0
    # A stricter notion of chance (a higher quantile of the common words) leaves less related.
    assert Relatedness(vectors, quantile=0.9).share(frozenset({"fever"}), e) < mid


def test_an_entity_the_source_does_not_know_relates_to_nothing() -> None:
    rel = Relatedness(SmallVectors({"a": [1, 0], "b": [0, 1]}))
    assert rel.share(frozenset({"a"}), _entity("zzz")) == 0.0


def test_the_packaged_vectors_are_mapped_and_read(tmp_path: Path) -> None:
    vectors = load_word_vectors(tmp_path)
    assert vectors is not None
    assert (tmp_path / "sanigate-glove-6b-50d.v1.sgmap").exists()
    malaria, mosquito, piano = (vectors.vector(w) for w in ("malaria", "mosquito", "piano"))
    assert malaria is not None and mosquito is not None and piano is not None
    assert float(np.linalg.norm(malaria)) == pytest.approx(1.0, abs=1e-5)
    assert float(malaria @ mosquito) > float(malaria @ piano)
    assert vectors.vector("the") is None and vectors.vector("qqqzzzxx") is None
    chance = vectors.chance(malaria, 0.99)
    assert float(malaria @ piano) < chance < float(malaria @ mosquito)
    # A second process finds the file made and maps it as it is.
    again = load_word_vectors(tmp_path)
    assert again is not None and np.array_equal(again.vector("malaria"), malaria)


MALARIA = SanitizePolicy(entities=("malaria",), alpha=2.0)
ABOUT = "Malaria is common in the region.\nThe doctor drove to the village on Monday."
PLAIN = "The doctor drove to the village on Monday."


@pytest.fixture(scope="module")
def vector_engine() -> Engine:
    """An engine whose second source says that "village" is all but malaria (and nothing else is)."""
    engine = build_engine()
    common = {w: [0.1 * i, 0.0, 1.0] for i, w in enumerate(("road", "chair", "music", "table", "window", "day"))}
    table = {"malaria": [1.0, 0.0, 0.0], "village": [0.95, 0.3, 0.0], **common}
    engine.evidence.related = Relatedness(SmallVectors(table, tuple(common)))
    return engine


def test_a_word_the_second_source_ties_to_c_is_generalized_in_a_text_about_c(vector_engine: Engine) -> None:
    engine = vector_engine
    entities = engine.entities_of(MALARIA)
    village = frozenset({engine.key("village")})
    # K alone does not tie the word to malaria; the vectors do, past the line.
    assert engine.evidence.pmis(village, entities)[0] < entities[0].ic / MALARIA.alpha
    assert engine.evidence.related_pmis(village, entities)[0] >= entities[0].ic / MALARIA.alpha
    on = engine.sanitize(ABOUT, MALARIA)
    off = engine.sanitize(ABOUT, replace(MALARIA, related_terms=False))
    (d,) = [d for d in on.decisions if d.term == "village"]
    assert "village" not in on.text and "village" in off.text
    # Generalized along its chain (never redacted), as evidence; the output is the engine's fixpoint.
    assert d.reason == "evidence" and d.action == "generalize" and d.replacement and d.replacement in on.text
    assert not engine.sanitize(on.text, MALARIA).decisions
    # A text that does not name malaria is judged from K alone.
    assert engine.sanitize(PLAIN, MALARIA).text == engine.sanitize(PLAIN, replace(MALARIA, related_terms=False)).text


def test_a_thread_that_named_c_brings_the_second_source_to_a_later_message(vector_engine: Engine) -> None:
    from gateway.model.memory import named_marker

    r = vector_engine.sanitize(PLAIN, MALARIA, disclosed=(named_marker("malaria"),))
    assert "village" not in r.text
    (d,) = [d for d in r.decisions if d.term == "village"]
    assert d.reason == "stream-evidence" and named_marker("malaria") in d.earlier


def test_related_terms_config_key() -> None:
    text = '[policies.p]\nentities = ["HIV"]\nrelated_terms = false\n[policies.q]\nentities = ["HIV"]\n'
    cfg = parse_config(text, source="t.toml", base=Path())
    assert cfg.policies["p"].sanitize.related_terms is False
    assert cfg.policies["q"].sanitize.related_terms is True
