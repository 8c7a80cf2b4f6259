"""The admin web interface: review held messages, explain decisions, act, and tune policies.

Server-rendered pages (Starlette + Jinja2, autoescaped), no script at all,
every asset served from here. Every route but the login page needs a
session; every form carries a CSRF token; message content never goes into a
URL (searches that name a term are POSTed) nor into the log.
"""

from __future__ import annotations

import csv
import hmac
import io
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlencode

import jinja2
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.admin import charts
from gateway.admin.auth import LoginThrottle, Session, Sessions, dummy_hash, verify_password
from gateway.admin.compare import compare
from gateway.admin.policyedit import add_term
from gateway.config import Config
from gateway.errors import SanigateError
from gateway.model.memory import REMOVED, SIGNATURE, WROTE, Disclosure
from gateway.review import release
from gateway.store.base import AuditEntry, AuditQuery, MessageQuery, Store, StreamQuery

log = logging.getLogger("sanigate.admin")

HERE = Path(__file__).resolve().parent
COOKIE = "sanigate_session"
LOGIN_COOKIE = "sanigate_login"
DEVICE_COOKIE = "sanigate_device"
PAGE = 50
MAX_PAGE = 1_000_000  # past this a page or offset number is a mistake (or a probe), answered 400
Role = Literal["reviewer", "admin"]
Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True, slots=True, kw_only=True)
class AdminDeps:
    """What the interface works on; tests pass small real ones."""

    config: Callable[[], Config]  # the current configuration (re-read after a policy edit)
    config_path: Path | None  # where policy feedback is written; None: feedback is off
    store: Store
    clock: Callable[[], float] = time.time


class _Denied(Exception):
    def __init__(self, status: int, why: str) -> None:
        self.status = status
        self.why = why


