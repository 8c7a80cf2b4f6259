"""How much a TAB figure owes to which documents were scored: each document alone and a bootstrap over documents
(gateway/evaluation/tab.py ``bootstrap``, ``sanigate eval tab --bootstrap N``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.evaluation.metrics import Scores
from gateway.evaluation.tab import bootstrap


def test_the_interval_spans_what_the_documents_disagree_on() -> None:
    found_all, found_none = Scores(10, 10, 10), Scores(0, 4, 10)
    spread = bootstrap([found_all, found_none], resamples=4000, seed=3)
    # Two documents drawn twice: recall 1, 0.5 or 0, a quarter of the resamples each way at the ends.
    assert spread.recall == (0.0, 1.0) and spread.level == 0.9
    assert 0.70 < spread.recall_below_floor < 0.80
    assert spread.precision == (0.0, 1.0)
    alike = bootstrap([Scores(8, 10, 10)] * 5, resamples=50)
    assert alike.recall == (0.8, 0.8) and alike.precision == (0.8, 0.8) and alike.recall_below_floor == 1.0
    assert bootstrap([found_all, found_none], resamples=500, seed=1) == bootstrap(
        [found_all, found_none], resamples=500, seed=1
    )
    with pytest.raises(ValueError):
        bootstrap([], resamples=10)


def test_eval_tab_reports_each_document_and_the_bootstrap(tmp_path: Path) -> None:
    rows = [
        {"id": "x1", "text": "Ms Halvard Qvist moved to Trondheim on 9 June 1994.",
         "spans": [[0, 16, "PERSON"], [26, 35, "LOC"], [39, 50, "DATETIME"]]},
        {"id": "x2", "text": "The applicant was a night porter at the time.", "spans": [[20, 32, "DEM"]]},
    ]  # fmt: skip
    src = tmp_path / "tab.jsonl"
    src.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "gateway.cli", "eval", "tab", str(src), "--bootstrap", "300", "--out", str(tmp_path)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "results.json").read_text())
    alone = {d["id"]: d["recall"] for d in data["documents_alone"]}
    assert alone["x1"] == 1.0 and alone["x2"] == 0.0
    spread = data["bootstrap"]["gold"]
    assert spread["resamples"] == 300 and spread["recall"][0] < data["annotators"]["gold"]["recall"] < 1.0
    assert spread["recall"][1] == 1.0 and 0 < spread["recall_below_floor"] < 1
    assert "Bootstrap over documents (300 resamples" in r.stdout and "| x2 | gold | 0.000 |" in r.stdout
