"""`scan`: every artifact under a folder, a server's folder or a bucket, as text or a fleet report (csv, json,
markdown); several places (or --on servers) are read at once. Its whole process is a measured row
(docs/performance.md row 2): what it imports here is what one place's scan needs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator

from rbln_artifact_studio.cli.codes import EXIT_INVALID
from rbln_artifact_studio.cli.commands.common import inspector
from rbln_artifact_studio.cli.problems import stop_reason, warn
from rbln_artifact_studio.core.fleet.fleet_report import render, text_lines, write_json
from rbln_artifact_studio.core.fleet.scan_pool import idle_cpus
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.places.kind import ScanOptions


def cmd_scan(args: argparse.Namespace) -> int:
    def issue(path: object, message: str) -> None:
        warn(message)

    several = len(args.roots) > 1 or bool(args.on)  # servers read at once, a failed one a row
    args.root = ", ".join(args.roots)
    root = None if several else parse_location(args.roots[0])
    invalid = count = 0
    failed: list[str] = []  # servers' folders that could not be read: a row each, yet no artifact

    def counted(rows: Iterable[ArtifactSummary]) -> Iterator[ArtifactSummary]:
        nonlocal invalid, count
        for row in rows:
            count += 1
            invalid += row.status.value == "invalid"
            yield row

    processes = args.jobs if args.jobs is not None else idle_cpus()
    if args.jobs is None and getattr(args, "verbose", False):
        # deferred: logging (10 ms) only with --verbose: why a scan read in one process or several
        from rbln_artifact_studio.core.logs import logger

        logger(__name__).debug("--jobs not given: up to %d process(es), the CPUs idle now", processes)
    if root is None:
        # deferred: the servers' fan-out and the fleet's model (pydantic, ~100 ms) only for several places
        from rbln_artifact_studio.cli.commands.fleet import scan_fleet

        rows = counted(scan_fleet(args.roots, args.on, args.timeout or 600.0, issue, failed))
    else:
        options = ScanOptions(
            issue, not args.no_cache, processes, inspector=lambda: inspector(args), timeout=args.timeout
        )
        rows = counted(dispatch.scan(root, options))  # inspect's check: one verdict for both
    if args.format == "json":
        # Row by row (the report of a large fleet is never held whole), and one whole array even when stopped.
        write_json(rows, sys.stdout.write, stop_reason)
        return EXIT_INVALID if invalid else 0
    if args.format:
        sys.stdout.write(render(rows, args.format))
        return EXIT_INVALID if invalid else 0
    for line in text_lines(rows, with_host=several):
        print(line)
    if failed:
        print(f"{count - len(failed)} artifact(s) under {args.root}; {len(failed)} could not be read", file=sys.stderr)
    else:
        print(f"{count} artifact(s) under {args.root}", file=sys.stderr)
    return EXIT_INVALID if invalid else 0
