"""The sanigate command, run as users run it: a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TEXT = (
    "The patient was diagnosed with HIV after an HIV test. She started antiretroviral therapy "
    "and her viral load is now undetectable.\n"
)


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *map(str, args)], capture_output=True, text=True, timeout=120
    )


def test_sanitize_writes_text_and_report(tmp_path: Path) -> None:
    src = tmp_path / "note.txt"
    src.write_text(TEXT, encoding="utf-8")
    out, report = tmp_path / "out.txt", tmp_path / "report.json"
    proc = run("sanitize", src, "--entity", "HIV", "--alpha", "1.5", "--out", out, "--report", report)
    assert proc.returncode == 0, proc.stderr
    sanitized = out.read_text(encoding="utf-8")
    assert "HIV" not in sanitized and "antiretroviral" not in sanitized
    rep = json.loads(report.read_text(encoding="utf-8"))
    assert set(rep) >= {"entities", "alpha", "mode", "utility", "decisions"}
    assert rep["alpha"] == 1.5 and rep["mode"] == "generalize"
    assert set(rep["utility"]) == {"original", "sanitized", "preservation"}
    for d in rep["decisions"]:
        assert set(d) >= {"term", "entity", "pmi", "threshold", "ic_term", "action", "replacement", "group", "spans"}
        assert d["action"] in ("generalize", "redact")
        for start, end in d["spans"]:
            assert TEXT[start:end].lower().startswith(d["term"].lower()[:3])


def test_an_entity_k_does_not_know_is_sanitized_with_a_warning(tmp_path: Path) -> None:
    src = tmp_path / "note.txt"
    src.write_text("Qwxzyv Plorbnik was here. " + TEXT, encoding="utf-8")
    report = tmp_path / "report.json"
    proc = run("sanitize", src, "-e", "Qwxzyv Plorbnik", "--report", report)
    assert proc.returncode == 0, proc.stderr
    assert "Qwxzyv" not in proc.stdout and "Plorbnik" not in proc.stdout
    assert "document(s) of the knowledge source" in json.loads(report.read_text())["entities"][0]["warning"]


def test_sanitize_to_stdout(tmp_path: Path) -> None:
    src = tmp_path / "note.txt"
    src.write_text(TEXT, encoding="utf-8")
    proc = run("sanitize", src, "-e", "HIV", "--mode", "redact")
    assert proc.returncode == 0
    assert "[REDACTED]" in proc.stdout and "HIV" not in proc.stdout


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (b"", ("-e", "HIV"), "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ("-e", "HIV"), "binary"),
        (b"caf\xe9 au lait", ("-e", "HIV"), "not UTF-8"),
        (TEXT.encode(), ("-e", "HIV", "--alpha", "0.5"), "alpha must be"),
    ],
)
def test_bad_input_is_a_clear_error_not_a_traceback(
    tmp_path: Path, content: bytes, args: tuple[str, ...], message: str
) -> None:
    src = tmp_path / "in.txt"
    src.write_bytes(content)
    proc = run("sanitize", src, *args)
    assert proc.returncode == 1
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_missing_file(tmp_path: Path) -> None:
    proc = run("sanitize", tmp_path / "nope.txt", "-e", "HIV")
    assert proc.returncode == 1 and "cannot read" in proc.stderr and "Traceback" not in proc.stderr


def test_explain_shows_pmi_threshold_and_chain() -> None:
    proc = run("explain", "HIV", "--entity", "HIV", "--alpha", "1.5")
    assert proc.returncode == 0, proc.stderr
    assert "IC(c) =" in proc.stdout and "PMI(c;t) =" in proc.stdout and "threshold" in proc.stdout
    assert "<- chosen" in proc.stdout
    assert "RISKY" in proc.stdout


def test_index_build_and_use(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    docs = [
        {"title": "a", "text": "Gardens need water and sunlight for the tomato plants to grow well in summer."},
        {"title": "b", "text": "Tomato plants grow in gardens; gardeners water them every morning in summer."},
        {"title": "c", "text": "The train left the station at noon and reached the coast in the evening."},
    ]
    corpus.write_text("\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    idx = tmp_path / "k.sgidx"
    proc = run("index", "build", corpus, "--out", idx, "--min-df", "1", "--min-phrase-df", "1", "--workers", "1")
    assert proc.returncode == 0, proc.stderr
    assert "3 paragraphs" in proc.stdout
    info = run("index", "info", idx)
    assert json.loads(info.stdout)["n_docs"] == 3
    ex = run("explain", "tomato", "--entity", "garden", "--alpha", "1", "--index", idx)
    assert ex.returncode == 0, ex.stderr
    assert "in 2 documents of K" in ex.stdout


def test_sanitize_eml_docx_pdf(tmp_path: Path) -> None:
    from builders import make_docx, make_mail, make_pdf

    for name, data in (("m.eml", make_mail()), ("r.docx", make_docx()),
                       ("p.pdf", make_pdf(["The patient had an HIV test."]))):  # fmt: skip
        src, out, report = tmp_path / name, tmp_path / f"out-{name}", tmp_path / f"{name}.json"
        src.write_bytes(data)
        proc = run("sanitize", src, "-e", "HIV", "--out", out, "--report", report)
        assert proc.returncode == 0, proc.stderr
        assert out.read_bytes() != data
        rep = json.loads(report.read_text(encoding="utf-8"))
        assert rep["changed"] is True
        assert all(d["parts"] for d in rep["decisions"])
        assert {"part", "start", "end"} <= set(rep["decisions"][0]["parts"][0])


def test_encrypted_pdf_is_a_typed_error(tmp_path: Path) -> None:
    from builders import SAMPLES

    proc = run("sanitize", SAMPLES / "pdf/pdfminer/encryption/rc4-40.pdf", "-e", "HIV", "--out", tmp_path / "x.pdf")
    assert proc.returncode == 1
    assert "rc4-40.pdf" in proc.stderr and "encrypted" in proc.stderr.lower()
    assert "Traceback" not in proc.stderr


def test_hash_password_and_an_admin_without_users(tmp_path: Path) -> None:
    from gateway.admin.auth import verify_password

    made = subprocess.run([sys.executable, "-m", "gateway.cli", "hash-password"], input="a long passphrase\n",
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert made.returncode == 0 and verify_password("a long passphrase", made.stdout.strip())
    short = subprocess.run([sys.executable, "-m", "gateway.cli", "hash-password"], input="short\n",
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert short.returncode == 1 and "at least 10" in short.stderr
    config = tmp_path / "c.toml"
    config.write_text('[admin]\nlisten = "127.0.0.1:0"\n')
    r = run("admin", "--config", config)
    assert r.returncode == 1 and "no [[admin.users]]" in r.stderr and "Traceback" not in r.stderr
