"""Row 6b: `rbln-studio FOLDER` started fresh on 50,000 artifacts: the GUI thread's longest stall (10 ms heartbeat)
from the first event-loop turn until the scan has ended with every row in the table and its verdict, when the first
rows are painted, the window process's peak memory, and how long all verdicts took against `scan FOLDER --json` of
the same tree (an empty scan cache for both, one of each per round, alternating which goes first).

The same harness as row 6 (bench_gui_stall.py: the app started as the console script starts it, nothing of it
imported beforehand, an empty scan cache and settings), on the fleet of row 2b (bench_scan_fleet.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import build_fleet, cli, env, machine, require_space, scratch, write_bytecode
from bench_gui_stall import GOAL, noise_floor, one_run

FIRST_ROWS_GOAL = 0.2
VERDICTS_GOAL = 1.1


def cli_scan(folder: str, cache: str) -> float:
    """Seconds `scan FOLDER --json` takes with an empty scan cache, its output read and dropped."""
    shutil.rmtree(cache, ignore_errors=True)
    started = time.perf_counter()
    subprocess.run(
        [*cli(), "scan", folder, "--json"],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**env(), "RBLN_STUDIO_CACHE_DIR": cache},
    )
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    require_space(Path(tempfile.gettempdir()), args.count * 60_000)
    with scratch("gui-fleet") as root:
        started = time.perf_counter()
        build_fleet(root / "fleet", args.count)
        print(f"built {args.count:,} artifacts in {time.perf_counter() - started:.0f} s")
        worst, first_rows, shown, scans = [], [], [], []
        write_bytecode()  # an installed copy has it (_common.env)
        for run in range(args.runs):
            cli_first = run % 2 == 1
            if cli_first:
                scans.append(cli_scan(str(root / "fleet"), str(root / "cli-cache")))
            result = one_run(str(root / "fleet"), str(root), "filled", args.count)
            if not cli_first:
                scans.append(cli_scan(str(root / "fleet"), str(root / "cli-cache")))
            if result.shown is None or result.first_rows is None:
                sys.exit(f"run {run + 1}: the table never filled ({result.rows:,} rows at the longest gap)")
            worst.append(result.worst)
            first_rows.append(result.first_rows)
            shown.append(result.shown)
            print(
                f"run {run + 1}: first rows painted {result.first_rows:.2f} s after the first event-loop turn, "
                f"all {args.count:,} with verdicts in {result.shown:.1f} s (scan --json: {scans[-1]:.1f} s); longest gap {result.worst * 1000:.0f} ms at "
                f"{result.at:.1f} s with {result.rows:,} rows, 99th percentile {result.p99 * 1000:.0f} ms, "
                f"peak memory {result.peak_rss / 2**20:.0f} MiB (load average {os.getloadavg()[0]:.1f})"
            )
        med, rows_med = statistics.median(worst), statistics.median(first_rows)
        idle = noise_floor(20.0)
        print(
            f"noise floor: an idle bare window's longest gap over 20 s: {idle * 1000:.0f} ms (load {os.getloadavg()[0]:.1f})"
        )
        print(
            f"first rows painted: median {rows_med:.2f} s (goal <= {FIRST_ROWS_GOAL} s: "
            f"{'holds' if rows_med <= FIRST_ROWS_GOAL else 'MISSED'})"
        )
        verdicts = statistics.median(shown) / statistics.median(scans)
        print(
            f"all verdicts shown: median {statistics.median(shown):.1f} s against scan --json's "
            f"{statistics.median(scans):.1f} s: {verdicts:.2f}x (goal <= {VERDICTS_GOAL}: "
            f"{'holds' if verdicts <= VERDICTS_GOAL else 'MISSED'})"
        )
        print(f"longest stall: median {med * 1000:.0f} ms, worst {max(worst) * 1000:.0f} ms over {args.runs} runs")
        print(f"ratio {med / GOAL:.2f} of the 50 ms goal ({'holds' if med <= GOAL else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
