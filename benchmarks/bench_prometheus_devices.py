"""`devices --prometheus` of 1,000 NPU nodes against 10, and `place` across the 1,000 against `devices`.

    python benchmarks/bench_prometheus_devices.py [--nodes 1000] [--few 10] [--runs 5]

Two real Prometheus servers (Debian's `prometheus`, tests/prometheus/promserver.py) on 127.0.0.1 scrape the
exporter stand-in (tests/prometheus/fake_exporter.py) in its gateway mode: one has 1,000 targets, the other 10,
each a node of 8 RBLN-CR13 in the exporter's legacy names, half of them held by a pod. Each command runs as a
whole process (the installed rbln-studio-cli), the four interleaved round by round; `place` places a Qwen3-8B
compiled for one RBLN-CR13. The goals: 1,000 nodes cost at most 2x what 10 cost (a query per name family reads them all,
never one per node), and `place` across the 1,000 at most 2x `devices` of them. The worse ratio is printed last.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from _common import REPO, cli, compile_reference, interleave, machine, report, run, scratch

sys.path.insert(0, str(REPO / "tests"))

from prometheus.promserver import missing, running_exporter, running_prometheus

from rbln_artifact_studio.cli.commands.fleet import json_text
from rbln_artifact_studio.remote.prometheus.client import Deadline, PrometheusClient
from rbln_artifact_studio.remote.prometheus.reader import (
    DOWN,
    Gauge,
    Target,
    _Gauges,
    fleet_from_answers,
    status_queries,
)

CR13 = 150_323_855_360
GIB = 2**30


def _node() -> dict[str, object]:
    devices = []
    for i in range(8):
        pod = {"namespace": "serving", "pod": f"llm-{i // 2}", "container": "vllm"} if i % 2 == 0 else None
        devices.append(
            {"card": "RBLN-CR13", "used": (i * 9 + 3) * GIB, "total": CR13, "util": 40.0 + i, "temperature": 40 + i,
             "power": 90.5, "pod": pod}
        )  # fmt: skip
    return {"family": "legacy", "devices": devices}


def _server_cpu(url: str) -> float:
    """Prometheus' own CPU seconds so far (its process_cpu_seconds_total), scraping included."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith("process_cpu_seconds_total "):
                return float(line.split()[1])
    raise RuntimeError(f"{url}/metrics has no process_cpu_seconds_total")


def _server_share(url: str, argv: list[str], runs: int = 3) -> float:
    """Prometheus' median CPU seconds while the command runs, less what its scraping took in as long idle."""
    spent = []
    for _ in range(runs):
        before, start = _server_cpu(url), time.monotonic()
        run(argv)()
        answered, took = _server_cpu(url) - before, time.monotonic() - start
        before = _server_cpu(url)
        time.sleep(took)
        spent.append(answered - (_server_cpu(url) - before))
    return statistics.median(spent)


def _client_profile(url: str) -> str:
    """Where the client's time goes for the 1,000 nodes, in this process: Prometheus answering (the request,
    gzip-compressed, as the reader asks), decoding, grouping the series into nodes, writing the JSON."""
    client, deadline = PrometheusClient(url), Deadline(120)  # its own steps, as read_fleet takes them
    gc.disable()  # as the command has it (cli/commands/fleet.py: no cycle collection while a Prometheus' fleet is read)
    try:
        return _client_steps(client, deadline)
    finally:
        gc.enable()


def _client_steps(client: PrometheusClient, deadline: Deadline) -> str:
    """The answers' wall time (Prometheus, transfer, gunzip, decoding and grouping as they arrive: one step), then
    the rows' and the JSON's CPU time (less moved by the machine's load)."""
    start = time.perf_counter()
    gauges, targets = _Gauges(), list[Target]()
    for query in status_queries(""):
        client.query(query, Gauge, gauges.take, deadline)
    client.query(DOWN, Target, targets.extend, deadline)
    steps = [f"answers, decoded and grouped {(time.perf_counter() - start) * 1000:.0f} ms wall"]
    start = time.process_time()
    readings = fleet_from_answers(client, gauges, targets, None)
    steps.append(f"rows of {len(gauges.npus):,} NPUs {(time.process_time() - start) * 1000:.0f} ms CPU")
    start = time.process_time()
    json_text([r.to_json() for r in readings])
    steps.append(f"write the JSON {(time.process_time() - start) * 1000:.0f} ms CPU")
    return ", ".join(steps)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--few", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--interval", default="15s", help="the scrape interval (the 1,000 targets' load on the stand-in)"
    )
    args = parser.parse_args()
    absent = missing()
    if absent is not None:
        print(f"skipped: needs {absent}")
        return 0
    print(machine())
    print(f"load at the start: {Path('/proc/loadavg').read_text().strip()}")
    with scratch("prometheus-devices") as root:
        state = root / "exporter.json"
        state.write_text(json.dumps({"nodes": {}, "template": _node()}))
        artifact = compile_reference(root / "qwen3-8b-cr13")
        many = [f"node-{i:04d}" for i in range(args.nodes)]
        few = [f"few-{i:04d}" for i in range(args.few)]
        with (
            running_exporter(state) as gateway,
            running_prometheus(root / "many", gateway, many, args.interval, wait_targets=False) as big,
            running_prometheus(root / "few", gateway, few, args.interval, wait_targets=False) as small,
        ):
            big.wait_scraped(len(many))
            small.wait_scraped(len(few))
            actions = {
                "devices-many": run([*cli(), "devices", "--prometheus", big.url, "--json"]),
                "devices-few": run([*cli(), "devices", "--prometheus", small.url, "--json"]),
                "place-many": run([*cli(), "place", str(artifact), "--prometheus", big.url, "--json"]),
            }
            times = interleave(actions, args.runs)
            devices = [*cli(), "devices", "--prometheus"]
            print(
                f"Prometheus' own CPU per devices run (median of 3, its scraping taken out): {args.nodes} nodes "
                f"{_server_share(big.url, [*devices, big.url, '--json']) * 1000:.0f} ms, {args.few} nodes "
                f"{_server_share(small.url, [*devices, small.url, '--json']) * 1000:.0f} ms"
            )
            print(f"the client, {args.nodes} nodes, in one process: {_client_profile(big.url)}")
            # Where the 1,000 nodes' time goes: Prometheus' own evaluation of the legacy names' query (its stats), beside
            # the client's CPU time that report() prints.
            data = big.api("query", {"query": status_queries("")[0], "stats": "all"}, timeout=120)
            timings = data.get("stats", {}).get("timings", {})
            print(
                f"Prometheus itself, {len(data['result']):,} series for {args.nodes} nodes: evaluation "
                f"{float(timings.get('evalTotalTime', 0)) * 1000:.0f} ms (one run, after the rounds)"
            )
        nodes = f"{args.nodes} nodes of 8 NPUs vs {args.few}"
        devices_ratio = report(f"devices --prometheus: {nodes}", times["devices-many"], times["devices-few"], 2.0)
        place_ratio = report(
            f"place across {args.nodes} nodes vs devices of them", times["place-many"], times["devices-many"], 2.0
        )
    print(f"load at the end: {Path('/proc/loadavg').read_text().strip()}")
    worst = max(devices_ratio, place_ratio)
    print(f"ratio {worst:.2f} (the worse of the two; goal <= 2: {'holds' if worst <= 2 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
