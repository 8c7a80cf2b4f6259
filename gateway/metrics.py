"""Prometheus metrics: messages by outcome, decisions by entity, latency."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        self.messages = Counter("sanigate_messages", "Messages by outcome", ["outcome"], registry=self.registry)
        self.decisions = Counter(
            "sanigate_decisions", "Disclosure decisions by entity and action", ["entity", "action"],
            registry=self.registry,
        )  # fmt: skip
        self.latency = Histogram(
            "sanigate_message_seconds", "Time from end of DATA to the reply", buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )  # fmt: skip
        self.in_flight = Gauge("sanigate_in_flight", "Messages being sanitized or relayed", registry=self.registry)

    def serve(self, host: str, port: int) -> Any:
        """Start the /metrics endpoint in a thread; returns the HTTP server (its port may be 0 → chosen)."""
        server, _thread = start_http_server(port, addr=host, registry=self.registry)
        return server
