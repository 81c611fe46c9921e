"""Rows 2 and 3: `scan ROOT --json` over 5,000 Qwen3-8B-sized artifacts, cold and warm, against a minimal walker."""

from __future__ import annotations

import argparse
import sys

from _common import build_fleet, cli, interleave, machine, python, report, run, scratch

WALKER = """
import json, os, sys
for dirpath, dirnames, filenames in os.walk(sys.argv[1]):
    if "rbln_config.json" in filenames:
        with open(os.path.join(dirpath, "rbln_config.json")) as f:
            json.load(f)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", choices=["cold", "warm"], help="print one row only")
    args = parser.parse_args()
    print(machine())
    with scratch("scan") as root, scratch("cache") as cache:
        fleet = root / "fleet"
        build_fleet(fleet, args.count)
        env_cache = {"RBLN_STUDIO_CACHE_DIR": str(cache)}
        scan = [*cli(), "scan", str(fleet), "--json"]
        actions = {"walker": run([python(), "-c", WALKER, str(fleet)])}
        fill = {}
        if args.only != "warm":
            actions["cold"] = run([*scan, "--no-cache"], env_cache)
        if args.only != "cold":
            actions["warm"] = run(scan, env_cache)
            fill["warm"] = run(scan, env_cache)  # nothing changed since this scan
        times = interleave(actions, args.runs, before_each=fill)
        if "cold" in times:
            report(f"scan --json --no-cache, {args.count} artifacts (row 2)", times["cold"], times["walker"], 1.3)
        if "warm" in times:
            report(f"scan --json, nothing changed, {args.count} artifacts (row 3)", times["warm"], times["walker"], 0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
