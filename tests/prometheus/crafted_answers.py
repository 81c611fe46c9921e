"""A stand-in of Prometheus' HTTP API whose answers a test sets whole, per query (what a real Prometheus would not
say on cue: a partial answer's warnings and infos, figures no NPU has, a gzip bomb, its own clock), and which
remembers each request's parameters. (prometheus/crafted.py serves given series for every query, and redirects.)

    with crafted_prometheus() as api:
        api.vector([gauge("rbln_npu_memory_total", "node-1", 0, "1e+31")], warnings=["partial response"])
        run_cli("devices", "--prometheus", api.url)

An instant query is answered by the first answer set whose `query_has` is in the query (set without one: every
query naming an exporter metric); `up == 0` and every other query get an empty vector, `time()` the stand-in's
clock. Standard library only.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from prometheus.fake_exporter import QuietServer

CR13 = 150_323_855_360


def gauge(name: str, host: str, npu: int, value: str, card: str = "RBLN-CR13", **labels: str) -> dict[str, Any]:
    """One series as rbln-metrics-exporter labels it, at the stand-in's now."""
    metric = {
        "__name__": name,
        "card": card,
        "name": f"rbln{npu}",
        "uuid": f"{host}-rbln{npu}-uuid",
        "deviceID": str(npu),
        "hostname": host,
        "driver_version": "1.3.73",
        "firmware_version": "2.1.0",
        "instance": f"{host}:50051",
        "job": "rbln",
        **labels,
    }
    return {"metric": metric, "value": [time.time(), value]}


def npu(host: str, npu: int, used: str, total: str = str(CR13), card: str = "RBLN-CR13") -> list[dict[str, Any]]:
    """An NPU's memory gauges in the current names."""
    return [
        gauge("rbln_npu_memory_used", host, npu, used, card),
        gauge("rbln_npu_memory_total", host, npu, total, card),
    ]


@dataclass
class Answer:
    body: bytes
    query_has: str = ""
    zipped: bool = False  # sent with Content-Encoding: gzip (body is then the compressed bytes)
    served: threading.Event = field(default_factory=threading.Event)


@dataclass
class CraftedPrometheus:
    url: str = ""
    answers: list[Answer] = field(default_factory=list)
    asked: list[dict[str, str]] = field(default_factory=list)  # each request's parameters (and `path`)
    clock_offset: float = 0.0  # the stand-in's clock: this computer's plus this

    def vector(
        self,
        series: list[dict[str, Any]],
        query_has: str = "",
        warnings: list[str] | None = None,
        infos: list[str] | None = None,
    ) -> Answer:
        """Answer queries with this vector (and these warnings / infos beside it, as Prometheus writes them)."""
        answer: dict[str, Any] = {"status": "success", "data": {"resultType": "vector", "result": series}}
        if warnings:
            answer["warnings"] = warnings
        if infos:
            answer["infos"] = infos
        return self.raw(json.dumps(answer, separators=(",", ":")).encode(), query_has)

    def raw(self, body: bytes, query_has: str = "", zipped: bool = False) -> Answer:
        answer = Answer(body, query_has, zipped)
        self.answers.insert(0, answer)  # the newest first: a test's later answer wins
        return answer

    def pick(self, query: str) -> Answer | None:
        if query.strip() == "up == 0":
            return next((a for a in self.answers if a.query_has == "up == 0"), None)
        for answer in self.answers:
            if answer.query_has and answer.query_has in query:
                return answer
        names_a_metric = "rbln_npu_" in query or "RBLN_DEVICE_STATUS" in query
        return next((a for a in self.answers if not a.query_has), None) if names_a_metric else None


def _empty(kind: str = "vector") -> bytes:
    return json.dumps({"status": "success", "data": {"resultType": kind, "result": []}}).encode()


@contextmanager
def crafted_prometheus() -> Iterator[CraftedPrometheus]:
    """The stand-in on 127.0.0.1 for the length of the block, serving from a thread of this process."""
    api = CraftedPrometheus()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            params = {k: v[0] for k, v in parse_qs(parts.query).items()}
            api.asked.append({"path": parts.path, **params})
            query = params.get("query", "")
            zipped = False
            if query.strip() == "time()":
                now = time.time() + api.clock_offset
                body = json.dumps({"status": "success", "data": {"resultType": "scalar", "result": [now, str(now)]}})
                data = body.encode()
                answer = None
            else:
                answer = api.pick(query)
                kind = "matrix" if parts.path.endswith("query_range") else "vector"
                data, zipped = (answer.body, answer.zipped) if answer is not None else (_empty(kind), False)
            if not zipped and "gzip" in self.headers.get("Accept-Encoding", "") and len(data) > 1024:
                data, zipped = gzip.compress(data, 1), True
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if zipped:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            finally:
                if answer is not None:
                    answer.served.set()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server: ThreadingHTTPServer = QuietServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
