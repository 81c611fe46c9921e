"""What the CLI needs to take `ssh://HOST/PATH` wherever it takes a folder: open, scan, read, devices, plan --on."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, IssueCallback, scan
from rbln_artifact_studio.core.operations.resize import ResizeResult
from rbln_artifact_studio.core.progress import CancelToken, ProgressCallback
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.remote.registry import configure_from_environment
from rbln_artifact_studio.remote.registry import open_any as registry_open_any
from rbln_artifact_studio.remote.registry import server as registry_server
from rbln_artifact_studio.remote.server import Server
from rbln_artifact_studio.remote.target import check_host, is_remote, parse_remote


def server(host: str) -> Server:
    """The process's Server for a host, configured from the environment on first use."""
    global _configured
    if not _configured:
        configure_from_environment()
        _configured = True
    return registry_server(host)


_configured = False


def parse_host(text: str) -> str:
    """`ssh://HOST` (a trailing slash or path allowed) or a bare HOST."""
    if is_remote(text):
        text = text[len("ssh://") :].split("/", 1)[0]
    return check_host(text)


def open_any(target: str | Path, inspector: GraphInspector | None) -> Artifact:
    """A local folder through the local reader and inspector; ssh://HOST/PATH through the server."""
    text = os.fspath(target)
    if is_remote(text):
        server(parse_remote(text).host)  # configured from the environment
    return registry_open_any(text, inspector)


def scan_any(
    root: str | Path, on_issue: IssueCallback | None, use_cache: bool, processes: int = 1
) -> Iterator[ArtifactSummary]:
    """The rows of a local folder or of ssh://HOST/PATH, with the full check's verdicts, read in `processes`."""
    text = os.fspath(root)
    if is_remote(text):
        from rbln_artifact_studio.remote.scan import checked_rows, scan_remote

        remote = parse_remote(text)
        s = server(remote.host)
        return checked_rows(s, scan_remote(s, remote, on_issue=on_issue, processes=processes))
    return scan(Path(text), on_issue=on_issue, use_cache=use_cache, processes=processes)


def read_block_count_any(target: str | Path) -> int:
    text = os.fspath(target)
    if is_remote(text):
        return open_any(text, None).config.kvcache_num_blocks
    return read_block_count(text)


def cmd_devices(host_text: str, as_json: bool) -> int:
    from rbln_artifact_studio.remote.devices import devices_text, read_devices

    status = read_devices(server(parse_host(host_text)))
    if as_json:
        json.dump(status.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(devices_text(status))
    return 0


def cmd_plan_on(host_text: str, targets: list[str], inspector: GraphInspector | None, as_json: bool) -> int:
    """`plan --on ssh://HOST ART...`: 0 when the artifacts fit in what the server's NPUs have free now, else 1."""
    from rbln_artifact_studio.core.planning.planner import require_valid
    from rbln_artifact_studio.remote.devices import read_devices
    from rbln_artifact_studio.remote.server_plan import plan_on_server, server_plan_text

    host = parse_host(host_text)
    artifacts = [open_any(t, inspector) for t in targets]  # on this server, another, or here
    require_valid(artifacts)  # as plan: an invalid artifact is named, never planned on
    p = plan_on_server(artifacts, read_devices(server(host)))
    if as_json:
        json.dump(p.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(server_plan_text(p))
    return 0 if p.fits else 1


def resize_any(
    target_text: str,
    num_blocks: int | None,
    budget: str | None,
    output_dir: str | None,
    log: Callable[[str], None],
    progress: ProgressCallback | None = None,
) -> ResizeResult:
    """A resize of ssh://HOST/PATH as a detached job on that server, followed to its end (Ctrl+C cancels it)."""
    from rbln_artifact_studio.remote.remote_jobs import resize_to_result

    host = parse_remote(target_text).host
    server(host)  # configured from the environment
    try:
        return resize_to_result(target_text, num_blocks, budget, output_dir, log, CancelToken(), progress)
    except KeyboardInterrupt:
        raise StudioError(
            f"Interrupted: the job on the server goes on; read its outcome with: rbln-studio-cli jobs ssh://{host}"
        ) from None


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
        print(f"Set kvcache_num_blocks to {outcome.kvcache_num_blocks} for artifact at ssh://{s.host}{outcome.path}")
    else:
        print(f"{outcome.state}: {outcome.error}")
    return 0 if outcome.ok else 1


def cmd_trust_host(host_text: str, fingerprint: str | None) -> int:
    """Record a server's host key in known_hosts when the user vouches for its fingerprint (given, or typed y)."""
    from rbln_artifact_studio.remote.transport import accept_host_key

    conn = server(parse_host(host_text)).connection
    check = conn.check_host_key()
    if check.changed:
        raise StudioError(check.message())
    offered = " ".join(check.fingerprints)
    if fingerprint is not None and fingerprint.strip() not in offered.split():
        raise StudioError(f"{conn.host} offers {offered or 'no key'}, not {fingerprint}; nothing was recorded.")
    print(check.message())
    if check.trusted:
        return 0
    if fingerprint is None and not sys.stdin.isatty():
        raise StudioError("Give --fingerprint SHA256:... to trust the key without a terminal; nothing was recorded.")
    if fingerprint is None and input("Trust this key and record it in known_hosts? [y/N] ").strip().lower() not in (
        "y",
        "yes",
    ):
        print("Nothing was recorded.")
        return 1
    accept_host_key(check)
    print(f"Recorded {conn.host}'s key in {check.known_hosts}.")
    return 0
