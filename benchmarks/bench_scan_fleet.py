"""Row 2b: `scan ROOT --json --no-cache` over 50,000 Qwen3-8B-sized artifacts against the bare walker, memory included.

The fleet is built as row 2's (each rbln_config.json a real copy, the .rbln files and config.json hard links),
500 folders of 100: about 2.2 GB of configs and a few seconds per 10,000 artifacts. Peak memory is the largest
sum of the resident set sizes of the process and its children (our scan's forked worker), sampled every 10 ms
from /proc, for ours and the walker alike. The goal: wall-clock ratio <= 1.0 and peak memory <= 2x the walker's
+ 100 MiB.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _common import build_fleet, cli, env, machine, python, require_space, scratch
from _scan import WALKER

PAGE = os.sysconf("SC_PAGE_SIZE")


def _tree_rss(pid: int) -> int:
    """Resident bytes of pid and its descendants (from /proc; 0 for a process that has just gone)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
            with open(f"/proc/{p}/task/{p}/children") as f:
                stack.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def measure(argv: Sequence[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the process and its children, peak resident bytes of the tree)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env())
    peak = 0
    while True:
        peak = max(peak, _tree_rss(proc.pid))
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.01)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{argv[:3]} failed with {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    require_space(Path(tempfile.gettempdir()), args.count * 60_000)
    with scratch("fleet") as root:
        started = time.perf_counter()
        build_fleet(root / "fleet", args.count)
        print(f"built {args.count:,} artifacts in {time.perf_counter() - started:.0f} s")
        commands = {
            "ours": [*cli(), "scan", str(root / "fleet"), "--json", "--no-cache"],
            "walker": [python(), "-c", WALKER, str(root / "fleet")],
        }
        results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in commands}
        for i in range(args.runs + 1):  # the first round fills the page cache and is not recorded
            order = list(commands.items())
            for name, argv in order if i % 2 else reversed(order):
                result = measure(argv)
                if i:
                    results[name].append(result)
            print(f"  load average {os.getloadavg()[0]:.2f} after round {i}")
        print(f"scan --json --no-cache, {args.count:,} artifacts (row 2b), {args.runs} interleaved rounds:")
        med: dict[str, tuple[float, float, float]] = {}
        for name, rows in results.items():
            wall, cpu, peak = (statistics.median(r[k] for r in rows) for k in range(3))
            med[name] = (wall, cpu, peak)
            print(f"  {name:7} wall {wall:6.2f} s  CPU {cpu:6.2f} s  peak memory {peak / 2**20:6.0f} MiB")
        limit = 2 * med["walker"][2] + 100 * 2**20
        memory_ok = med["ours"][2] <= limit
        print(
            f"  peak memory {med['ours'][2] / 2**20:.0f} MiB (limit {limit / 2**20:.0f} MiB: "
            f"{'holds' if memory_ok else 'MISSED'}); CPU ratio {med['ours'][1] / med['walker'][1]:.2f}"
        )
        ratio = med["ours"][0] / med["walker"][0]
        print(f"ratio {ratio:.2f} (goal <= 1.0: {'holds' if ratio <= 1.0 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
