"""A folder served over HTTP on 127.0.0.1 for the read-only place's tests: a JSON listing for a folder, files whole or
by Range (what any static file server with directory listings offers)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


def _handler(root: Path, asked: list[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet: the tests read what they need
            pass

        def do_GET(self) -> None:
            asked.append(unquote(urlsplit(self.path).path))
            path = root / unquote(urlsplit(self.path).path).lstrip("/")
            if root.resolve() not in (path.resolve(), *path.resolve().parents):
                self.send_error(403)
            elif path.is_dir():
                entries = [
                    {"name": e.name, "dir": e.is_dir(), "size": 0 if e.is_dir() else e.stat().st_size}
                    for e in sorted(os.scandir(path), key=lambda e: e.name)
                ]
                self._send(200, json.dumps(entries).encode())
            elif path.is_file():
                data = path.read_bytes()
                wanted = self.headers.get("Range")
                if wanted and wanted.startswith("bytes="):
                    low, _, high = wanted[len("bytes=") :].partition("-")
                    self._send(206, data[int(low) : int(high) + 1])
                else:
                    self._send(200, data)
            else:
                self.send_error(404)

        def _send(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextmanager
def serving(root: Path, asked: list[str] | None = None) -> Iterator[str]:
    """Serve root; yields HOST:PORT. asked: each path requested is appended to it, in order."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(root, asked if asked is not None else []))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
