"""`rbln-studio-cli vllm-cache list|lookup|prune`: vllm-rbln's compiled-model cache, here, on a server or in a bucket."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import S3_SCHEME, SSH_SCHEME
from rbln_artifact_studio.core.sizes import format_bytes

EXIT_ERROR, EXIT_INVALID = 1, 3  # as cli/main.py's (docs/cli.md)
_COMMAND_STARTS = ("vllm", "serve", "python", "python3")  # where a serve command given without -- begins
ROOT_HELP = (
    f"the cache's root: a folder here, {SSH_SCHEME}HOST/PATH or {S3_SCHEME}BUCKET/PREFIX (default: $VLLM_CACHE_ROOT, "
    "else ~/.cache/vllm)"
)


def add_parser(p: argparse.ArgumentParser) -> None:
    """vllm-cache's own commands under its parser."""
    sub = p.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    q = sub.add_parser(
        "list", help="every entry with its status", description="every entry of the cache with its status"
    )
    q.add_argument("root", nargs="?", help=ROOT_HELP)
    q.add_argument("--json", action="store_true")
    q = sub.add_parser(
        "lookup",
        help="which entry a `vllm serve` command will use",
        description="which entry a `vllm serve` command will use: lookup [ROOT] -- vllm serve MODEL [flags]",
    )
    q.add_argument("words", nargs=argparse.REMAINDER, metavar="[ROOT] -- vllm serve MODEL [flags]")
    q.add_argument(
        "--npu", help="the NPU a compile on a miss is for (default: the optimum overrides' npu, else RBLN-CA25)"
    )
    q.add_argument("--json", action="store_true")
    q = sub.add_parser(
        "seed",
        help="write the entry a `vllm serve` command will hit",
        description="write the entry a `vllm serve` command will hit, with the block count you choose: a compile, "
        "or a resized copy of an artifact: seed [ROOT] [--from ARTIFACT] [--kvcache-num-blocks N] -- vllm serve …",
    )
    q.add_argument("words", nargs=argparse.REMAINDER, metavar="[ROOT] [options] -- vllm serve MODEL [flags]")
    q.add_argument(
        "--from", dest="source", metavar="ARTIFACT", help="an artifact to copy, resized, instead of compiling"
    )
    q.add_argument(
        "--kvcache-num-blocks", type=int, metavar="N", help="the block count (default: what fits the budget)"
    )
    q.add_argument("--npu", help="the NPU a compile is for (default: the optimum overrides' npu, else RBLN-CA25)")
    q.add_argument("--json", action="store_true")
    q = sub.add_parser(
        "prune", help="remove stale, incomplete or old entries", description="remove entries, never one in use"
    )
    q.add_argument("root", nargs="?", help=ROOT_HELP)
    q.add_argument("--stale", action="store_true", help="remove stale entries")
    q.add_argument("--incomplete", action="store_true", help="remove incomplete entries")
    q.add_argument("--older-than", metavar="DURATION", help="remove entries unused for longer (30d, 12h, 2w)")
    q.add_argument("--keep-last", type=int, metavar="N", help="keep only each model's N most recently used entries")
    q.add_argument("--dry-run", action="store_true", help="say what would be removed; remove nothing")
    q.add_argument("--json", action="store_true")


def _dump(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2)
    sys.stdout.write("\n")


def _when(seconds: int | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds)) if seconds else "-"


def cmd_vllm_cache(args: argparse.Namespace) -> int:
    return {"list": _list, "lookup": _lookup, "seed": _seed, "prune": _prune}[args.cache_command](args)


