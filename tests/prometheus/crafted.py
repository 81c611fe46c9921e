"""A stand-in for Prometheus' HTTP API that serves crafted answers: the series a test gives, whatever the query,
and the Authorization header of every request kept. What a real Prometheus will not store (a CR or an ESC in a
label value it got from a hostile exporter is stored as is, but setting one up takes an exporter per case) is
served directly; everything else is tested against the real one (servers.py)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

CR13 = 150_323_855_360


def npu(host: str, device: str, used: int, total: int = CR13, **labels: str) -> list[tuple[dict[str, str], int]]:
    """One NPU's used and total series, in the exporter's current names, with its labels (pod, container...)."""
    common = {"card": "RBLN-CR13", "name": device, "uuid": f"{host}-{device}", "hostname": host, **labels}
    return [
        ({"__name__": "rbln_npu_memory_used", **common}, used),
        ({"__name__": "rbln_npu_memory_total", **common}, total),
    ]


@dataclass
class Crafted:
    """The stand-in's address, what it serves and what it was sent."""

    url: str = ""
    series: list[tuple[dict[str, str], int]] = field(default_factory=list)
    redirect: str = ""  # when set, every request is answered 302 with this Location
    authorizations: list[str] = field(default_factory=list)


@contextmanager
def crafted_prometheus() -> Iterator[Crafted]:
    crafted = Crafted()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            crafted.authorizations.append(self.headers.get("Authorization", ""))
            if crafted.redirect:
                self.send_response(302)
                self.send_header("Location", crafted.redirect)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path = urlsplit(self.path).path
            now = time.time()
            if path.endswith("/query"):
                result = [{"metric": m, "value": [now, str(v)]} for m, v in crafted.series]
                data = {"resultType": "vector", "result": result}
            elif path.endswith("/query_range"):
                result = [{"metric": m, "values": [[now, str(v)]]} for m, v in crafted.series]
                data = {"resultType": "matrix", "result": result}
            else:
                self.send_error(404)
                return
            body = json.dumps({"status": "success", "data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serving(Handler) as crafted.url:
        yield crafted


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 answering with handler, on a thread, for the block: its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
