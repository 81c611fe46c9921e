"""The CLI commands that take a server rather than a folder: jobs and trust-host."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

from rbln_artifact_studio.core.errors import NOTHING_CHANGED, StudioError
from rbln_artifact_studio.core.location import ServerFolder, parse_host
from rbln_artifact_studio.core.progress import ProgressCallback
from rbln_artifact_studio.remote.registry import server, ssh_connection  # configured from the environment on first use


def cmd_jobs(
    host_text: str,
    job_id: str | None,
    as_json: bool,
    log: Callable[[str], None],
    progress: ProgressCallback | None = None,
) -> int:
    """List a server's jobs, or show one's log and outcome (following it while it runs)."""
    from rbln_artifact_studio.remote.remote_jobs import follow, list_jobs, parse_job_id

    s = server(parse_host(host_text))
    if job_id is None:
        jobs = list_jobs(s)
        if as_json:
            json.dump([{**o.to_json(), "spec": spec} for o, spec in jobs], sys.stdout, indent=2)
            sys.stdout.write("\n")
        for outcome, spec in [] if as_json else jobs:
            what = f"{spec.get('artifact')} -> {spec.get('target') or spec.get('budget')}"
            print(f"{outcome.job.id}  {outcome.state:8} {what}  {outcome.error or ''}".rstrip())
        return 0
    outcome = follow(s, parse_job_id(s.host, job_id), None if as_json else log, on_progress=progress)
    if as_json:
        json.dump(outcome.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif outcome.ok:
        where = ServerFolder(s.host, outcome.path or "/")
        print(f"Set kvcache_num_blocks to {outcome.kvcache_num_blocks} for artifact at {where}")
    else:
        print(f"{outcome.state}: {outcome.error}")
    return 0 if outcome.ok else 1


def cmd_trust_host(host_text: str, fingerprint: str | None) -> int:
    """Record a server's host key in known_hosts when the user vouches for its fingerprint (given, or typed y)."""
    from rbln_artifact_studio.remote.transport import accept_host_key

    conn = ssh_connection(parse_host(host_text))
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