def _list(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.places.vllm_cache import cache_root, read_cache

    listing = read_cache(cache_root(args.root))
    if args.json:
        _dump([e.to_json() for e in listing.entries])
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


def _split_words(args: argparse.Namespace) -> tuple[str | None, list[str]]:
    """(ROOT, the serve command) of `lookup|seed [ROOT] [options] -- vllm serve …` (without --, the command starts at
    `vllm`, `serve` or `python`; one quoted word is split as a shell would); the options before it are read into args."""
    words = list(args.words)
    if "--" in words:
        head, command = words[: words.index("--")], words[words.index("--") + 1 :]
    else:
        start = next((i for i, w in enumerate(words) if w in _COMMAND_STARTS), len(words))
        head, command = words[:start], words[start:]
    if len(command) == 1 and command[0].split() != command:  # the whole command line given as one quoted word
        import shlex

        try:
            command = shlex.split(command[0])
        except ValueError as exc:
            raise StudioError(f"The serve command does not parse ({exc}): check its quotes.") from None
    mini = argparse.ArgumentParser(prog=f"rbln-studio-cli vllm-cache {args.cache_command}", add_help=False)
    mini.add_argument("root", nargs="?")
    mini.add_argument("--json", action="store_true")
    mini.add_argument("--npu")
    mini.add_argument("--from", dest="source")
    mini.add_argument("--kvcache-num-blocks", type=int)
    given, unknown = mini.parse_known_args(head)
    if unknown:
        raise StudioError(
            f"Put the serve command after --: vllm-cache {args.cache_command} [ROOT] -- vllm serve MODEL [flags] (not "
            f"understood: {' '.join(unknown)})."
        )
    for name in ("json", "npu", "source", "kvcache_num_blocks"):
        if hasattr(args, name) and not getattr(args, name):
            setattr(args, name, getattr(given, name))
    if not command:
        raise StudioError(
            f"Give the serve command after --: vllm-cache {args.cache_command} [ROOT] -- vllm serve MODEL [flags]."
        )
    return given.root, command


def _lookup(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.core.vllm_cache.command import parse_serve
    from rbln_artifact_studio.core.vllm_cache.lookup import difference_line, lookup, would_compile_lines
    from rbln_artifact_studio.places.vllm_cache import cache_root, read_cache

    root_text, words = _split_words(args)
    command = parse_serve(words)
    listing = read_cache(cache_root(root_text))
    found = lookup(command, listing.entries, args.npu)
    if args.json:
        _dump(found.to_json())
    else:
        print(f"{found.result}: {listing.root.child('compiled_models').child(found.key)}")
        for line in found.assumed:
            print(f"assumed: {line}")
        for item in found.differences:
            print(f"near: {difference_line(item)}")
        for line in would_compile_lines(found.would_compile) if found.would_compile else ():
            print(line)
    for warning in found.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if found.result != "hit":
        return EXIT_ERROR
    return EXIT_INVALID if found.entry is not None and found.entry.status == "incomplete" else 0


def _seed(args: argparse.Namespace) -> int:
    """Compile, or copy an artifact resized, into the folder the command will hit; then look it up to prove it."""
    from rbln_artifact_studio.core.location import parse_location
    from rbln_artifact_studio.core.vllm_cache.command import parse_serve
    from rbln_artifact_studio.core.vllm_cache.lookup import lookup
    from rbln_artifact_studio.places.vllm_cache import cache_root, read_cache, seed

    root_text, words = _split_words(args)
    if args.kvcache_num_blocks is not None and args.kvcache_num_blocks < 1:
        raise StudioError(f"--kvcache-num-blocks takes a count of 1 or more, got {args.kvcache_num_blocks}.")
    command = parse_serve(words)
    root = cache_root(root_text)
    source = parse_location(args.source) if args.source else None
    entry, written = seed(root, command, args.kvcache_num_blocks, source, args.npu)
    found = lookup(command, read_cache(root).entries)
    if args.json:
        _dump({"entry": str(entry), "kvcache_num_blocks": written, "lookup": found.result})
    else:
        print(f"Wrote {entry} with kvcache_num_blocks={written}; the command's lookup: {found.result}")
    return 0 if found.result == "hit" else EXIT_ERROR


def _prune(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.core.vllm_cache.prune import parse_duration, plan_prune
    from rbln_artifact_studio.places.vllm_cache import cache_root, read_cache, remove_entries

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
        _dump({"dry_run": args.dry_run, "entries": rows, "freed": freed})
    else:
        for r in rows:
            print(f"{r['action']:12} {r['area']}/{r['name']}  {format_bytes(r['size'])}  ({r['why']})")
        print(f"{'would free' if args.dry_run else 'freed'} {format_bytes(freed)}")
    failed = [r for r in rows if r["action"] == "kept" and r["name"] in {e.name for e, _ in plan.remove}]
    return EXIT_ERROR if failed else 0
