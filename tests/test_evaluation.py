"""The evaluation: the paper's measures on cases worked by hand, the attacker on hand-made vectors, and a run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.errors import InputError
from gateway.evaluation.attacker import EmbeddingAttacker, WordVectors, naive_removal
from gateway.evaluation.datasets import EvalDocument, span_annotation, span_documents
from gateway.evaluation.metrics import (
    Scores,
    mean_scores,
    rank_of,
    term_scores,
    token_scores,
)
from gateway.evaluation.report import as_json, markdown, write
from gateway.evaluation.runner import evaluate
from gateway.model.engine import Engine
from gateway.model.records import Utility


def test_precision_recall_f_by_hand() -> None:
    s = Scores(true_positives=3, detected=4, gold=6)
    assert s.precision == 75.0 and s.recall == 50.0 and s.f_measure == pytest.approx(60.0)
    assert Scores(0, 0, 5).precision == 100.0 and Scores(0, 0, 5).recall == 0.0 and Scores(0, 0, 5).f_measure == 0
    assert Scores(1, 2, 3) + Scores(2, 2, 1) == Scores(3, 4, 4)


def test_token_and_term_level_by_hand() -> None:
    # "The HIV test was negative": tokens 0-3, 4-7, 8-12, 13-16, 17-25
    tokens = [(0, 3), (4, 7), (8, 12), (13, 16), (17, 25)]
    gold = [False, True, True, False, False]
    s = token_scores(tokens, gold, detected_spans=[(4, 7), (17, 25)])
    assert (s.true_positives, s.detected, s.gold) == (1, 2, 2)
    t = term_scores({"hiv", "negative", "clinic"}, {"hiv", "test", "clinic", "virus"})
    assert (t.true_positives, t.detected, t.gold) == (2, 3, 4)
    assert t.precision == pytest.approx(200 / 3) and t.recall == 50.0 and t.f_measure == pytest.approx(400 / 7)


def test_mean_over_annotators_utility_and_rank() -> None:
    m = mean_scores([Scores(1, 2, 4), Scores(3, 4, 4)])  # P 50 and 75, R 25 and 75
    assert m.precision == 62.5 and m.recall == 50.0
    assert m.f_measure == pytest.approx((2 * 50 * 25 / 75 + 75) / 2)
    assert Utility(10.0, 7.5).preservation == 75.0 and Utility(0.0, 0.0).preservation == 100.0
    assert rank_of({"a": 0.9, "b": 0.5, "c": 0.5}, "b") == 2  # a tie does not push the truth down
    assert rank_of({"a": 0.9, "b": 0.5}, "a") == 1


def test_span_gold_becomes_token_labels(tmp_path: Path) -> None:
    ann = span_annotation("ann", "The HIV test, again", [[4, 7], [8, 10]])
    assert ann.tokens == ((0, 3), (4, 7), (8, 12), (14, 19)) and ann.masked == (False, True, True, False)
    with pytest.raises(InputError, match="outside the document"):
        span_annotation("ann", "short", [[2, 40]])
    (tmp_path / "d1.txt").write_text("The HIV clinic.", encoding="utf-8")
    (tmp_path / "g.json").write_text(json.dumps({"d1": [[4, 7]]}), encoding="utf-8")
    (doc,) = span_documents(tmp_path, [tmp_path / "g.json"], {"*": "HIV"})
    assert doc.entity == "HIV" and doc.annotations[0].annotator == "g" and sum(doc.annotations[0].masked) == 1
    with pytest.raises(InputError, match="no entity"):
        span_documents(tmp_path, [tmp_path / "g.json"], {"other": "HIV"})


def _vectors() -> WordVectors:
    # Two topics in three dimensions: a disease and its vector, a city and its state.
    words = ["the", "malaria", "mosquito", "parasite", "atlanta", "georgia", "city", "tom", "cruise"]
    v = np.array([[0.1, 0.1, 0.1], [1, 0, 0], [0.9, 0.1, 0], [0.8, 0.2, 0], [0, 1, 0], [0.1, 0.9, 0],
                  [0.2, 0.7, 0.1], [0, 0, 1], [0.1, 0, 0.9]], dtype=np.float32)  # fmt: skip
    return WordVectors.from_ranked(words, v)


def test_the_attacker_follows_related_words_not_only_names() -> None:
    attacker = EmbeddingAttacker(_vectors(), top=1)
    assert rank_of(attacker.scores("Bitten by a mosquito; a parasite.", ["malaria", "Atlanta"]), "malaria") == 1
    assert rank_of(attacker.scores("A city in Georgia.", ["malaria", "Atlanta"]), "Atlanta") == 1
    s = attacker.scores("Malaria, again.", ["malaria", "Atlanta", "unknownword"])
    assert s["malaria"] == pytest.approx(1.0) and s["unknownword"] == -1.0
    assert attacker.scores("[REDACTED] the", ["malaria"]) == {"malaria": -1.0}  # nothing left to read
    assert naive_removal("Tom Cruise met TOM CRUISE; Cruiser.", "Tom Cruise") == " met ; Cruiser."


@pytest.mark.slow
def test_a_run_end_to_end(engine: Engine, tmp_path: Path) -> None:
    text = ("She had an HIV test at the clinic. Her antiretroviral therapy started in Los Angeles. "
            "The weather was fine.")  # fmt: skip
    start = text.index("antiretroviral therapy")
    gold = span_annotation("a1", text, [[11, 14], [start, start + len("antiretroviral therapy")]])
    docs = [EvalDocument("d1", "HIV", text, (gold,)), EvalDocument("d2", "Zzyzxqqq", "Nothing here at all.", ())]
    attacker = EmbeddingAttacker(_vectors())
    report = evaluate(engine, docs, [1.0, 2.0], dataset="tiny", attackers={"GloVe": attacker})
    assert report.candidates == ("HIV", "Zzyzxqqq") and report.annotators == ("a1",)
    d1 = [r for r in report.results if r.doc_id == "d1"]
    assert [r.alpha for r in d1] == [1.0, 2.0] and all(r.known for r in d1)
    unknown = [r for r in report.results if r.doc_id == "d2"]
    # K does not know it: sanitized (its names only) with a warning, not refused
    assert all(r.known and r.warned and r.failure is None for r in unknown)
    assert all(r.utility_sanitization == 100.0 for r in unknown)
    strict = d1[1]
    assert strict.token["a1"].true_positives >= 1  # "HIV" is masked by the annotator and flagged by sanigate
    assert strict.term["a1"].gold == 3  # "hiv", "antiretroviral", "therapy"
    assert report.summed(2.0, "token", "a1") == strict.token["a1"]  # d2 has no gold, d1 is all there is
    assert strict.utility_sanitization >= strict.utility_redaction
    md = markdown(report)
    assert "(2, HIV)-sanitized" in md and "| Redaction | Sanitization |" in md and "mean rank" in md
    data = as_json(report)
    assert data["summary"]["by_alpha"][1]["token"]["a1"]["tp"] == strict.token["a1"].true_positives
    written = write(report, tmp_path / "out")
    pngs = [p for p in written if p.suffix == ".png"]
    assert {p.name for p in pngs} == {"accuracy.png", "utility.png", "attacker.png"}
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


@pytest.mark.slow
def test_the_eval_command_on_span_gold(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "n1.txt").write_text("The patient had an HIV test and antiretroviral therapy.", encoding="utf-8")
    (tmp_path / "ann1.json").write_text(json.dumps({"n1": [[19, 22], [32, 46]]}), encoding="utf-8")
    (tmp_path / "ann2.json").write_text(json.dumps({"n1": [[19, 22]]}), encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "gateway.cli", "eval", "spans", "--docs", str(docs), "--gold",
                        str(tmp_path / "ann1.json"), "--gold", str(tmp_path / "ann2.json"), "--entity", "HIV",
                        "--alpha", "1.5", "--no-attacker", "--no-plots", "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"data: documents: {docs}; gold: {tmp_path / 'ann1.json'}" in r.stderr  # it says what it reads
    assert "data: K: the index shipped with sanigate" in r.stderr
    assert "| 1.5 | ann1 |" in r.stdout and "| 1.5 | ann2 |" in r.stdout and "| 1.5 | **mean** |" in r.stdout
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["annotators"] == ["ann1", "ann2"] and data["summary"]["by_alpha"][0]["token"]["ann2"]["gold"] == 1


def test_the_sentence_attacker_runs_all_minilm_as_sentence_transformers_does() -> None:
    from gateway.evaluation.sentence_attacker import SentenceAttacker, load_minilm, passages

    model = load_minilm()
    e = model.embed(["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."])
    # sentence-transformers' own figure for this pair with all-MiniLM-L6-v2 is 0.7553
    assert float(e[0] @ e[1]) == pytest.approx(0.7553, abs=2e-3)
    assert float(e[0] @ e[2]) < 0.2
    attacker = SentenceAttacker(model)
    text = "Bitten by a mosquito, he had a fever from a parasite and took quinine. [REDACTED] spreads in the tropics."
    assert rank_of(attacker.scores(text, ["malaria", "Atlanta", "Protestantism"]), "malaria") == 1
    assert passages("[REDACTED] [REDACTED]") == []
    assert attacker.scores("[REDACTED]", ["malaria"]) == {"malaria": -1.0}
    # The same reading with the passages cut elsewhere: every word once, in order, the cuts moved by the offset.
    words = [f"w{i}" for i in range(400)]
    cut = passages(" ".join(words), offset=45)
    assert [len(c.split()) for c in cut] == [45, 180, 175] and " ".join(cut).split() == words
    assert passages(" ".join(words[:30]), offset=45) == passages(" ".join(words[:30]))
    later = attacker.shifted(45)
    assert later.offset == 45 and later.model is model and attacker.offset == 0
    assert later.scores(text, ["malaria"]) == attacker.scores(text, ["malaria"])  # one passage: the same reading
    long = " ".join([text] * 20)  # 16 words a copy once the marker is out: two passages at 0, three at 45
    assert len(passages(long)) == 2 and len(passages(long, offset=45)) == 3
    assert later.scores(long, ["malaria"]) != attacker.scores(long, ["malaria"])


_ABSTRACT = ("Scott Caan (born August 23, 1976) is an American actor. He stars with Alex O'Loughlin "
             "in the series Hawaii Five-0, filmed in Honolulu.")  # fmt: skip
# What an annotator protecting the actor would mask: his names, his birth date, his co-star, the show, the place.
_MASKED = {"Scott", "Caan", "August", "23", "1976", "Alex", "O'Loughlin", "Hawaii", "Five-0", "Honolulu"}


def _actor_xml(folder: Path) -> Path:
    """A dev-set file in its own format: two annotators' token labels over one abstract."""
    import re

    tokens = [(m.start(), m.group()) for m in re.finditer(r"[\w'-]+|[^\w\s]", _ABSTRACT)]
    labels = ["MASK" if tok in _MASKED else "O" for _off, tok in tokens]
    xml = (f"<doc>\n<title>Scott Caan</title>\n<originalabstract>{_ABSTRACT}</originalabstract>\n"
           f"<stanford_tokens>OrderedDict({tokens!r})</stanford_tokens>\n"
           f"<microlabels1>{labels!r}</microlabels1>\n<spacy_tokens>OrderedDict({tokens!r})</spacy_tokens>\n"
           f"<microlabels2>{labels!r}</microlabels2>\n</doc>\n")  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "actor_1.xml"
    path.write_text(xml, encoding="utf-8")
    return path


