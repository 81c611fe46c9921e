"""A stand-in for rbln-metrics-exporter in gateway mode (it stands for the hardware): one process serving
`/metrics?target=HOST:PORT` for many nodes, in either of the exporter's metric name families.

What each node reports comes from a JSON state file, read again whenever it changes, so a test changes a node's
figures (a past peak) while Prometheus scrapes:

    {"nodes": {"node-a": {"family": "legacy" | "current", "down": false, "driver_version": "1.3.73",
                          "devices": [{"card": "RBLN-CR13", "used": BYTES, "total": BYTES, "util": 12.5,
                                       "temperature": 41, "power": 70.5, "name": "rbln0",
                                       "pod": {"namespace": "team-a", "pod": "llm-0", "container": "vllm"}}]}},
     "template": {... a node, for every target the file does not name (the benchmark's 1,000 nodes) ...}}

A node marked `down` answers 503 (its rbln daemon refuses), as the exporter does when it cannot reach a node:
Prometheus then records `up == 0` for it. Standard library only (the benchmark runs it too).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

LEGACY = {
    "used": "RBLN_DEVICE_STATUS:DRAM_USED",
    "total": "RBLN_DEVICE_STATUS:DRAM_TOTAL",
    "util": "RBLN_DEVICE_STATUS:UTILIZATION",
    "temperature": "RBLN_DEVICE_STATUS:TEMPERATURE",
    "power": "RBLN_DEVICE_STATUS:CARD_POWER",
}
CURRENT = {
    "used": "rbln_npu_memory_used",
    "total": "rbln_npu_memory_total",
    "util": "rbln_npu_utilization",
    "temperature": "rbln_npu_temperature",
    "power": "rbln_npu_power",
}
HELP = {"used": "DRAM used (bytes)", "total": "DRAM total (bytes)", "util": "utilization (%)"}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(host: str, node: dict[str, Any]) -> str:
    """The exposition text the exporter serves for one node: every metric of every device, its labels as the
    exporter sets them (pod labels empty where no pod holds the NPU)."""
    names = CURRENT if node.get("family") == "current" else LEGACY
    lines: list[str] = []
    for kind, metric in names.items():
        lines.append(f"# HELP {metric} {HELP.get(kind, kind)}")
        lines.append(f"# TYPE {metric} gauge")
        for i, device in enumerate(node.get("devices", [])):
            if device.get(kind) is None:
                continue
            name = device.get("name", f"rbln{i}")
            pod = device.get("pod") or {}
            labels = {
                "card": device.get("card", "RBLN-CR13"),
                "name": name,
                "uuid": device.get("uuid", f"{host}-{name}-uuid"),
                "deviceID": str(device.get("device_id", i)),
                "hostname": host,
                "driver_version": node.get("driver_version", "1.3.73"),
                "firmware_version": node.get("firmware_version", "2.1.0"),
                "namespace": pod.get("namespace", ""),
                "pod": pod.get("pod", ""),
                "container": pod.get("container", ""),
            }
            text = ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items())
            lines.append(f"{metric}{{{text}}} {device[kind]}")
    return "\n".join(lines) + "\n"


class State:
    """The state file, read again when its modification time changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stamp: int | None = None
        self.data: dict[str, Any] = {}
        self.lock = threading.Lock()

    def node(self, host: str) -> dict[str, Any] | None:
        with self.lock:
            stamp = self.path.stat().st_mtime_ns
            if stamp != self.stamp:
                self.data, self.stamp = json.loads(self.path.read_text()), stamp
            nodes = self.data.get("nodes", {})
            found = nodes.get(host, self.data.get("template"))
            return dict(found) if found is not None else None


def serve(state_file: Path, port: int = 0) -> ThreadingHTTPServer:
    """The stand-in on 127.0.0.1:port (0: a free one), not yet serving (call serve_forever)."""
    state = State(state_file)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            target = parse_qs(parts.query).get("target", [""])[0]
            host = target.rsplit(":", 1)[0]
            node = state.node(host) if parts.path == "/metrics" and host else None
            if node is None:
                self._answer(404, f"no node {target!r} here\n")
            elif node.get("down"):
                self._answer(503, f"cannot reach the rbln daemon at {target}: connection refused\n")
            else:
                self._answer(200, render(host, node))

        def _answer(self, status: int, text: str) -> None:
            body = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # a scrape a second per node: not logged
            pass

    server = QuietServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server


class QuietServer(ThreadingHTTPServer):
    """A server that lets a client hang up mid-answer (Prometheus stopped at a test's end) without printing a
    traceback: printed from its thread, it landed in whichever test ran next, as that test's own stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--state", type=Path, required=True, help="the JSON state file")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", type=Path, help="write the port listened on here once listening")
    args = parser.parse_args()
    server = serve(args.state, args.port)
    if args.port_file is not None:
        tmp = args.port_file.with_suffix(".tmp")
        tmp.write_text(str(server.server_address[1]))
        os.replace(tmp, args.port_file)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever(poll_interval=0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
