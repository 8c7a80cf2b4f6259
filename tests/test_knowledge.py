"""K and the information measures, against counts made by hand on TINY_CORPUS."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.errors import IndexFormatError
from gateway.knowledge.index_format import decode_gaps, encode_gaps
from gateway.knowledge.local import LocalIndex
from gateway.model.knowledge import Estimator


def test_counts_documents_not_occurrences(tiny_index: LocalIndex) -> None:
    assert tiny_index.n_docs == 8
    assert tiny_index.df("hiv") == 3  # d1 d2 d3
    assert tiny_index.df("clinic") == 4  # d1 d2 d4 d5
    assert tiny_index.count([{"hiv"}, {"clinic"}]) == 2  # d1 d2
    assert tiny_index.count([{"hiv"}, {"clinic"}, {"antiretroviral"}]) == 2


def test_lemmatizes_plurals_and_counts_phrases(tiny_index: LocalIndex) -> None:
    # "Blood transfusions" (d7) and "blood transfusion" (d6) are one term.
    assert tiny_index.df("blood transfusion") == 2
    assert tiny_index.df("patient") == 4  # patient (d1, d6), patients (d4, d5)
    assert tiny_index.df("los angeles") == 3
    assert "los angeles" in tiny_index.phrases()


def test_alternatives_count_as_a_union(tiny_index: LocalIndex) -> None:
    assert tiny_index.count([{"influenza", "asthma"}]) == 2
    assert tiny_index.count([{"hiv", "football"}, {"los angeles"}]) == 2  # d3 d8


def test_unknown_terms_count_zero(tiny_index: LocalIndex) -> None:
    assert tiny_index.df("zidovudine") == 0
    assert tiny_index.count([{"hiv"}, {"zidovudine"}]) == 0


def test_ic_and_pmi_match_hand_computation(tiny_index: LocalIndex) -> None:
    est = Estimator(prior_weight=0.0, min_support=1)
    # IC(t) = -log p(t), add-one: p = (3 + 1) / (8 + 1)
    assert est.ic(tiny_index, 3) == pytest.approx(-math.log(4 / 9))
    # PMI(hiv; antiretroviral) = log(p(c,t) / p(c)p(t)) = log((3/8) / (3/8 * 3/8)) = log(8/3)
    n_c, n_t = tiny_index.df("hiv"), tiny_index.df("antiretroviral")
    n_ct = tiny_index.count([{"hiv"}, {"antiretroviral"}])
    assert (n_c, n_t, n_ct) == (3, 3, 3)
    assert est.pmi(tiny_index, n_c, n_t, n_ct) == pytest.approx(math.log(8 / 3))
    assert est.raw_pmi(tiny_index, n_c, n_t, n_ct) == pytest.approx(math.log(8 / 3))
    # When t always co-occurs with c, PMI = IC(c) (the paper's unequivocal case).
    assert est.raw_pmi(tiny_index, n_c, n_t, n_ct) == pytest.approx(-math.log(n_c / tiny_index.n_docs))


def test_smoothing_keeps_a_single_cooccurrence_below_ic(tiny_index: LocalIndex) -> None:
    est = Estimator(prior_weight=10.0, min_support=1)
    ic_c = -math.log(1 / 1000)

    class Big:
        n_docs = 1000

    raw = est.raw_pmi(Big(), 1, 1, 1)  # type: ignore[arg-type]
    smoothed = est.pmi(Big(), 1, 1, 1)  # type: ignore[arg-type]
    assert raw == pytest.approx(ic_c)
    assert smoothed < 0.75 * ic_c
    # With plenty of evidence the estimate converges to the plain ratio.
    assert est.pmi(Big(), 10, 500, 10) == pytest.approx(est.raw_pmi(Big(), 10, 500, 10), abs=0.05)  # type: ignore[arg-type]


@given(st.lists(st.integers(min_value=0, max_value=2**31), unique=True, max_size=300))
def test_gap_coding_round_trips(ids: list[int]) -> None:
    arr = np.array(sorted(ids), dtype=np.uint32)
    assert decode_gaps(encode_gaps(arr)).tolist() == arr.tolist()


def test_rejects_files_that_are_not_indexes(tmp_path: Path) -> None:
    bogus = tmp_path / "x.sgidx"
    bogus.write_bytes(b"PK\x03\x04 not an index")
    with pytest.raises(IndexFormatError, match="not a sanigate index"):
        LocalIndex(bogus)
    truncated = tmp_path / "t.sgidx"
    truncated.write_bytes(b"SGIDX1\n\x10\x00\x00\x00{")
    with pytest.raises(IndexFormatError):
        LocalIndex(truncated)