def test_the_actor_eval_runs_the_identifier_pass_before_the_model(engine: Engine, tmp_path: Path) -> None:
    from gateway.assemble import build_identifiers
    from gateway.evaluation.datasets import actors
    from gateway.evaluation.runner import hidden_spans
    from gateway.model.identifiers import remove_identifiers, resolve_kinds
    from gateway.model.records import SanitizePolicy

    _actor_xml(tmp_path)
    docs = actors(tmp_path)
    kinds = resolve_kinds(["safe-harbor"])
    analyzer = build_identifiers(engine)
    model = evaluate(engine, docs, [2.0], dataset="one")
    ids = evaluate(engine, docs, [1.0, 2.0], dataset="one", analyzer=analyzer, model=False, identifiers=kinds,
                   kinds_name="safe-harbor")  # fmt: skip
    both = evaluate(engine, docs, [2.0], dataset="one", analyzer=analyzer, identifiers=kinds, kinds_name="safe-harbor")
    assert (model.pipeline, ids.pipeline, both.pipeline) == (
        "model", "identifiers (safe-harbor)", "model + identifiers (safe-harbor)")  # fmt: skip
    m, i, b = (r.summed(2.0, "token", "annotator1") for r in (model, ids, both))
    assert m.gold == i.gold == b.gold == len(_MASKED)
    # The date and the co-star are identifiers, which the model alone does not tie to the actor.
    assert i.true_positives >= 5 and i.true_positives > m.true_positives
    assert b.true_positives >= max(m.true_positives, i.true_positives) and b.recall > m.recall
    # Without the model α changes nothing, and what an identifier replaced counts as lost utility.
    assert ids.summed(1.0, "token", "annotator1") == i
    assert ids.results[0].utility_sanitization < 100.0 and both.results[0].utility_sanitization < 100.0
    assert "Pipeline: model + identifiers (safe-harbor)." in markdown(both) and as_json(ids)["pipeline"] == ids.pipeline
    # A date generalized to its year hides the day, not the year: the year is not counted as hidden.
    text = "He was born on August 23, 1976."
    found = remove_identifiers(text, analyzer, SanitizePolicy(entities=(), identifiers=kinds))
    assert found.text == "He was born in 1976."
    assert {text[a:b] for a, b in hidden_spans(text, found.decisions)} == {"August", "23"}


def test_the_eval_command_takes_the_identifier_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gateway.cli import main

    _actor_xml(tmp_path / "actors")
    out = tmp_path / "out"
    assert main(["eval", "actors", str(tmp_path / "actors"), "--no-model", "--alpha", "2", "--no-attacker"]) == 1
    assert "--no-model: say which identifiers" in capsys.readouterr().err
    assert main(["eval", "actors", str(tmp_path / "actors"), "--identifiers", "safe-harbor", "--alpha", "2",
                 "--no-attacker", "--no-plots", "--out", str(out)]) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert "data: pipeline: identifiers safe-harbor, then the (alpha, C) model" in captured.err
    assert json.loads((out / "results.json").read_text())["pipeline"] == "model + identifiers (safe-harbor)"
    assert "| 2 | **mean** |" in captured.out
