"""How much of the identifier pass's work is on text a worker has already seen: the most a memo could save.

    nice -n 5 .venv/bin/python bench/identifier_reuse.py [--messages 2000] [--kinds safe-harbor] [--remember 20000]

A mailing list repeats whole blocks across messages (list footers, signatures, quoted replies, the style
attributes of an HTML mail). If the findings of a block could be remembered, the recognizers would only read
blocks not seen before. This measures that bound before anything is built. The texts are identifier_pass.py's
(what the worker hands the pass, in the order a worker meets them). Each text is cut into blocks at three grains:
its segments (the extractor's parts, between ``SEPARATOR``), its paragraphs (between blank lines) and its lines.
A block counts as seen when the same block (by digest) is among the last ``--remember`` distinct blocks of that
grain (the name recognizer keeps 20,000 lines).

For each grain it prints the share of blocks, characters and capitalised lines that were seen, and the thread CPU
a text of

* the structured recognizers the policy's kinds run (dates, phones, labelled numbers...), on the whole texts and
  on only their unseen blocks;
* the name recognizer (its own line cache, new for each run), likewise.

The unseen blocks of a text are joined by "\\n\\n\\x00\\n\\n" for the structured recognizers (no pattern's blank
run crosses a NUL, so each block is read apart) and by a blank line for the name recognizer (which reads line by
line). The difference is an upper bound on what a memo at that grain saves: it leaves out the memo's own
cost (a digest and a lookup per block, and putting the remembered findings back in place), and at any grain
finer than a segment it would not be exact (dates, phones, ages and addresses may span lines and blank lines).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_identifiers import load_messages  # noqa: E402
from identifier_pass import texts_of  # noqa: E402

APART = "\n\n\x00\n\n"
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def grains() -> dict[str, Callable[[str], list[str]]]:
    from extractors.base import SEPARATOR

    return {
        "segments": lambda text: text.split(SEPARATOR),
        "paragraphs": _BLANK_LINE.split,
        "lines": lambda text: text.split("\n"),
    }


def unseen_blocks(
    texts: list[str], cut: Callable[[str], list[str]], remember: int
) -> tuple[list[list[str]], dict[str, int]]:
    """Each text's blocks not among the last ``remember`` distinct blocks, and what was seen."""
    kept: OrderedDict[bytes, None] = OrderedDict()
    counts = dict.fromkeys(("blocks", "blocks seen", "chars", "chars seen", "capitalised lines",
                            "capitalised lines seen"), 0)  # fmt: skip
    out = []
    for text in texts:
        fresh = []
        for block in cut(text):
            key = hashlib.blake2b(block.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            seen = key in kept
            if seen:
                kept.move_to_end(key)
            else:
                if len(kept) >= remember:
                    kept.popitem(last=False)
                kept[key] = None
                fresh.append(block)
            capitalised = sum(1 for line in block.split("\n") if line.strip() and not line.islower())
            counts["blocks"] += 1
            counts["chars"] += len(block)
            counts["capitalised lines"] += capitalised
            if seen:
                counts["blocks seen"] += 1
                counts["chars seen"] += len(block)
                counts["capitalised lines seen"] += capitalised
        out.append(fresh)
    return out, counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--kinds", default="safe-harbor", help="the policy's identifiers, comma-separated")
    ap.add_argument("--remember", type=int, default=20_000, help="distinct blocks kept, at each grain")
    ap.add_argument("--runs", type=int, default=2, help="timings of each side, alternated")
    args = ap.parse_args()

    from gateway import heap
    from gateway.assemble import build_engine, build_identifiers
    from gateway.model.identifiers import resolve_kinds
    from gateway.model.identifiers.analyzer import NAME_KINDS
    from gateway.model.identifiers.names import NameRecognizer
    from gateway.model.identifiers.patterns import shape_of, structured

    engine = build_engine()
    analyzer = build_identifiers(engine)
    lexicon = analyzer._lexicon
    wanted = frozenset(resolve_kinds(args.kinds.split(",")))
    recognizers = [r for kinds, r in structured() if kinds & wanted]
    texts = texts_of(load_messages(args.messages))
    heap.tune_collector()

    def structured_cpu(ts: list[str]) -> float:
        started = time.thread_time()
        for t in ts:
            shape = shape_of(t)
            for recognize in recognizers:
                for _ in recognize(t, shape):
                    pass
        return 1000 * (time.thread_time() - started) / len(texts)

    def names_cpu(ts: list[str]) -> float:
        names = NameRecognizer(lexicon)  # an empty line cache, as a worker starts
        started = time.thread_time()
        for t in ts:
            for _ in names(t, wanted):
                pass
        return 1000 * (time.thread_time() - started) / len(texts)

    for t in texts[:200]:  # the lexicon's answers warm, as in a worker that has read a few hundred messages
        for _ in NameRecognizer(lexicon)(t, wanted):
            pass
    print(f"{len(texts)} texts, {sum(map(len, texts)) / len(texts):.0f} characters a text, kinds {args.kinds}, "
          f"remembering {args.remember} blocks")  # fmt: skip
    for grain, cut in grains().items():
        blocks, counts = unseen_blocks(texts, cut, args.remember)
        unseen = {"structured": [APART.join(b) for b in blocks], "names": ["\n\n".join(b) for b in blocks]}
        timings: dict[str, list[float]] = {"structured": [], "structured unseen": [], "names": [], "names unseen": []}
        for run in range(args.runs):
            for unseen_first in (run % 2 == 1, run % 2 == 0):
                suffix = " unseen" if unseen_first else ""
                timings["structured" + suffix].append(structured_cpu(unseen["structured"] if unseen_first else texts))
                if NAME_KINDS & wanted:
                    timings["names" + suffix].append(names_cpu(unseen["names"] if unseen_first else texts))
        share = "; ".join(
            f"{what} seen {100 * counts[what + ' seen'] / max(1, counts[what]):.1f} %"
            for what in ("blocks", "chars", "capitalised lines")
        )
        print(f"{grain}: {counts['blocks'] / len(texts):.1f} blocks a text; {share}")
        for what in ("structured", "names"):
            if timings[what]:
                whole, fresh = min(timings[what]), min(timings[what + " unseen"])
                print(f"  {what}: {whole:.3f} ms a text on the whole texts, {fresh:.3f} on unseen blocks only "
                      f"(at most {whole - fresh:.3f} ms saved)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    raise SystemExit(main())
