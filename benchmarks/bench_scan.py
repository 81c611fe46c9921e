"""Scan of 5,000 Qwen3-8B-sized artifacts: cold (--no-cache) and warm (nothing changed) against a minimal walker."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from _common import build_fleet, cli, report, time_command

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
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="rbln-bench-scan-"))
    cache = Path(tempfile.mkdtemp(prefix="rbln-bench-cache-"))
    try:
        build_fleet(root / "fleet", args.count)
        walker = [sys.executable, "-c", WALKER, str(root / "fleet")]
        scan = [*cli(), "scan", str(root / "fleet"), "--json"]
        env_cache = {"RBLN_STUDIO_CACHE_DIR": str(cache)}
        cold, warm, base = [], [], []
        for _ in range(args.runs):  # interleaved, so load on the machine hits all three alike
            base += time_command(walker, 1)
            cold += time_command([*scan, "--no-cache"], 1, extra_env=env_cache)
            time_command(scan, 1, extra_env=env_cache)  # fill the cache
            warm += time_command(scan, 1, extra_env=env_cache)
        report(f"scan cold, {args.count} artifacts", cold, base, "<= 1.3")
        report(f"scan warm, {args.count} artifacts", warm, base, "<= 0.5")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
