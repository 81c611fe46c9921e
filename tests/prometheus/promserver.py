"""A throwaway Prometheus on 127.0.0.1 (Debian's `prometheus` package) scraping the exporter stand-in in its
gateway mode, with a temporary TSDB (standard library only: the benchmark uses it too).

`running_prometheus` writes the scrape configuration docs/servers.md shows (relabel_configs turning each target
HOST:PORT into `?target=HOST:PORT` on the gateway), starts Prometheus, waits for /-/ready and then until every
target has been scraped once (the API answers `up` for each), all bounded.
"""

from __future__ import annotations

import base64
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from prometheus import fake_exporter

PROMETHEUS = "prometheus"
# basic_auth_users of Prometheus' --web.config.file take bcrypt hashes. The venv has no bcrypt package, so this
# is a precomputed hash (cost 4: each request is checked quickly) of PASSWORD.
USER = "studio"
PASSWORD = "rbln-studio-test"
BCRYPT = "$2b$04$3ngHbY1io0KOLmI2V1pGF.3K.aWOZn4dPZOSRXC1pXErylExYI6Sm"
START_LIMIT = 60.0


def missing() -> str | None:
    """What is not installed, or None."""
    if shutil.which(PROMETHEUS) is None:
        return "the prometheus binary (Debian package prometheus)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Prometheus:
    url: str
    dir: Path
    auth: tuple[str, str] | None  # basic auth it asks for, if any
    ca_file: Path | None = None  # the certificate it serves HTTPS with (self-signed: its own CA), if any

    def _open(self, request: urllib.request.Request, timeout: float) -> Any:
        context = ssl.create_default_context(cafile=str(self.ca_file)) if self.ca_file else None
        return urllib.request.urlopen(request, timeout=timeout, context=context)

    def api(self, path: str, params: dict[str, str], timeout: float = 10.0) -> Any:
        """GET /api/v1/<path> and its `data` (for the fixtures' waits, not the code under test)."""
        request = urllib.request.Request(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}")
        if self.auth is not None:
            token = base64.b64encode(f"{self.auth[0]}:{self.auth[1]}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        with self._open(request, timeout) as response:
            return json.load(response)["data"]

    def instant(self, query: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.api("query", {"query": query})["result"]
        return result

    def wait_scraped(self, count: int) -> None:
        """Until every one of the job's `count` targets has been scraped once (Prometheus hands new targets to
        its scrapers on a 5 s tick, so this is most of a start)."""
        self.wait_for(
            'count(up{job="rbln"})',
            lambda r: bool(r) and int(float(r[0]["value"][1])) >= count,
            START_LIMIT,
            f"every one of the {count} targets scraped",
        )

    def wait_for(self, query: str, ok: Any, limit: float = 30.0, what: str = "") -> list[dict[str, Any]]:
        """Poll an instant query until ok(result) holds (bounded): a scrape has happened, not a guessed sleep."""
        end = time.monotonic() + limit
        result: list[dict[str, Any]] = []
        while time.monotonic() < end:
            try:
                result = self.instant(query)
            except (OSError, urllib.error.URLError, KeyError, ValueError):
                result = []
            if ok(result):
                return result
            time.sleep(0.1)
        raise RuntimeError(f"Prometheus did not show {what or query} within {limit:g} s (last: {result})")


def scrape_config(gateway: str, targets: Sequence[str], interval: str = "1s", port: int = 50051) -> str:
    """prometheus.yml for the exporter's gateway mode (docs/servers.md shows the same), plus a job whose only
    target refuses: a down target that is no NPU node."""
    listed = json.dumps([f"{t}:{port}" for t in targets])
    return f"""global:
  scrape_interval: {interval}
  scrape_timeout: {interval}
scrape_configs:
  - job_name: rbln
    metrics_path: /metrics
    static_configs:
      - targets: {listed}
    relabel_configs:
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - target_label: __address__
        replacement: {gateway}
  - job_name: unrelated
    static_configs:
      - targets: ["127.0.0.1:{free_port()}"]
"""


def self_signed(root: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (openssl), for a Prometheus that serves HTTPS."""
    cert, key = root / "tls.crt", root / "tls.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@contextmanager
def running_exporter(state: Path) -> Iterator[str]:
    """The stand-in serving state in a thread of this process; yields its address HOST:PORT."""
    server: ThreadingHTTPServer = fake_exporter.serve(state)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def running_prometheus(
    root: Path,
    gateway: str,
    targets: Sequence[str],
    interval: str = "1s",
    basic_auth: bool = False,
    wait_targets: bool = True,
    tls: bool = False,
) -> Iterator[Prometheus]:
    """Prometheus for the length of the block, scraping targets through the gateway; ready, and each target
    scraped once unless wait_targets is False (then call wait_scraped: several servers can start at once)."""
    root.mkdir(parents=True, exist_ok=True)
    config = root / "prometheus.yml"
    config.write_text(scrape_config(gateway, targets, interval))
    port = free_port()
    argv = [
        PROMETHEUS,
        f"--config.file={config}",
        f"--storage.tsdb.path={root / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    web = ""
    if basic_auth:
        web += f'basic_auth_users:\n  {USER}: "{BCRYPT}"\n'
    cert: Path | None = None
    if tls:
        cert, key = self_signed(root)
        web += f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
    if web:
        (root / "web.yml").write_text(web)
        argv.append(f"--web.config.file={root / 'web.yml'}")
    log = root / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    scheme = "https" if tls else "http"
    server = Prometheus(f"{scheme}://127.0.0.1:{port}", root, (USER, PASSWORD) if basic_auth else None, cert)
    try:
        _wait_ready(server, proc, log)
        if wait_targets:
            server.wait_scraped(len(targets))
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_ready(server: Prometheus, proc: subprocess.Popen[bytes], log: Path) -> None:
    end = time.monotonic() + START_LIMIT
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"prometheus exited with {proc.returncode}: {log.read_text()[-2000:]}")
        request = urllib.request.Request(f"{server.url}/-/ready")
        if server.auth is not None:
            token = base64.b64encode(f"{server.auth[0]}:{server.auth[1]}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        try:
            with server._open(request, 2) as response:
                if response.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"prometheus was not ready within {START_LIMIT:g} s: {log.read_text()[-2000:]}")
