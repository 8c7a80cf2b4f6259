"""The ``sanigate`` command."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gateway.errors import InputError, SanigateError

log = logging.getLogger("sanigate")

EXIT_USAGE = 2
EXIT_ERROR = 1


def _policy_args(
    p: argparse.ArgumentParser, *, alpha_default: float | None = 1.5, entity_required: bool = True
) -> None:
    p.add_argument("--entity", "-e", action="append", required=entity_required, metavar="E",
                   help="a sensitive entity to protect (repeat for several)")  # fmt: skip
    p.add_argument("--alpha", "-a", type=float, default=alpha_default, help="strictness, >= 1 (default 1.5)")
    p.add_argument("--index", type=Path, help="knowledge index (default: the one shipped with sanigate)")
    p.add_argument("--taxonomy", type=Path, help="organisation taxonomy TOML, asked before WordNet")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sanigate", description="Sanitize outgoing text under the (alpha, C)-sanitized model."
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)

    s = sub.add_parser("sanitize", help="sanitize a text, .eml, .docx or .pdf file")
    s.add_argument("file", type=Path)
    _policy_args(s, entity_required=False)
    s.add_argument("--identifiers", "-i", nargs="?", const="all", metavar="KINDS",
                   help="remove identifiers first: 'all' (the default with no value), 'safe-harbor', or kinds "
                        "separated by commas (PERSON,DATE,PHONE,...)")  # fmt: skip
    s.add_argument("--address-level", choices=("none", "city", "state"), default="none",
                   help="what of a street address may stay (with --identifiers)")  # fmt: skip
    s.add_argument("--mode", choices=("generalize", "redact"), default="generalize")
    s.add_argument("--max-group", type=int, default=3, choices=(1, 2, 3),
                   help="largest group of co-occurring terms judged together (1: the paper's Algorithm 1)")  # fmt: skip
    s.add_argument("--unknown", choices=("context", "redact", "keep"), default="context",
                   help="terms K has too little evidence on: redact when beside a risky term (context), "
                        "always, or never")  # fmt: skip
    s.add_argument("--out", "-o", type=Path, help="write the sanitized file here (default: stdout)")
    s.add_argument("--report", type=Path, help="write the JSON report here")

    e = sub.add_parser("explain", help="show why a term is or is not risky, step by step")
    e.add_argument("term")
    _policy_args(e)
    e.add_argument("--json", action="store_true", help="print JSON instead of a table")

    i = sub.add_parser("index", help="knowledge index commands")
    isub = i.add_subparsers(dest="index_command", required=True)
    b = isub.add_parser("build", help="build a co-occurrence index from corpora")
    b.add_argument("corpora", nargs="+", type=Path, help="JSONL files (.xz/.gz allowed) or folders of .txt files")
    b.add_argument("--out", type=Path, help="the index file to write (needed unless --to)")
    b.add_argument("--to", metavar="URL", help="also load K into PostgreSQL (postgresql://…), shared by a fleet")
    b.add_argument("--min-df", type=int, default=2)
    b.add_argument("--min-phrase-df", type=int, default=3)
    b.add_argument("--workers", type=int, default=2)
    b.add_argument("--exclude-titles", type=Path, help="file of article titles (one a line) to leave out of K")
    info = isub.add_parser("info", help="print an index's header")
    info.add_argument("path", type=Path, nargs="?")
    prep = isub.add_parser("prepare", help="lay out K and WordNet for memory-mapping now (else the first start does)")
    prep.add_argument("path", type=Path, nargs="?")

    sv = sub.add_parser("serve", help="run the SMTP gateway")
    sv.add_argument("--config", "-c", type=Path, help="TOML configuration (default: the embedded defaults)")
    mi = sub.add_parser("milter", help="run the gateway as a milter (Postfix smtpd_milters)")
    mi.add_argument("--config", "-c", type=Path, help="TOML configuration (its [milter], policies, store)")

    from gateway.evaluation.cli import add_parser as add_eval

    add_eval(sub)

    db = sub.add_parser("db", help="the quarantine and audit store's schema")
    db.add_argument("--config", "-c", type=Path, help="TOML configuration (its [store])")
    dsub = db.add_subparsers(dest="db_command", required=True)
    dsub.add_parser("upgrade", help="apply the schema migrations the store lacks")
    dsub.add_parser("version", help="print the store's schema version and this sanigate's")

    ad = sub.add_parser("admin", help="run the admin web interface, or manage its users")
    ad.add_argument("--config", "-c", type=Path, help="TOML configuration (its [admin] users, store and relay)")
    adsub = ad.add_subparsers(dest="admin_command")
    users = adsub.add_parser("user", help="add, re-password or remove an admin interface user (edits --config)")
    usub = users.add_subparsers(dest="user_command", required=True)
    ua = usub.add_parser("add", help="add a user (the password is read from the terminal or stdin)")
    ua.add_argument("name")
    ua.add_argument("--role", choices=("reviewer", "admin"), default="reviewer")
    usub.add_parser("passwd", help="set a user's password and end their sessions").add_argument("name")
    usub.add_parser("remove", help="remove a user and end their sessions").add_argument("name")
    for up in usub.choices.values():
        up.add_argument("--config", "-c", type=Path, dest="user_config", help="the configuration file to edit")
    sub.add_parser("hash-password", help="hash a password for [[admin.users]] (read from the terminal or stdin)")

    q = sub.add_parser("quarantine", help="review held messages")
    q.add_argument("--config", "-c", type=Path, help="TOML configuration (for the store and the relay)")
    qsub = q.add_subparsers(dest="q_command", required=True)
    ql = qsub.add_parser("list", help="list stored messages")
    ql.add_argument("--status", choices=("held", "forwarded", "released", "rejected"))
    ql.add_argument("--limit", type=int, default=50)
    for name, text in (("show", "envelope, reason and decisions"), ("diff", "original against sanitized")):
        qsub.add_parser(name, help=text).add_argument("id")
    qr = qsub.add_parser("release", help="re-inject through the relay (sanitized unless --original)")
    qr.add_argument("id")
    qr.add_argument("--original", action="store_true", help="send the original, unsanitized")
    qj = qsub.add_parser("reject", help="refuse a held message")
    qj.add_argument("id")
    for sp in (qr, qj):
        sp.add_argument("--by", default=None, help="who decides (default: the login name)")
        sp.add_argument("--why", default="", help="why (required with --original)")
    qp = qsub.add_parser("purge", help="delete stored messages older than an age")
    qp.add_argument("--older-than", required=True, help="an age: 30d, 12h, 90m")
    return parser


def read_text_file(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    if not data.strip():
        raise InputError(f"{path}: the file is empty")
    if b"\x00" in data[:8192]:
        raise InputError(f"{path}: binary file (NUL bytes); give a text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}); convert it first") from exc


def _policy(args: argparse.Namespace, **extra: Any) -> Any:
    from gateway.model.records import SanitizePolicy

    return SanitizePolicy(entities=tuple(args.entity or ()), alpha=args.alpha, **extra)


def _engine(args: argparse.Namespace) -> Any:
    from gateway.assemble import EngineConfig, build_engine

    return build_engine(EngineConfig(index=args.index, taxonomy=args.taxonomy))


def cmd_sanitize(args: argparse.Namespace) -> int:
    from extractors.pipeline import detect_kind, process

    try:
        data = args.file.read_bytes()
    except OSError as exc:
        raise InputError(f"{args.file}: cannot read ({exc.strerror})") from exc
    if not data.strip():
        raise InputError(f"{args.file}: the file is empty")
    kind = detect_kind(data, args.file.name)
    if kind in ("docx", "pdf") and args.out is None and sys.stdout.isatty():
        raise InputError(f"{args.file}: a {kind.upper()} result is binary; give --out FILE")
    from gateway.model.identifiers import resolve_kinds

    if not args.entity and not args.identifiers:
        raise InputError("say what to protect: --entity E (repeat for several), --identifiers, or both")
    kinds = resolve_kinds(args.identifiers.split(",")) if args.identifiers else frozenset()
    policy = _policy(args, mode=args.mode, max_group=args.max_group, unknown=args.unknown, identifiers=kinds,
                     address_level=args.address_level)  # fmt: skip
    engine = _engine(args)
    analyzer = None
    if kinds:
        from gateway.assemble import build_identifiers

        analyzer = build_identifiers(engine)
    outcome = process(data, engine=engine, policies=[policy], name=args.file.name, kind=kind, identifiers=analyzer)
    if args.out:
        args.out.write_bytes(outcome.data)
    else:
        sys.stdout.buffer.write(outcome.data)
        sys.stdout.flush()
    if args.report:
        args.report.write_text(json.dumps(outcome.report(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log.info("%s: %d decisions", args.file, len(outcome.decisions))
    return 0


def _fmt(x: float | None) -> str:
    return "-" if x is None or x != x or x in (float("inf"), float("-inf")) else f"{x:.3f}"


def cmd_explain(args: argparse.Namespace) -> int:
    ex = _engine(args).explain(args.term, _policy(args))
    if args.json:
        from dataclasses import asdict

        print(json.dumps(asdict(ex), indent=2, default=str))
        return 0
    print(f"term: {ex.term!r} (key {ex.key!r}), in {ex.n_term} documents of K, IC(t) = {_fmt(ex.ic_term)}")
    if not ex.known:
        print("  too few documents to judge by counts: unknown to K (judged by context in a text)")
    for p in ex.per_entity:
        verdict = "RISKY" if p["risky"] else "safe"
        print(f"entity {p['entity']!r}: IC(c) = {_fmt(p['ic_entity'])} "
              f"({p['documents_entity']} documents, "
              f"as {', '.join(p['lexicalizations'])})")  # fmt: skip
        print(f"  documents with both: {p['documents_both']}; PMI(c;t) = {_fmt(p['pmi'])} "
              f"(unsmoothed {_fmt(p['raw_pmi'])}); "
              f"threshold IC(c)/alpha = {_fmt(p['threshold'])} -> {verdict}")  # fmt: skip
    print(f"sense: {ex.sense or '(none in the knowledge bases)'}")
    if not ex.chain:
        print("generalizations: none known -> a risky occurrence is redacted")
    for i, s in enumerate(ex.chain, 1):
        mark = "<- chosen" if s.accepted else (s.why or "")
        print(f"  {i:2d}. {s.term:<32} PMI {_fmt(s.pmi):>7} vs {_fmt(s.threshold):>7} {mark}")
    if ex.risky:
        print(f"decision: replace by {ex.chosen!r}" if ex.chosen else "decision: redact (no safe generalization)")
    else:
        print("decision: keep")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    if args.index_command == "info":
        from gateway.knowledge.index_format import read_index
        from gateway.knowledge.local import default_index_path

        print(json.dumps(read_index(args.path or default_index_path()).header, indent=2))
        return 0
    if args.index_command == "prepare":
        from gateway.assemble import load_knowledge
        from gateway.taxonomy.lexicon import prepare_word_classes
        from gateway.taxonomy.wordnet import WordNet

        started = time.monotonic()
        k = load_knowledge(args.path)
        prepare_word_classes(WordNet())
        print(f"{k.path}: {len(k)} terms, mapped from {k.mapped_path or 'memory'}; WordNet prepared "
              f"({time.monotonic() - started:.1f} s)")  # fmt: skip
        return 0
    from tqdm import tqdm

    from gateway.knowledge.build import BuildConfig, build_index

    excluded: frozenset[str] = frozenset()
    if args.exclude_titles:
        excluded = frozenset(t.strip() for t in read_text_file(args.exclude_titles).splitlines() if t.strip())
    if args.out is None and args.to is None:
        raise InputError("say where the index goes: --out FILE, --to postgresql://…, or both")
    if args.to is not None and not args.to.startswith(("postgresql://", "postgres://")):
        raise InputError(f"--to takes a postgresql:// URL, not {args.to.split(':', 1)[0]!r}")
    config = BuildConfig(min_df=args.min_df, min_phrase_df=args.min_phrase_df, workers=args.workers,
                         excluded_titles=excluded)  # fmt: skip
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "k.sgidx"
        with tqdm(unit=" docs", desc="indexing", file=sys.stderr) as bar:
            header = build_index(args.corpora, out, config=config, progress=bar.update)
        size = out.stat().st_size
        print(f"{args.out or 'index'}: {header['n_docs']} paragraphs, {header['n_terms']} terms, "
              f"{header['n_postings']} postings, {size / 1e6:.1f} MB")  # fmt: skip
        if args.to is not None:
            from gateway.knowledge.local import LocalIndex
            from gateway.knowledge.postgres import load_index
            from gateway.pg import redact_url

            with tqdm(unit=" terms", desc="loading", file=sys.stderr) as bar:
                n = load_index(LocalIndex(out), args.to, progress=bar.update)
            print(f"{redact_url(args.to)}: K loaded, {n} terms")
    return 0


def _json_logs() -> None:
    """A long-running server logs JSON lines at INFO (ids and counts, never content)."""
    from gateway.serve import JSONFormatter

    root = logging.getLogger()
    for h in root.handlers:
        h.setFormatter(JSONFormatter())
    root.setLevel(logging.INFO)


def cmd_serve(args: argparse.Namespace) -> int:
    import asyncio

    from gateway.serve import serve

    _json_logs()
    asyncio.run(serve(args.config))
    return 0


def cmd_milter(args: argparse.Namespace) -> int:
    import asyncio

    from gateway.milter import MilterGateway
    from gateway.serve import serve

    _json_logs()
    asyncio.run(serve(args.config, front=MilterGateway, name="sanigate milter"))
    return 0


def cmd_admin(args: argparse.Namespace) -> int:
    if args.admin_command == "user":
        return _admin_user(args)
    from gateway.admin.serve import run

    _json_logs()
    run(args.config)
    return 0


def _admin_user(args: argparse.Namespace) -> int:
    from gateway.admin import users
    from gateway.config import load_config
    from gateway.store import open_store

    path: Path | None = args.user_config or args.config
    if path is None:
        raise InputError("say which configuration file holds the users: --config FILE")
    if args.user_command == "add":
        backup = users.add_user(path, args.name, role=args.role, password=_read_password())
        print(f"added {args.name} ({args.role}) to {path} (previous file: {backup.name})")
        return 0
    if args.user_command == "passwd":
        backup = users.set_password(path, args.name, password=_read_password())
        what = "password changed"
    else:
        backup = users.remove_user(path, args.name)
        what = "removed"
    store = open_store(load_config(path).store)
    try:
        ended = store.drop_tokens_of(args.name)
    finally:
        store.close()
    print(f"{args.name}: {what} in {path} (previous file: {backup.name}); {ended} session(s) and device(s) ended")
    return 0


def _read_password() -> str:
    import getpass

    if sys.stdin.isatty():
        password = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != password:
            raise InputError("the two passwords differ")
        return password
    return sys.stdin.readline().rstrip("\n")


def cmd_hash_password(args: argparse.Namespace) -> int:
    from gateway.admin.auth import hash_password

    password = _read_password()
    if len(password) < 10:
        raise InputError("use at least 10 characters")
    print(hash_password(password))
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    from gateway.config import load_config
    from gateway.store import open_store

    config = load_config(args.config)
    store = open_store(config.store, check_schema=False)
    where = store.label
    try:
        if args.db_command == "upgrade":
            before, after = store.upgrade()
            print(f"{where}: schema version {before} -> {after}" if before != after else f"{where}: already at {after}")
        else:
            print(f"{where}: schema version {store.schema_version()}")
    finally:
        store.close()
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from gateway.evaluation.cli import run

    return run(args)


def cmd_quarantine(args: argparse.Namespace) -> int:
    from gateway import review

    return review.run(args)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")  # fmt: skip
    handlers = {
        "sanitize": cmd_sanitize,
        "explain": cmd_explain,
        "index": cmd_index,
        "serve": cmd_serve,
        "milter": cmd_milter,
        "quarantine": cmd_quarantine,
        "admin": cmd_admin,
        "hash-password": cmd_hash_password,
        "eval": cmd_eval,
        "db": cmd_db,
    }
    try:
        return handlers[args.command](args)
    except SanigateError as exc:
        log.debug("error", exc_info=True)
        reason = getattr(exc, "reason", None)
        print(f"sanigate: error: {exc.message}" + (f" [{reason}]" if reason else ""), file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): not an error of ours
        sys.stderr.close()
        return 0
    except Exception:  # a bug: say so plainly, keep the traceback for -v
        log.debug("internal error", exc_info=True)
        log.error("internal error while running %r", args.command, exc_info=args.verbose)
        print("sanigate: internal error (run with -v for details)", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
