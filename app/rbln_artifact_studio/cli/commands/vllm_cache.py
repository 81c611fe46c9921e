"""`rbln-studio-cli vllm-cache list|prune`: vllm-rbln's compiled-model cache, here, on a server or in a bucket
(lookup and seed, which read a serve command: cli/commands/vllm_serve.py)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from rbln_artifact_studio.cli.codes import EXIT_ERROR, EXIT_INVALID
from rbln_artifact_studio.cli.commands.common import print_json
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.core.vllm_cache.prune import parse_duration, plan_prune
from rbln_artifact_studio.places.vllm_cache import cache_root, read_cache, remove_entries


def _when(seconds: int | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds)) if seconds else "-"


def cmd_list(args: argparse.Namespace) -> int:
    listing = read_cache(cache_root(args.root))
    if args.json:
        print_json([e.to_json() for e in listing.entries])
    else:
        if not listing.entries:
            print(f"{listing.root} holds no cache entries (no compiled_models/ or rbln/ entries).", file=sys.stderr)
        for e in listing.entries:
            print(
                f"{e.status:10} {e.area}/{e.name}  {format_bytes(e.size)}  modified {_when(e.modified)}  "
                f"used {_when(e.used)}  {e.owner or '-'}"
            )
            print(f"           {_settings(e)}")
            for reason in e.reasons if e.status != "ok" else ():
                print(f"           - {reason}")
    return EXIT_INVALID if any(e.status == "incomplete" for e in listing.entries) else 0


_FIELD_WORDS = (  # the key's fields as a serve command spells them, in its order
    ("batch_size", "max_num_seqs"),
    ("max_model_len", "max_model_len"),
    ("block_size", "block_size"),
    ("num_devices", "devices"),
    ("dtype", "dtype"),
    ("max_num_batched_tokens", "max_num_batched_tokens"),
    ("gpu_memory_utilization", "gpu_memory_utilization"),
)


def _settings(e: Any) -> str:
    """'Qwen/Qwen3-0.6B: max_num_seqs 4, max_model_len 8192, …' as far as the entry shows its key's fields."""
    shown = [f"{word} {e.fields[name]}" for name, word in _FIELD_WORDS if e.fields.get(name) is not None]
    return f"{e.model or '?'}: {', '.join(shown) if shown else 'settings unknown'}"


def cmd_prune(args: argparse.Namespace) -> int:
    older = parse_duration(args.older_than) if args.older_than else None
    if not (args.stale or args.incomplete or older is not None or args.keep_last is not None):
        raise StudioError("Say what to prune: --stale, --incomplete, --older-than DURATION or --keep-last N.")
    if args.keep_last is not None and args.keep_last < 0:
        raise StudioError(f"--keep-last takes a count of 0 or more, got {args.keep_last}.")
    listing = read_cache(cache_root(args.root))
    plan = plan_prune(listing.entries, time.time(), args.stale, args.incomplete, older, args.keep_last)
    results = [] if args.dry_run else remove_entries(listing.root, [e for e, _ in plan.remove])
    by_name = {r["name"]: r for r in results}
    rows: list[dict[str, Any]] = []
    for e, why in plan.remove:
        done = by_name.get(e.key, {})
        removed = bool(done.get("removed"))
        rows.append(
            {
                "name": e.name,
                "area": e.area,
                "size": e.size,
                "action": "would remove" if args.dry_run else ("removed" if removed else "kept"),
                "why": why if args.dry_run or removed else done.get("reason", "not removed"),
            }
        )
    rows += [{"name": e.name, "area": e.area, "size": e.size, "action": "kept", "why": why} for e, why in plan.keep]
    freed = sum(r["size"] for r in rows if r["action"] in ("removed", "would remove"))
    if args.json:
        print_json({"dry_run": args.dry_run, "entries": rows, "freed": freed})
    else:
        for r in rows:
            print(f"{r['action']:12} {r['area']}/{r['name']}  {format_bytes(r['size'])}  ({r['why']})")
        print(f"{'would free' if args.dry_run else 'freed'} {format_bytes(freed)}")
    failed = [r for r in rows if r["action"] == "kept" and r["name"] in {e.name for e, _ in plan.remove}]
    return EXIT_ERROR if failed else 0
