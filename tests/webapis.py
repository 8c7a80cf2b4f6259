"""Local stand-ins for the counting APIs sanigate can use as K, speaking their real wire formats.

- Elasticsearch/OpenSearch ``POST /{index}/_count`` with a ``query_string``
  query, answering ``{"count": n, "_shards": {...}}`` and ES error bodies;
- Bing Web Search v7 ``GET /v7.0/search?q=…`` with the
  ``Ocp-Apim-Subscription-Key`` header, answering a ``SearchResponse`` whose
  ``webPages.totalEstimatedMatches`` is the count (``webPages`` is absent
  when nothing matches) and Bing's error bodies.

Their "documents" are given as term -> document ids, so counts can be
checked against the local index built from the same corpus. Failures are
injected on demand: 5xx, 429 with Retry-After, slow replies.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

BING_KEY = "test-subscription-key"


def count_query(query: str, postings: Mapping[str, set[int]]) -> int:
    """Documents matching `"a" AND ("b" OR "c")`: the query language both configurations write."""
    docs: set[int] | None = None
    for conjunct in query.split(" AND "):
        terms = re.findall(r'"([^"]*)"', conjunct)
        matched = set().union(*(postings.get(t, set()) for t in terms)) if terms else set()
        docs = matched if docs is None else docs & matched
    return len(docs or set())


class FakeAPIs:
    def __init__(self, postings: Mapping[str, set[int]]) -> None:
        self.postings = postings
        self.requests = 0
        self.fail_next = 0  # answer 500 this many times
        self.throttle_next = 0  # answer 429 (Retry-After: 1) this many times
        self.delay = 0.0
        self.lock = threading.Lock()
        apis = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, status: int, body: object, headers: Mapping[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _injected(self, es: bool) -> bool:
                with apis.lock:
                    apis.requests += 1
                    fail, throttle = apis.fail_next > 0, apis.throttle_next > 0
                    apis.fail_next -= fail
                    apis.throttle_next -= throttle and not fail
                if apis.delay:
                    time.sleep(apis.delay)
                if fail:
                    body: object = (
                        {
                            "error": {
                                "root_cause": [{"type": "node_not_connected_exception", "reason": "down"}],
                                "type": "node_not_connected_exception",
                                "reason": "down",
                            },
                            "status": 500,
                        }
                        if es
                        else {"error": {"code": "InternalServerError", "message": "try again"}}
                    )
                    self._reply(500, body)
                    return True
                if throttle:
                    body = (
                        {"error": {"type": "es_rejected_execution_exception", "reason": "queue full"}, "status": 429}
                        if es
                        else {"error": {"code": "429", "message": "Rate limit is exceeded. Try again in 1 seconds."}}
                    )
                    self._reply(429, body, {"Retry-After": "1"})
                    return True
                return False

            def do_POST(self) -> None:  # Elasticsearch
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if not re.fullmatch(r"/[\w.-]+/_count", self.path):
                    self._reply(404, {"error": "no handler found for uri [" + self.path + "]", "status": 404})
                    return
                if self._injected(es=True):
                    return
                try:
                    query = json.loads(raw)["query"]["query_string"]["query"]
                except (ValueError, KeyError, TypeError):
                    self._reply(400, {"error": {"type": "parsing_exception", "reason": "bad query"}, "status": 400})
                    return
                n = count_query(query, apis.postings)
                self._reply(200, {"count": n, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0}})

            def do_GET(self) -> None:  # Bing Web Search v7
                url = urlparse(self.path)
                if url.path != "/v7.0/search":
                    self._reply(404, {"error": {"code": "404", "message": "Resource not found"}})
                    return
                if self.headers.get("Ocp-Apim-Subscription-Key") != BING_KEY:
                    self._reply(
                        401,
                        {
                            "error": {
                                "code": "401",
                                "message": "Access denied due to invalid subscription key or wrong API endpoint.",
                            }
                        },
                    )
                    return
                if self._injected(es=False):
                    return
                q = parse_qs(url.query).get("q", [""])[0]
                n = count_query(q, apis.postings)
                body: dict[str, object] = {
                    "_type": "SearchResponse",
                    "queryContext": {"originalQuery": q},
                    "rankingResponse": {},
                }
                if n:
                    body["webPages"] = {
                        "webSearchUrl": "https://www.bing.com/search?q=x",
                        "totalEstimatedMatches": n,
                        "value": [
                            {
                                "id": "https://api.bing.microsoft.com/api/v7/#WebPages.0",
                                "name": "A page",
                                "url": "https://example.org/",
                            }
                        ],
                    }
                self._reply(200, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
