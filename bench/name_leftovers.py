"""Words of a replaced name left elsewhere in the text: "Rob" after "Rob Kossler" became ``[PERSON 1]``.

    nice -n 5 .venv/bin/python bench/name_leftovers.py [--limit 600]

The bench's archive messages (bench_gateway.load_messages, as `identifier_pass.py` reads them: the texts the
pipeline joins) go through ``remove_identifiers`` with Safe Harbor's kinds. For each text, every capitalised
word of three letters or more of a replaced person's name is searched for, as a whole word, in the output:
each hit is a word a reader can put back beside the placeholder. Not every hit is a leak: a technical word
read as part of a name ("IO Error") is left where it stands as a word, rightly.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_gateway import load_messages  # noqa: E402
from identifier_pass import texts_of  # noqa: E402

from gateway.assemble import build_identifiers  # noqa: E402
from gateway.model.identifiers import remove_identifiers, resolve_kinds  # noqa: E402
from gateway.model.records import SanitizePolicy  # noqa: E402

_WORD = re.compile(r"[A-Z][a-z]{2,}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=600)
    args = ap.parse_args()
    analyzer = build_identifiers()
    policy = SanitizePolicy(entities=(), identifiers=resolve_kinds(["safe-harbor"]))
    texts = texts_of([data for _sender, data in load_messages(args.limit, random.Random(11))])
    left: Counter[str] = Counter()
    for text in texts:
        out = remove_identifiers(text, analyzer, policy)
        words = {w for d in out.decisions if d.kind == "PERSON" for w in _WORD.findall(d.surface)}
        for w in words:
            if n := len(re.findall(rf"(?<![\w-]){w}(?![\w-])", out.text)):
                left[w] += n
    print(f"{sum(left.values())} capitalised words of a replaced person's name left in {len(texts)} texts")
    for word, n in left.most_common(20):
        print(f"{n:6d}  {word}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
