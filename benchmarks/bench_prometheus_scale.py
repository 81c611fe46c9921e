"""Fleet scale: `devices --prometheus` of 10,000 nodes × 8 NPUs (80,000 NPUs, five gauges each) and `place` across them.

    python benchmarks/bench_prometheus_scale.py [--nodes 10000] [--runs 3]

The answers come from a stand-in of Prometheus' HTTP API (a process of its own, standard library only): for a query
it answers every series of the metric names the query names, in the exporter's current names (`rbln_npu_*`, labels
as rbln-metrics-exporter sets them), gzip'd when asked, each distinct answer built once and then served from memory,
so what is measured is the client. Each command runs as a whole process (the installed rbln-studio-cli); its wall
time less the stand-in's CPU during it, and its peak memory (ru_maxrss), are printed. The goals (issue 44): `devices`
≤ 2.0 s and ≤ 250 MB; `place` ≤ 1.2× `devices`. The stand-in's own CPU is printed and taken out of each figure.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from _common import cli, compile_reference, env, machine, scratch

CR13 = 150_323_855_360
GIB = 2**30
NAMES = (
    "rbln_npu_memory_used",
    "rbln_npu_memory_total",
    "rbln_npu_utilization",
    "rbln_npu_temperature",
    "rbln_npu_power",
)

# The stand-in, run as `python -c STAND_IN PORT_FILE NODES`: it writes its port to PORT_FILE once it listens.
STAND_IN = r"""
import gzip, json, re, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

NODES = int(sys.argv[2])
NAMES = ("rbln_npu_memory_used", "rbln_npu_memory_total", "rbln_npu_utilization", "rbln_npu_temperature",
         "rbln_npu_power")
CR13, GIB = 150_323_855_360, 2**30
NOW = time.time()


def value(name, node, i):
    if name == "rbln_npu_memory_used":
        return str(((node * 7 + i * 9) % 120 + 1) * GIB)
    if name == "rbln_npu_memory_total":
        return str(CR13)
    if name == "rbln_npu_utilization":
        return str(float((node + i) % 100))
    if name == "rbln_npu_temperature":
        return str(35 + (node + i) % 30)
    return str(80.5 + i)


def series(names):
    out = []
    for name in names:
        for node in range(NODES):
            host = "npu-%05d" % node
            for i in range(8):
                labels = {"__name__": name, "card": "RBLN-CR13", "name": "rbln%d" % i, "deviceID": str(i),
                          "uuid": "%08x-0000-4000-8000-%012x" % (node, i), "hostname": host,
                          "driver_version": "1.3.73", "firmware_version": "2.0.1", "instance": host + ":50051",
                          "job": "rbln-metrics-exporter"}
                out.append({"metric": labels, "value": [NOW, value(name, node, i)]})
    return out


ANSWERS = {}


def answer(kind, query):
    key = (kind, query)
    if key not in ANSWERS:
        names = [n for n in NAMES if n in query]
        if query.strip() in ("time()", "vector(time())"):
            data = {"resultType": "scalar", "result": [NOW, str(NOW)]}
        elif kind == "query_range":
            data = {"resultType": "matrix",
                    "result": [{"metric": s["metric"], "values": [s["value"]]} for s in series(names)]}
        else:
            data = {"resultType": "vector", "result": series(names)}
        raw = json.dumps({"status": "success", "data": data}).encode()
        ANSWERS[key] = (raw, gzip.compress(raw, 1))
    return ANSWERS[key]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        parts = urlsplit(self.path)
        form = parse_qs(parts.query)
        if parts.path == "/cpu":
            import os
            t = os.times()
            body = str(t.user + t.system).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        kind = parts.path.rsplit("/", 1)[-1]
        raw, packed = answer(kind, form.get("query", [""])[0])
        zipped = "gzip" in self.headers.get("Accept-Encoding", "")
        body = packed if zipped else raw
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if zipped:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
"""


@contextlib.contextmanager
def stand_in(root: Path, nodes: int) -> Iterator[str]:
    """The stand-in of Prometheus' API for `nodes` nodes, in a process of its own for the block: its URL."""
    port_file = root / "port"
    process = subprocess.Popen([sys.executable, "-c", STAND_IN, str(port_file), str(nodes)])
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists():
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit("the stand-in did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text()}"
    finally:
        process.terminate()
        process.wait(30)


def stand_in_cpu(url: str) -> float:
    with urllib.request.urlopen(f"{url}/cpu", timeout=30) as answer:
        return float(answer.read())


def _measure(argv: list[str], url: str) -> tuple[float, float, float]:
    """One whole process: (wall seconds less the stand-in's CPU meanwhile, the stand-in's CPU, peak RSS in MiB)."""
    before = stand_in_cpu(url)
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env())
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):  # 1: a place that does not fit anywhere is still an answer
        raise SystemExit(f"{argv} exited {process.returncode}")
    spent = stand_in_cpu(url) - before
    return wall - spent, spent, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    with scratch("prom-scale") as root, stand_in(root, args.nodes) as url:
        artifact = compile_reference(root / "qwen3-8b")
        devices = [*cli(), "devices", "--prometheus", url, "--json", "--timeout", "300"]
        place = [*cli(), "place", str(artifact), "--prometheus", url, "--json", "--timeout", "300"]
        for argv in (devices, place):  # warm-up: the stand-in builds each answer once, bytecode is written
            _measure(argv, url)
        figures: dict[str, list[tuple[float, float, float]]] = {"devices": [], "place": []}
        for i in range(args.runs):
            for name, argv in (("devices", devices), ("place", place))[:: 1 if i % 2 else -1]:
                figures[name].append(_measure(argv, url))
    medians = {name: [statistics.median(f[k] for f in runs) for k in range(3)] for name, runs in figures.items()}
    npus = args.nodes * 8
    for name, (wall, spent, peak) in medians.items():
        print(
            f"{name}: {wall:.2f} s less the stand-in's {spent:.2f} s of CPU, peak {peak:.0f} MiB "
            f"({npus:,} NPUs, {npus * len(NAMES):,} series), medians of {args.runs}"
        )
    devices_wall, _, devices_peak = medians["devices"]
    ratio = medians["place"][0] / devices_wall
    print(f"devices: {devices_wall:.2f} s (goal <= 2.0 s: {'holds' if devices_wall <= 2.0 else 'MISSED'})")
    print(
        f"devices: peak {devices_peak:.0f} MiB (goal <= 250 MB: {'holds' if devices_peak <= 250e6 / 2**20 else 'MISSED'})"
    )
    print(f"ratio {ratio:.2f} place/devices (goal <= 1.2: {'holds' if ratio <= 1.2 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
