"""The CLI commands that reach into a server or a bucket rather than a folder here: trust-host and download."""

from __future__ import annotations

import argparse
import sys

from rbln_artifact_studio.cli.commands.common import bar_progress, print_json
from rbln_artifact_studio.core.errors import NOTHING_CHANGED, StudioError
from rbln_artifact_studio.core.location import parse_host, parse_location
from rbln_artifact_studio.core.progress import Progress
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.places.download import download
from rbln_artifact_studio.remote.registry import ssh_connection  # configured from the environment on first use
from rbln_artifact_studio.remote.transport import accept_host_key


def cmd_trust_host(args: argparse.Namespace) -> int:
    """Record a server's host key in known_hosts when the user vouches for its fingerprint (given, or typed y)."""
    fingerprint = args.fingerprint
    conn = ssh_connection(parse_host(args.host))
    check = conn.check_host_key()
    if check.changed:
        raise StudioError(check.message())
    offered = " ".join(check.fingerprints)
    if fingerprint is not None and fingerprint.strip() not in offered.split():
        raise StudioError(f"{conn.host} offers {offered or 'no key'}, not {fingerprint}", unchanged=True)
    print(check.message())
    if check.trusted:
        return 0
    if fingerprint is None and not sys.stdin.isatty():
        raise StudioError("Give --fingerprint SHA256:... to trust the key without a terminal", unchanged=True)
    if fingerprint is None and input("Trust this key and record it in known_hosts? [y/N] ").strip().lower() not in (
        "y",
        "yes",
    ):
        print(NOTHING_CHANGED)
        return 1
    accept_host_key(check)
    print(f"Recorded {conn.host}'s key in {check.known_hosts}.")
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    """`download SERVER-OR-BUCKET-ARTIFACT DEST`: the artifact as it is into the new folder DEST here, whole or not
    at all (as the desktop's Download to This Computer); DEST parsed once as a location (a URL is refused)."""
    done = download(parse_location(args.source), parse_location(args.dest), Progress(bar_progress()))
    if args.json:
        print_json({"source": args.source, "output": str(done.where.path), "bytes": done.size})
    else:
        print(f"Downloaded {args.source} to {done.where.path} ({format_bytes(done.size)})")
    return 0
