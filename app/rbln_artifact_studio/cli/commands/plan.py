"""`plan`: whether artifacts fit on the same NPUs together, and the resize that fixes it; with --on, against the
memory servers' NPUs have free now (cli/commands/fleet.py)."""

from __future__ import annotations

import argparse
import shlex

from rbln_artifact_studio.cli.codes import EXIT_ERROR, PROG
from rbln_artifact_studio.cli.commands.common import open_artifact, print_json, usage_error
from rbln_artifact_studio.cli.commands.fleet import plan_on, split_on
from rbln_artifact_studio.core.display.plan_display import plan_text
from rbln_artifact_studio.core.location import server_url
from rbln_artifact_studio.core.planning.planner import fixes, plan, require_valid


def cmd_plan(args: argparse.Namespace) -> int:
    if args.on:
        hosts, dirs = split_on(args.on, args.dirs)
        if not dirs:
            return usage_error("plan", f"name the artifacts: plan DIR... --on {server_url('HOST')} ...")
        return plan_on(hosts, [open_artifact(d, args) for d in dirs], args.json, args.timeout)  # anywhere
    if not args.dirs:
        return usage_error("plan", "the following arguments are required: DIR")
    artifacts = [open_artifact(d, args) for d in args.dirs]  # wherever they live
    require_valid(artifacts)  # the verdict scan and inspect give: a plan never counts on an invalid artifact
    p = plan(artifacts)
    found = fixes(p, p.label_for(args.fix) if args.fix else None)
    commands = [[PROG, "set-kvcache-num-blocks", f.path, str(f.target)] if f.changes else None for f in found]
    if args.json:
        out = p.to_json()
        out["fixes"] = [{**f.to_json(), "command": cmd} for f, cmd in zip(found, commands, strict=True)]
        print_json(out)
    else:
        print(plan_text(p, found))
        for cmd in filter(None, commands):
            print(f"  run: {shlex.join(cmd)}   (add --output-dir D to resize a copy instead)")
    return 0 if p.fits else EXIT_ERROR
