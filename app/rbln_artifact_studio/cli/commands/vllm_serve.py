"""`rbln-studio-cli vllm-cache lookup|seed -- vllm serve ...`: which entry of vllm-rbln's compiled-model cache a serve
command will use, and writing the one it will hit. Apart from list and prune: the serve command's key takes the
compile model (pydantic), which they never need."""

from __future__ import annotations

import argparse
import shlex
import sys

from rbln_artifact_studio.cli.codes import EXIT_ERROR, EXIT_INVALID, PROG
from rbln_artifact_studio.cli.commands.common import print_json
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.core.vllm_cache.command import parse_serve
from rbln_artifact_studio.core.vllm_cache.lookup import difference_line, lookup, would_compile_lines
from rbln_artifact_studio.places.vllm_cache import cache_root, read_cache, seed

_COMMAND_STARTS = ("vllm", "serve", "python", "python3")  # where a serve command given without -- begins


def cmd_lookup(args: argparse.Namespace) -> int:
    root_text, words = _split_words(args)
    command = parse_serve(words)
    listing = read_cache(cache_root(root_text))
    found = lookup(command, listing.entries, args.npu)
    if args.json:
        print_json(found.to_json())
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


def cmd_seed(args: argparse.Namespace) -> int:
    """Compile, or copy an artifact resized, into the folder the command will hit; then look it up to prove it."""
    root_text, words = _split_words(args)
    if args.kvcache_num_blocks is not None and args.kvcache_num_blocks < 1:
        raise StudioError(f"--kvcache-num-blocks takes a count of 1 or more, got {args.kvcache_num_blocks}.")
    command = parse_serve(words)
    root = cache_root(root_text)
    source = parse_location(args.source) if args.source else None
    entry, written = seed(root, command, args.kvcache_num_blocks, source, args.npu)
    found = lookup(command, read_cache(root).entries)
    if args.json:
        print_json({"entry": str(entry), "kvcache_num_blocks": written, "lookup": found.result})
    else:
        print(f"Wrote {entry} with kvcache_num_blocks={written}; the command's lookup: {found.result}")
    return 0 if found.result == "hit" else EXIT_ERROR


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
        try:
            command = shlex.split(command[0])
        except ValueError as exc:
            raise StudioError(f"The serve command does not parse ({exc}): check its quotes.") from None
    mini = argparse.ArgumentParser(prog=f"{PROG} vllm-cache {args.cache_command}", add_help=False)
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
