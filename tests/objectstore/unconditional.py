"""An HTTP gateway on 127.0.0.1 in front of the real SeaweedFS, in two modes.

unconditional_gateway: a store that ignores conditional writes. It drops If-Match / If-None-Match from every PUT
(re-signing the request with the store's keys, as a gateway that terminates S3 auth does) and passes every other
request through byte for byte. The writes reach the real store; only their conditions are lost, as on a store or
gateway that does not implement them.

recording_gateway: every request passed through unchanged, and each one's method, target, copy source and body
sizes recorded, so a test can see which bytes crossed the wire and which the store moved itself.
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from objectstore.seaweed import Seaweed

CONDITIONS = ("if-match", "if-none-match")
RESIGNED = ("authorization", "x-amz-date", "x-amz-content-sha256", "content-length", *CONDITIONS)
HOP = ("connection", "keep-alive", "transfer-encoding", "content-length")


def _resigned(
    store: Seaweed, method: str, host: str, path: str, headers: dict[str, str], body: bytes
) -> dict[str, str]:
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    kept = {k: v for k, v in headers.items() if k.lower() not in RESIGNED}
    request = AWSRequest(method=method, url=f"http://{host}{path}", data=body, headers=kept)
    S3SigV4Auth(Credentials(store.access_key, store.secret_key), "s3", "us-east-1").add_auth(request)
    return {**dict(request.headers.items()), "Content-Length": str(len(body))}


@dataclass(frozen=True)
class Exchange:
    """One request through the recording gateway."""

    method: str
    target: str  # path and query
    copy_source: str | None  # x-amz-copy-source: bytes the store copies itself
    sent: int  # request body bytes
    received: int  # response body bytes


@contextmanager
def unconditional_gateway(store: Seaweed) -> Iterator[str]:
    """The endpoint URL of a gateway that drops write conditions, while it runs."""
    with _gateway(store, None) as endpoint:
        yield endpoint


@contextmanager
def recording_gateway(store: Seaweed, log: list[Exchange]) -> Iterator[str]:
    """The endpoint URL of a gateway that changes nothing and appends every exchange to log, while it runs."""
    with _gateway(store, log) as endpoint:
        yield endpoint


@contextmanager
def _gateway(store: Seaweed, log: list[Exchange] | None) -> Iterator[str]:
    upstream = urlsplit(store.endpoint)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = dict(self.headers.items())
            if log is None and self.command == "PUT" and any(k.lower() in CONDITIONS for k in headers):
                headers = _resigned(store, "PUT", self.headers["Host"], self.path, headers, body)
            connection = http.client.HTTPConnection(upstream.hostname or "127.0.0.1", upstream.port, timeout=60)
            try:
                connection.request(self.command, self.path, body=body, headers=headers)
                answer = connection.getresponse()
                data = answer.read()
            finally:
                connection.close()
            if log is not None:
                source = next((v for k, v in headers.items() if k.lower() == "x-amz-copy-source"), None)
                with lock:
                    log.append(Exchange(self.command, self.path, source, len(body), len(data)))
            self.send_response(answer.status, answer.reason)
            for key, value in answer.getheaders():
                if key.lower() not in HOP:
                    self.send_header(key, value)
            size = answer.getheader("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", size or str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