def create_app(deps: AdminDeps) -> ASGIApp:
    admin = _Admin(deps)
    routes = [
        Route("/login", admin.login_form, methods=["GET"]),
        Route("/login", admin.login, methods=["POST"]),
        Route("/logout", admin.page(admin.logout), methods=["POST"]),
        Route("/", admin.page(admin.home), methods=["GET"]),
        Route("/queue", admin.page(admin.queue), methods=["GET"]),
        Route("/messages/{id}", admin.page(admin.message), methods=["GET"]),
        Route("/messages/{id}/original.eml", admin.page(admin.download, role="admin"), methods=["GET"]),
        Route("/messages/{id}/release", admin.page(admin.release), methods=["POST"]),
        Route("/messages/{id}/reject", admin.page(admin.reject), methods=["POST"]),
        Route("/feedback", admin.page(admin.feedback, role="admin"), methods=["POST"]),
        Route("/audit", admin.page(admin.audit), methods=["GET", "POST"]),
        Route("/audit/export", admin.page(admin.export), methods=["POST"]),
        Route("/dashboard", admin.page(admin.dashboard), methods=["GET"]),
        Route("/streams", admin.page(admin.streams), methods=["GET"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes)
    return _Guard(app)


class _Guard:
    """Security headers on every answer, and an access log without query strings or content."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", b"default-src 'none'; style-src 'self'; img-src 'self'; "
                     b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                    (b"cache-control", b"no-store"),
                ]  # fmt: skip
                message["headers"] = headers
                # Logged before the answer leaves: path only (ids, never content), status, time to answer.
                log.info("%s %s %d %.0f ms", scope["method"], scope["path"], message["status"],
                         1000 * (time.monotonic() - started))  # fmt: skip
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _Admin:
    def __init__(self, deps: AdminDeps) -> None:
        self.deps = deps
        admin = deps.config().admin
        self.sessions = Sessions(deps.store, lifetime=60 * admin.session_minutes, clock=deps.clock)
        self.throttle = LoginThrottle(deps.store, limit=admin.max_failed_logins, window=60 * admin.lockout_minutes,
                                      clock=deps.clock)  # fmt: skip
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
        self.templates = Jinja2Templates(env=env)
        self.templates.env.filters["when"] = _when
        self.templates.env.filters["num"] = _num

    # -- plumbing -------------------------------------------------------------
    def page(self, handler: Handler, *, role: Role | None = None) -> Handler:
        async def guarded(request: Request) -> Response:
            session = await self._call(self.sessions.get, request.cookies.get(COOKIE))
            if session is not None:  # a user removed from the file, or given another role, since logging in
                user = next((u for u in self.deps.config().admin.users if u.name == session.user), None)
                session = None if user is None or user.role != session.role else session
            if session is None:
                if request.method == "GET":
                    return RedirectResponse("/login", status_code=303)
                return self._error(request, None, 403, "Your session has ended. Log in again.")
            request.state.session = session
            try:
                if request.method == "POST":
                    form = await request.form()
                    self._check_post(request, form, session)
                    request.state.form = form
                if role == "admin" and session.role != "admin":
                    raise _Denied(403, "This needs the admin role.")
                return await handler(request)
            except _Denied as denied:
                log.warning("denied %s %s to %s: %s", request.method, request.url.path, session.user, denied.why)
                return self._error(request, session, denied.status, denied.why)

        return guarded

    def _check_post(self, request: Request, form: FormData, session: Session) -> None:
        token = str(form.get("csrf", ""))
        if not hmac.compare_digest(token.encode(), session.csrf.encode()):
            raise _Denied(403, "The form was not sent by this interface (CSRF token missing or wrong).")
        origin = request.headers.get("origin")
        if origin and origin != "null" and origin != _own_origin(request):
            raise _Denied(403, "The form was sent from another site.")

    def _render(self, request: Request, name: str, session: Session | None, status: int = 200,
                **context: Any) -> HTMLResponse:  # fmt: skip
        context.update(session=session, csrf=session.csrf if session else "", now=self.deps.clock())
        response: HTMLResponse = self.templates.TemplateResponse(request, name, context, status_code=status)
        return response

    def _error(self, request: Request, session: Session | None, status: int, why: str) -> HTMLResponse:
        return self._render(request, "error.html", session, status=status, why=why)

    def _form(self, request: Request) -> FormData:
        form: FormData = request.state.form
        return form

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await run_in_threadpool(fn, *args, **kwargs)

    # -- login ----------------------------------------------------------------
    async def login_form(self, request: Request) -> Response:
        if await self._call(self.sessions.get, request.cookies.get(COOKIE)):
            return RedirectResponse("/queue", status_code=303)
        return self._login_page(request, "", 200)

    def _login_page(self, request: Request, error: str, status: int) -> Response:
        token = secrets.token_urlsafe(24)
        response = self._render(request, "login.html", None, status=status, login_csrf=token, error=error)
        response.set_cookie(LOGIN_COOKIE, token, max_age=900, httponly=True, samesite="strict",
                            secure=self.deps.config().admin.secure_cookies)  # fmt: skip
        return response

    async def login(self, request: Request) -> Response:
        form = await request.form()
        sent, cookie = str(form.get("login_csrf", "")), request.cookies.get(LOGIN_COOKIE, "")
        if not cookie or not hmac.compare_digest(sent.encode(), cookie.encode()):
            return self._login_page(request, "The login form expired; try again.", 403)
        name = str(form.get("username", "")).strip()
        password = str(form.get("password", ""))
        config = self.deps.config().admin
        client = _client_address(request, config.trusted_proxies)
        device = request.cookies.get(DEVICE_COOKIE)
        known = device if device and await self._call(self.sessions.device_user, device) == name.lower() else None
        keys = self.throttle.keys(name, client, known)
        if await self._call(self.throttle.blocked, keys):
            log.warning("login refused for %r from %s: too many failed attempts", name, client)
            return self._login_page(request, "Too many failed logins. Wait and try again later.", 429)
        user = next((u for u in config.users if u.name == name), None)
        ok = await self._call(verify_password, password, user.password_hash if user else dummy_hash())
        if user is None or not ok:
            await self._call(self.throttle.failed, keys)
            log.warning("failed login for %r from %s", name, client)
            return self._login_page(request, "Wrong user name or password.", 401)
        await self._call(self.throttle.succeeded, keys)
        session = await self._call(self.sessions.create, user.name, user.role)
        log.info("login: %s (%s) from %s", user.name, user.role, client)
        response = RedirectResponse("/queue", status_code=303)
        response.set_cookie(COOKIE, session.token, httponly=True, samesite="strict", secure=config.secure_cookies)
        if known is None:
            token = await self._call(self.sessions.remember_device, user.name.lower())
            response.set_cookie(DEVICE_COOKIE, token, max_age=90 * 86400, httponly=True, samesite="strict",
                                secure=config.secure_cookies)  # fmt: skip
        response.delete_cookie(LOGIN_COOKIE)
        return response

    async def logout(self, request: Request) -> Response:
        await self._call(self.sessions.drop, request.cookies.get(COOKIE))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    async def home(self, request: Request) -> Response:
        return RedirectResponse("/queue", status_code=303)

    # -- the queue ------------------------------------------------------------
    async def queue(self, request: Request) -> Response:
        q = request.query_params
        filters = {k: q.get(k, "").strip() for k in ("status", "sender", "recipient", "policy", "entity", "reason",
                                                      "id", "since", "until")}  # fmt: skip
        try:
            query = MessageQuery(
                status=filters["status"] or None,  # type: ignore[arg-type]
                sender=filters["sender"] or None,
                recipient=filters["recipient"] or None,
                policy=filters["policy"] or None,
                entity=filters["entity"] or None,
                reason=filters["reason"] or None,
                message_id=filters["id"] or None,
                since=_day(filters["since"]),
                until=_day(filters["until"], end=True),
            )
        except ValueError:
            return self._error(request, request.state.session, 400, "Dates are written YYYY-MM-DD.")
        raw_page = q.get("page", "1")
        page = max(1, int(raw_page)) if raw_page.isdigit() and len(raw_page) < 10 else 1
        if page > MAX_PAGE or (raw_page.isdigit() and len(raw_page) >= 10):
            return self._error(request, request.state.session, 400, "No such page.")
        messages = await self._call(self.deps.store.list_messages, query, limit=PAGE, offset=(page - 1) * PAGE)
        total = await self._call(self.deps.store.count_messages, query)
        config = self.deps.config()
        entities = sorted({e for p in config.policies.values() for e in p.sanitize.entities})
        keep = {k: v for k, v in filters.items() if v}
        return self._render(
            request, "queue.html", request.state.session, messages=messages, total=total, page=page,
            pages=max(1, -(-total // PAGE)), filters=filters, policies=sorted(config.policies), entities=entities,
            link=lambda n: "/queue?" + urlencode({**keep, "page": n}),
        )  # fmt: skip

    # -- one message ------------------------------------------------------------
    async def _stored(self, request: Request) -> Any:
        stored = await self._call(self.deps.store.get, request.path_params["id"])
        if stored is None:
            raise _Denied(404, "No such message.")
        return stored

    async def message(self, request: Request) -> Response:
        stored = await self._stored(request)
        entries: list[AuditEntry] = await self._call(self.deps.store.audit, AuditQuery(message_id=stored.id))
        decisions = [e for e in entries if e.kind == "decision"]
        try:
            original, sanitized = await self._call(self.deps.store.content, stored.id)
            comparison = await self._call(compare, original, sanitized, decisions)
            unreadable = ""
        except SanigateError as exc:
            comparison, unreadable = None, exc.message
        return self._render(
            request, "message.html", request.state.session, m=stored, decisions=decisions,
            actions=[e for e in entries if e.kind == "action"], comparison=comparison, unreadable=unreadable,
            feedback=self.deps.config_path is not None, flash=request.query_params.get("done", ""),
        )  # fmt: skip

    async def download(self, request: Request) -> Response:
        stored = await self._stored(request)
        original, _ = await self._call(self.deps.store.content, stored.id)
        session: Session = request.state.session
        await self._call(self.deps.store.log_action, message_id=stored.id, action="downloaded original",
                         actor=session.user, why="downloaded in the admin interface")  # fmt: skip
        return Response(original, media_type="message/rfc822",
                        headers={"content-disposition": f'attachment; filename="{stored.id}.eml"'})  # fmt: skip

    async def release(self, request: Request) -> Response:
        stored = await self._stored(request)
        form = self._form(request)
        session: Session = request.state.session
        original = form.get("version") == "original"
        why = str(form.get("why", "")).strip()
        if original:
            if session.role != "admin":
                raise _Denied(403, "Releasing the original needs the admin role.")
            if not why or form.get("confirm") != "yes":
                raise _Denied(400, "Releasing the original needs a written reason and the confirmation box ticked.")
        try:
            await release(self.deps.config(), self.deps.store, stored.id, original=original, actor=session.user,
                          why=why or "released in the admin interface")  # fmt: skip
        except SanigateError as exc:
            raise _Denied(409, f"Not released: {exc.message}") from exc
        return RedirectResponse(f"/messages/{stored.id}?done=released", status_code=303)

    async def reject(self, request: Request) -> Response:
        stored = await self._stored(request)
        session: Session = request.state.session
        why = str(self._form(request).get("why", "")).strip() or "rejected in the admin interface"
        ok = await self._call(self.deps.store.transition, stored.id, to="rejected", allowed_from=("held",),
                              actor=session.user, why=why)  # fmt: skip
        if not ok:
            raise _Denied(409, f"Only a held message can be rejected; this one is {stored.status}.")
        return RedirectResponse(f"/messages/{stored.id}?done=rejected", status_code=303)

    async def feedback(self, request: Request) -> Response:
        if self.deps.config_path is None:
            raise _Denied(409, "The gateway runs on embedded defaults: there is no policy file to edit.")
        form = self._form(request)
        session: Session = request.state.session
        message_id, policy = str(form.get("message_id", "")), str(form.get("policy", ""))
        term, to = str(form.get("term", "")), str(form.get("list", ""))
        if to not in ("allow", "deny"):
            raise _Denied(400, "Choose the allow or the deny list.")
        try:
            change = await self._call(add_term, self.deps.config_path, policy=policy, term=term, to=to)
        except SanigateError as exc:
            raise _Denied(400, f"Policy not changed: {exc.message}") from exc
        await self._call(
            self.deps.store.log_action, message_id=message_id, action=f"policy {to}-list",
            actor=session.user, why=f"added {term!r} to policies.{policy}.{to} (backup {change.backup.name})",
        )  # fmt: skip
        return RedirectResponse(f"/messages/{message_id}?done=policy", status_code=303)

    # -- the audit log ------------------------------------------------------------
    def _audit_query(self, form: FormData | None) -> tuple[AuditQuery, dict[str, str]]:
        keys = ("message_id", "kind", "sender", "policy", "entity", "term", "action", "actor", "since", "until")
        values = {k: str(form.get(k, "")).strip() if form else "" for k in keys}
        query = AuditQuery(
            message_id=values["message_id"] or None,
            kind=values["kind"] or None,  # type: ignore[arg-type]
            sender=values["sender"] or None,
            policy=values["policy"] or None,
            entity=values["entity"] or None,
            term=values["term"] or None,
            action=values["action"] or None,
            actor=values["actor"] or None,
            since=_day(values["since"]),
            until=_day(values["until"], end=True),
        )
        return query, values

    async def audit(self, request: Request) -> Response:
        form = self._form(request) if request.method == "POST" else None
        try:
            query, values = self._audit_query(form)
        except ValueError:
            return self._error(request, request.state.session, 400, "Dates are written YYYY-MM-DD.")
        raw_offset = str(form.get("offset", "0")) if form else "0"
        offset = int(raw_offset) if raw_offset.isdigit() and len(raw_offset) < 10 else 0
        if offset > MAX_PAGE * PAGE or (raw_offset.isdigit() and len(raw_offset) >= 10):
            return self._error(request, request.state.session, 400, "No such page.")
        total = await self._call(self.deps.store.count_audit, query)
        if form is None:  # newest first on the plain page
            offset = max(0, total - PAGE)
        entries = await self._call(self.deps.store.audit, query, limit=PAGE, offset=offset)
        return self._render(request, "audit.html", request.state.session, entries=entries, total=total,
                            values=values, offset=offset, page=PAGE)  # fmt: skip

    async def export(self, request: Request) -> Response:
        form = self._form(request)
        try:
            query, _values = self._audit_query(form)
        except ValueError:
            return self._error(request, request.state.session, 400, "Dates are written YYYY-MM-DD.")
        entries: list[AuditEntry] = await self._call(self.deps.store.audit, query, limit=1_000_000)
        rows = [_row(e) for e in entries]
        if form.get("format") != "json":
            rows = [{k: _cell(v) for k, v in r.items()} for r in rows]
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(self.deps.clock()))
        if form.get("format") == "json":
            body, media, ext = json.dumps(rows, indent=1), "application/json", "json"
        else:
            out = io.StringIO()
            writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else list(_row_fields()))
            writer.writeheader()
            writer.writerows(rows)
            body, media, ext = out.getvalue(), "text/csv", "csv"
        disposition = f'attachment; filename="sanigate-audit-{stamp}.{ext}"'
        return Response(body, media_type=media, headers={"content-disposition": disposition})

    # -- the dashboard ------------------------------------------------------------
    async def streams(self, request: Request) -> Response:
        """The disclosure memory: streams, and what one stream has disclosed so far (its messages, its terms)."""
        q = request.query_params
        policy, sender, recipient = (q.get(k, "").strip() for k in ("policy", "sender", "recipient"))
        config = self.deps.config()
        since = self.deps.clock() - max((p.stream_memory_days for p in config.policies.values()), default=0) * 86400
        summaries = await self._call(self.deps.store.streams, since=since, sender=sender or None)
        disclosures: list[Disclosure] = []
        if policy and sender and recipient:
            disclosures = await self._call(self.deps.store.recall, StreamQuery(
                policies=(policy,), sender=sender, recipients=(recipient,), since=since))  # fmt: skip
        terms: dict[str, int] = {}
        for d in disclosures:
            for t in d.terms:
                # What the sender wrote (a signature, a term and what it was written as, a term taken out),
                # remembered for the thread: not let through.
                if not t.startswith((SIGNATURE, WROTE, REMOVED)):
                    terms[t] = terms.get(t, 0) + 1
        return self._render(
            request, "streams.html", request.state.session, streams=summaries, disclosures=disclosures,
            terms=sorted(terms.items(), key=lambda kv: (-kv[1], kv[0])), chosen=(policy, sender, recipient),
            link=lambda s: "/streams?" + urlencode({"policy": s.policy, "sender": s.sender, "recipient": s.recipient}),
        )  # fmt: skip

    async def dashboard(self, request: Request) -> Response:
        days = request.query_params.get("days", "7")
        n = int(days) if days.isdigit() and 0 < int(days) <= 366 else 7
        bucket = 3600.0 if n <= 2 else 86400.0
        now = self.deps.clock()
        stats = await self._call(self.deps.store.stats, since=now - n * 86400, bucket=bucket)
        mean = sum(stats.utility) / len(stats.utility) if stats.utility else None
        # The charts are SVG built by charts.py with every label escaped: safe to insert as markup.
        figures = {
            "outcomes": Markup(
                charts.stacked_bars(
                    stats.outcomes, bucket=bucket, start=now - n * 86400, end=now, title="Messages by outcome"
                )
            ),
            "entities": Markup(charts.horizontal_bars(stats.decisions_by_entity, title="Decisions by entity")),
            "terms": Markup(
                charts.horizontal_bars(stats.top_terms, title="Most frequent disclosed terms", color="#e15759")
            ),
            "utility": Markup(charts.histogram(stats.utility, title="Utility preservation of sanitized messages")),
        }
        totals: dict[str, int] = {}
        for _p, outcome, count in stats.outcomes:
            totals[outcome] = totals.get(outcome, 0) + count
        return self._render(request, "dashboard.html", request.state.session, figures=figures, days=n,
                            totals=totals, mean_utility=mean, sanitized=len(stats.utility))  # fmt: skip


def _own_origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}"


def _day(text: str, *, end: bool = False) -> float | None:
    if not text:
        return None
    t = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
    return t + 86400 if end else t


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def _num(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (OWASP: CSV injection) is led by a quote."""
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


def _client_address(request: Request, trusted: tuple[str, ...]) -> str:
    """The client's address; through a trusted reverse proxy, the last address it saw in X-Forwarded-For."""
    peer = request.client.host if request.client else "?"
    if peer not in trusted:
        return peer
    hops = [h.strip() for h in request.headers.get("x-forwarded-for", "").split(",") if h.strip()]
    while hops and hops[-1] in trusted:
        hops.pop()
    return hops[-1] if hops else peer


def _row_fields() -> tuple[str, ...]:
    return ("id", "at", "message_id", "kind", "sender", "recipients", "policy", "entity", "term", "pmi", "threshold",
            "action", "replacement", "part", "reason", "group", "earlier", "actor", "why")  # fmt: skip


def _row(e: AuditEntry) -> dict[str, Any]:
    d = asdict(e)
    return {
        "id": e.id, "at": _when(e.at), "message_id": e.message_id, "kind": e.kind, "sender": e.sender,
        "recipients": " ".join(e.recipients), "policy": e.policy, "entity": e.entity or "", "term": e.term,
        "pmi": d["pmi"], "threshold": d["threshold"], "action": e.action, "replacement": e.replacement,
        "part": e.part, "reason": e.reason, "group": " + ".join(e.group) if e.group else "",
        "earlier": " ".join(e.earlier), "actor": e.actor,
        "why": e.why,
    }  # fmt: skip
