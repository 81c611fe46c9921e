"""Shared by rows 2 and 3: a fleet of Qwen3-8B-sized artifacts, the minimal walker, and `scan ROOT --json`."""

from __future__ import annotations

import argparse
import os

from _common import Timed, build_fleet, cli, interleave, machine, python, report, run, scratch

from rbln_artifact_studio.core.fleet.scan_pool import idle_cpus

WALKER = """
import json, os, sys
for dirpath, dirnames, filenames in os.walk(sys.argv[1]):
    if "rbln_config.json" in filenames:
        with open(os.path.join(dirpath, "rbln_config.json")) as f:
            json.load(f)
"""

# What the full check reads and parses of each artifact, with nothing of ours: both JSON documents, and of each
# simulator .rbln its preamble and both header slots (read by their used bytes, checksums verified) and the newest
# valid header body decoded. The floor of the check's I/O and parsing in Python.
SAME_BYTES_WALKER = """
import json, os, struct, sys, zlib
PREAMBLE, SLOT_READ = struct.Struct("<8sIIQQII"), 16384
SLOT = struct.Struct("<4sQII")
def rbln(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        head = os.pread(fd, 4096 + SLOT_READ, 0)
        magic, version, slot_size, off, length, pcrc, crc = PREAMBLE.unpack_from(head)
        if magic != b"RBLNSIM\\0" or zlib.crc32(head[: PREAMBLE.size - 4]) != crc:
            return
        newest = None
        for i in (0, 1):
            at = 4096 + i * slot_size
            data = head[at : at + SLOT_READ] if i == 0 else os.pread(fd, SLOT_READ, at)
            smagic, generation, n, scrc = SLOT.unpack_from(data)
            body = data[SLOT.size : SLOT.size + n]
            if len(body) < n:
                body += os.pread(fd, n - len(body), at + SLOT.size + len(body))
            if smagic == b"SLOT" and zlib.crc32(struct.pack("<QI", generation, n) + body) == scrc:
                if newest is None or generation > newest[0]:
                    newest = (generation, body)
        if newest is not None:
            json.loads(newest[1])
    finally:
        os.close(fd)
for dirpath, dirnames, filenames in os.walk(sys.argv[1]):
    if "rbln_config.json" in filenames:
        for name in ("rbln_config.json", "config.json"):
            with open(os.path.join(dirpath, name), "rb") as f:
                json.loads(f.read())
        for name in filenames:
            if name.endswith(".rbln"):
                rbln(os.path.join(dirpath, name))
"""


def measure(row: str, doc: str | None) -> int:
    """row "cold": scan --no-cache; row "warm": scan right after a scan that filled the cache."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--jobs", type=int, help="pass --jobs N to scan (default: its own, one process per CPU)")
    args = parser.parse_args()
    print(machine())
    with scratch("scan") as root, scratch("cache") as cache:
        fleet = root / "fleet"
        build_fleet(fleet, args.count)
        env_cache = {"RBLN_STUDIO_CACHE_DIR": str(cache)}
        scan = [*cli(), "scan", str(fleet), "--json", *(["--jobs", str(args.jobs)] if args.jobs else [])]
        walker = run([python(), "-c", WALKER, str(fleet)])
        if row == "cold":
            # What the default --jobs reads (scan_pool.idle_cpus) right before each round of ours, warm-up included.
            chosen: list[int] = []
            before: dict[str, Timed] = {} if args.jobs else {"cold": lambda: chosen.append(idle_cpus())}
            print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            times = interleave(
                {"cold": run([*scan, "--no-cache"], env_cache), "walker": walker}, args.runs, before_each=before
            )
            print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            if chosen:
                print(f"default --jobs read before each round (warm-up first): {', '.join(map(str, chosen))}")
            jobs = f" --jobs {args.jobs}" if args.jobs else ""
            report(f"scan --json --no-cache{jobs}, {args.count} artifacts (row 2)", times["cold"], times["walker"], 1.0)
        else:
            fill = run(scan, env_cache)  # nothing changes between this scan and the timed one
            times = interleave({"warm": run(scan, env_cache), "walker": walker}, args.runs, before_each={"warm": fill})
            report(f"scan --json, nothing changed, {args.count} artifacts (row 3)", times["warm"], times["walker"], 0.5)
    return 0
