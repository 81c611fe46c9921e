"""Row 2c: `scan ROOT --json --no-cache --jobs 1` over 5,000 Qwen3-8B-sized artifacts against a walker that reads and
parses exactly what the full check reads (both JSON documents, each .rbln's preamble and both header slots, the
newest valid header decoded), interleaved with the one-file walker of row 2 for the floor's own cost.

The ratio to the same-bytes walker is what the check's Python costs beyond reading and parsing its bytes.
`--against OLD` runs another checkout's scan (OLD/app first on PYTHONPATH) in the same rounds: a before/after
that the machine's load hits alike.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from _common import build_fleet, cli, interleave, machine, python, report, run, scratch
from _scan import SAME_BYTES_WALKER, WALKER


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--against", type=Path, help="another checkout, whose scan runs in the same rounds")
    args = parser.parse_args()
    print(machine())
    with scratch("scan") as root, scratch("cache") as cache:
        fleet = root / "fleet"
        build_fleet(fleet, args.count)
        scan = [*cli(), "scan", str(fleet), "--json", "--no-cache", "--jobs", "1"]
        print(f"load average before: {os.getloadavg()[0]:.1f}")
        commands = {
            "scan": run(scan, {"RBLN_STUDIO_CACHE_DIR": str(cache)}),
            "same-bytes": run([python(), "-c", SAME_BYTES_WALKER, str(fleet)]),
            "one-file": run([python(), "-c", WALKER, str(fleet)]),
        }
        if args.against is not None:
            old = {"RBLN_STUDIO_CACHE_DIR": str(cache), "PYTHONPATH": str(args.against.resolve() / "app")}
            commands["against"] = run(scan, old)
        times = interleave(commands, args.runs)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        report(
            f"same-bytes walker against the one-file walker, {args.count} artifacts",
            times["same-bytes"],
            times["one-file"],
            float("inf"),
        )
        report(
            f"scan --json --no-cache --jobs 1, {args.count} artifacts (row 2c)",
            times["scan"],
            times["same-bytes"],
            1.25,
        )
        if args.against is not None:
            report(f"{args.against}'s scan, the same rounds", times["against"], times["same-bytes"], 1.25)
            report("this checkout's scan against that one", times["scan"], times["against"], float("inf"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
