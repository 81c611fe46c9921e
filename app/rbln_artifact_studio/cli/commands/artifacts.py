"""The CLI's views of one artifact, wherever it lives: inspect (settings, KV cache, DRAM breakdown, --what-if),
serving (what vllm-rbln derives from it) and explore (its blocks at every memory budget)."""

from __future__ import annotations

import argparse
from dataclasses import replace

from rbln_artifact_studio.cli.codes import EXIT_ERROR, EXIT_INVALID
from rbln_artifact_studio.cli.commands.common import as_optimum_refusal, open_artifact, open_verdict, print_json
from rbln_artifact_studio.core.display.explore_display import what_if_text
from rbln_artifact_studio.core.display.kinds_report import description_dict, description_text
from rbln_artifact_studio.core.display.report import breakdown_dict, inspect_dict, inspect_text
from rbln_artifact_studio.core.display.serving_display import serving_text
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.model.kinds import NoKvCacheError
from rbln_artifact_studio.core.planning.explore import exploration_text, explore, what_if
from rbln_artifact_studio.core.planning.serving import check_artifact_serving


def cmd_inspect(args: argparse.Namespace) -> int:
    try:
        artifact = open_verdict(args.dir, args)
    except NoKvCacheError as exc:  # no resizable KV cache: say what the folder holds instead
        if args.json:
            print_json(description_dict(exc.description))
        else:
            print(description_text(exc.description))
        return 0
    if args.what_if is not None:  # what a compile at that budget gives: the details' What-if table
        result = what_if(artifact, args.what_if)
        if args.json:
            what = {"memory_budget": args.what_if, "kvcache_num_blocks": result.blocks, "current": result.current}
            print_json(
                {**what, "floor": result.floor, "full": result.full, "breakdown": breakdown_dict(result.breakdown)}
            )
        else:
            print(what_if_text(result, artifact.npu.chiplets if artifact.npu else 1))
        return 0
    budget = parse_budget(args.memory_budget)
    if args.json:
        print_json(inspect_dict(artifact, budget))
    else:
        print(inspect_text(artifact, budget))
    return EXIT_INVALID if artifact.status.value == "invalid" else 0


def cmd_serving(args: argparse.Namespace) -> int:
    try:  # the verdict inspect and scan give; a VLM through its language model; wherever it lives
        artifact = open_verdict(args.dir, args)
    except NoKvCacheError as exc:
        raise as_optimum_refusal(exc, args.dir) from None
    check = check_artifact_serving(artifact.loaded, artifact.problems)
    check = replace(check, path=str(artifact.where_of(artifact.loaded.path.parent)))  # on its server, for a server's
    if args.json:
        print_json(check.to_json())
    else:
        print(serving_text(check))
    if not check.loads:
        return EXIT_INVALID
    return EXIT_ERROR if check.errors else 0


def cmd_explore(args: argparse.Namespace) -> int:
    exploration = explore(open_artifact(args.dir, args))
    if args.json:
        print_json(exploration.to_json())
    else:
        print(exploration_text(exploration))
    return 0
