"""A run's results as the paper shows them: Markdown tables shaped like its Tables 1 and 2, JSON, PNG plots."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from gateway.evaluation.metrics import Scores, mean_scores
from gateway.evaluation.runner import Report


def _pct(x: float) -> str:
    return f"{x:.1f} %"


def _cells(s: Scores) -> str:
    """P | R | F, or dashes when the gold marks nothing there: no score is not a perfect score."""
    if not s.gold:
        return "– | – | –"
    return f"{_pct(s.precision)} | {_pct(s.recall)} | {_pct(s.f_measure)}"


def _mean_cells(scores: list[Scores]) -> str:
    scored = [s for s in scores if s.gold]
    if not scored:
        return "– | – | –"
    m = mean_scores(scored)
    return f"{_pct(m.precision)} | {_pct(m.recall)} | {_pct(m.f_measure)}"


def scored_anything(report: Report) -> bool:
    return any(report.summed(a, "token", ann).gold for a in report.alphas for ann in report.annotators)


def markdown(report: Report) -> str:
    out = [f"# sanigate eval: {report.dataset}", ""]
    docs = sorted({r.doc_id for r in report.results})
    unknown = sorted({r.doc_id for r in report.results if not r.known})
    warned = sorted({r.doc_id for r in report.results if r.warned})
    out.append(f"{len(docs)} documents, α = {', '.join(f'{a:g}' for a in report.alphas)}; "
               f"{len(warned)} with an entity K barely knows (sanitized with a warning: its names and word forms "
               f"only); {len(unknown)} refused (nothing sanitized; counted in utility and attack, left out of "
               "precision and recall).")  # fmt: skip
    out += ["", f"Pipeline: {report.pipeline}.", ""]
    if report.annotators:
        out += ["## Detection accuracy (eq. 4-6), all documents pooled", "",
                "| α | annotator | token P | token R | token F | term P | term R | term F |",
                "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for a in report.alphas:
            for ann in report.annotators:
                t, m = report.summed(a, "token", ann), report.summed(a, "term", ann)
                out.append(f"| {a:g} | {ann} | {_cells(t)} | {_cells(m)} |")
            tokens = [report.summed(a, "token", ann) for ann in report.annotators]
            terms = [report.summed(a, "term", ann) for ann in report.annotators]
            out.append(f"| {a:g} | **mean** | {_mean_cells(tokens)} | {_mean_cells(terms)} |")
        if not scored_anything(report):
            out += ["", "**Nothing could be scored**: no document has both an entity K knows and a gold span "
                    "(– is no score, not a perfect one)."]  # fmt: skip
        out += ["", "## Table 1 shape: per entity (token level, mean of annotators)", "",
                "| Entity / document | Model instantiation | Precision | Recall | F-measure |",
                "|---|---|---|---|---|"]  # fmt: skip
        for doc in docs:
            for r in [r for r in report.results if r.doc_id == doc]:
                if not r.known:
                    continue
                cells = _mean_cells([r.token[a] for a in report.annotators if a in r.token])
                out.append(f"| {doc} | ({r.alpha:g}, {r.entity})-sanitized | {cells} |")
        out.append("")
    out += ["## Table 2 shape: utility preservation (eq. 8)", "",
            "| Entity / document | Model instantiation | Redaction | Sanitization |", "|---|---|---|---|"]  # fmt: skip
    for doc in docs:
        for r in [r for r in report.results if r.doc_id == doc]:
            out.append(f"| {doc} | ({r.alpha:g}, {r.entity})-sanitized | {_pct(r.utility_redaction)} | "
                       f"{_pct(r.utility_sanitization)} |")  # fmt: skip
    out += ["", "Mean over documents:", "", "| α | redaction | sanitization |", "|---|---|---|"]
    for a in report.alphas:
        out.append(f"| {a:g} | {_pct(report.utility(a, 'redaction'))} | {_pct(report.utility(a, 'sanitization'))} |")
    out += ["", "## What the gateway would send (sanitization mode)", "",
            "A failure is a text the gateway would hold: its own last check still finds a flagged term "
            "(residual-risk), or the entity is refused (unknown-entity).", "",
            "| α | failures | words redacted |", "|---|---|---|"]  # fmt: skip
    for a in report.alphas:
        failed = report.failures(a)
        names = ", ".join(f"{r.doc_id} ({r.failure})" for r in failed)
        out.append(f"| {a:g} | {len(failed)} of {len(report.at(a, known_only=False))}{': ' + names if names else ''} | "
                   f"{_pct(report.redacted_share(a))} |")  # fmt: skip
    for attacker in report.attackers if report.baselines else ():
        out += ["", f"## Disclosure to an attacker ({attacker}, {len(report.candidates)} candidate entities)", "",
                "Rank of the true entity among the candidates (1 = the attacker names it), mean over documents, "
                "and the share of documents where it comes first. A held text counts as the original.", "",
                "| text the attacker reads | mean rank | ranked first |", "|---|---|---|"]  # fmt: skip
        rows: list[tuple[str, tuple[float, float] | None]] = [
            ("original", report.attack(None, "original", attacker)),
            ("entity name removed (naive)", report.attack(None, "naive", attacker)),
        ]
        for a in report.alphas:
            rows.append((f"sanitized, α = {a:g}", report.attack(a, "sanitized", attacker)))
            rows.append((f"redacted, α = {a:g}", report.attack(a, "redacted", attacker)))
        for label, v in rows:
            if v is not None:
                out.append(f"| {label} | {v[0]:.2f} | {_pct(v[1])} |")
    return "\n".join(out) + "\n"


def as_json(report: Report) -> dict[str, Any]:
    summary: dict[str, Any] = {"by_alpha": []}
    for a in report.alphas:
        row: dict[str, Any] = {"alpha": a, "utility_redaction": report.utility(a, "redaction"),
                               "utility_sanitization": report.utility(a, "sanitization")}  # fmt: skip
        for level in ("token", "term"):
            per = {ann: report.summed(a, level, ann) for ann in report.annotators}
            row[level] = {ann: {"precision": s.precision if s.gold else None, "recall": s.recall if s.gold else None,
                                "f": s.f_measure if s.gold else None,
                                "tp": s.true_positives, "detected": s.detected, "gold": s.gold}
                          for ann, s in per.items()}  # fmt: skip
            if any(s.gold for s in per.values()):
                m = report.mean(a, level)
                row[level]["mean"] = {"precision": m.precision, "recall": m.recall, "f": m.f_measure}
        row["failures"] = [{"doc": r.doc_id, "failure": r.failure} for r in report.failures(a)]
        row["redacted_words_percent"] = report.redacted_share(a)
        for attacker in report.attackers:
            for stage in ("sanitized", "redacted"):
                v = report.attack(a, stage, attacker)
                if v is not None:
                    row.setdefault(f"attack_{stage}", {})[attacker] = {"mean_rank": v[0], "first_percent": v[1]}
        summary["by_alpha"].append(row)
    for attacker in report.attackers:
        for stage in ("original", "naive"):
            v = report.attack(None, stage, attacker)
            if v is not None:
                summary.setdefault(f"attack_{stage}", {})[attacker] = {"mean_rank": v[0], "first_percent": v[1]}
    return {
        "dataset": report.dataset,
        "pipeline": report.pipeline,
        "alphas": list(report.alphas),
        "candidates": list(report.candidates),
        "annotators": list(report.annotators),
        "attackers": list(report.attackers),
        "summary": summary,
        "documents": [asdict(r) for r in report.results],
        "attack_baselines": {k: asdict(v) for k, v in report.baselines.items()},
    }


def plots(report: Report, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[Path] = []
    alphas = list(report.alphas)
    if report.annotators:
        fig, ax = plt.subplots(figsize=(6, 4))
        for level, style in (("token", "-"), ("term", "--")):
            means = [report.mean(a, level) for a in alphas]
            for name, key, color in (("precision", "precision", "#4e79a7"), ("recall", "recall", "#e15759"),
                                     ("F", "f_measure", "#59a14f")):  # fmt: skip
                ax.plot(alphas, [getattr(m, key) for m in means], style, marker="o", color=color,
                        label=f"{name} ({level})")  # fmt: skip
        ax.set(xlabel="α", ylabel="%", ylim=(0, 105), title=f"Detection against the gold standard: {report.dataset}")
        ax.legend(fontsize=8, ncol=2)
        ax.grid(alpha=0.3)
        written.append(_save(fig, out / "accuracy.png"))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(alphas, [report.utility(a, "redaction") for a in alphas], marker="o", color="#e15759", label="redaction")
    ax.plot(alphas, [report.utility(a, "sanitization") for a in alphas], marker="o", color="#4e79a7",
            label="sanitization (generalization)")  # fmt: skip
    ax.set(xlabel="α", ylabel="utility preserved (eq. 8), %", ylim=(0, 105), title=f"Utility: {report.dataset}")
    ax.legend()
    ax.grid(alpha=0.3)
    written.append(_save(fig, out / "utility.png"))
    if report.baselines:
        fig, ax = plt.subplots(figsize=(6, 4))
        colors = ("#4e79a7", "#e15759", "#59a14f", "#f28e2b")
        for i, attacker in enumerate(report.attackers):
            color = colors[i % len(colors)]
            orig = report.attack(None, "original", attacker)
            if orig is not None:
                ax.axhline(orig[1], color=color, linestyle=":", label=f"original ({attacker})")
            san = [report.attack(a, "sanitized", attacker) for a in alphas]
            ax.plot(alphas, [v[1] if v else 0 for v in san], marker="o", color=color, label=f"sanitized ({attacker})")
        ax.set(xlabel="α", ylabel="documents whose entity the attacker ranks first, %", ylim=(0, 105),
               title=f"Attackers ({len(report.candidates)} candidates): {report.dataset}")  # fmt: skip
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        written.append(_save(fig, out / "attacker.png"))
    return written


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write(report: Report, out: Path, *, with_plots: bool = True) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "results.md", out / "results.json"
    md.write_text(markdown(report), encoding="utf-8")
    js.write_text(json.dumps(as_json(report), indent=1) + "\n", encoding="utf-8")
    return [md, js, *(plots(report, out) if with_plots else [])]
