"""The CLI's resizes: set-kvcache-num-blocks and set-memory-budget, in place or into a copy, of an artifact wherever
it lives (optimum-rbln-cli's --set-kvcache-num-blocks and --set-memory-budget); and jobs, the resizes a server runs
on its own."""

from __future__ import annotations

import argparse
import sys

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.cli.commands.common import as_optimum_refusal, bar_progress, log_line, print_json
from rbln_artifact_studio.cli.problems import warn
from rbln_artifact_studio.core.location import ServerFolder, parse_beside, parse_host, parse_location
from rbln_artifact_studio.core.model.kinds import NoKvCacheError
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.places.kind import Report
from rbln_artifact_studio.places.read_back import confirm_blocks
from rbln_artifact_studio.remote.registry import server  # configured from the environment on first use
from rbln_artifact_studio.remote.remote_jobs import follow, list_jobs, parse_job_id


def cmd_set_blocks(args: argparse.Namespace) -> int:
    return _resize(args, args.num_blocks, None)


def cmd_set_budget(args: argparse.Namespace) -> int:
    return _resize(args, None, args.budget)


def _resize(args: argparse.Namespace, target: int | None, budget_text: str | None) -> int:
    source = parse_location(args.dir)
    output = parse_beside(args.output_dir, source) if args.output_dir else None  # a plain path: beside the source
    request = ResizeRequest(source, target, budget_text, output, BackendChoice.parse(args.backend))
    try:
        result = dispatch.resize(request, Report(log_line, bar_progress()))
    except NoKvCacheError as exc:
        raise as_optimum_refusal(exc, args.dir) from None
    confirm_blocks(result.where, result.target)  # what the place holds now is what is confirmed
    for warning in result.warnings:
        warn(warning)
    for shared in result.unshared:
        print(f"note: copied {shared} before writing, so the other path keeps its bytes", file=sys.stderr)
    if args.json:
        print_json(result.to_json())
        return 0
    if budget_text is not None:
        print(f"memory_budget {budget_text} fits kvcache_num_blocks={result.target}")
    print(result.summary())
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    """List a server's jobs, or show one's log and outcome (following it while it runs)."""
    job_id, as_json = args.job, args.json
    s = server(parse_host(args.host))
    if job_id is None:
        jobs = list_jobs(s)
        if as_json:
            print_json([{**o.to_json(), "spec": spec} for o, spec in jobs])
        for outcome, spec in [] if as_json else jobs:
            what = f"{spec.get('artifact')} -> {spec.get('target') or spec.get('budget')}"
            print(f"{outcome.job.id}  {outcome.state:8} {what}  {outcome.error or ''}".rstrip())
        return 0
    outcome = follow(s, parse_job_id(s.host, job_id), None if as_json else log_line, on_progress=bar_progress())
    if as_json:
        print_json(outcome.to_json())
    elif outcome.ok:
        where = ServerFolder(s.host, outcome.path or "/")
        print(f"Set kvcache_num_blocks to {outcome.kvcache_num_blocks} for artifact at {where}")
    else:
        print(f"{outcome.state}: {outcome.error}")
    return 0 if outcome.ok else 1
