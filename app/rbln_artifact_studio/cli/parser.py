"""The command line's parser, on the start-up path of every command but `get-kvcache-num-blocks DIR` (which the entry
reads without it): each command's options, help and usage errors, built only for the command named (build_parser).

It names no command's implementation: the entry runs the one parsed through cli/commands' table, so a command line
loads argparse, these few core modules and then its own command's module alone.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rbln_artifact_studio import __version__
from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.cli.codes import PROG
from rbln_artifact_studio.core.location import S3_SCHEME, SSH_SCHEME, BucketPrefix, server_url
from rbln_artifact_studio.core.numbers import BadNumber, positive_seconds

Command = Callable[[str, str], argparse.ArgumentParser]  # a command's parser by its name and help, in build_parser

VERBOSE_HELP = "say on stderr what the studio does (scans, calls to servers, jobs, retries), as it happens"
VLLM_CACHE_ROOT_HELP = (
    f"the cache's root: a folder here, {SSH_SCHEME}HOST/PATH or {S3_SCHEME}BUCKET/PREFIX (default: $VLLM_CACHE_ROOT, "
    "else ~/.cache/vllm)"
)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {text!r}")
    return value


def _seconds(text: str) -> float:
    """--timeout's value: a finite number of seconds above 0 (core's one check), else argparse's usage error."""
    try:
        return positive_seconds(text, "")
    except BadNumber as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def _flag(*names: str) -> list[str]:
    """Both spellings of an option: --batch_size and --batch-size."""
    out = []
    for name in names:
        out.append(name)
        alt = "--" + name[2:].replace("_", "-")
        if alt not in out:
            out.append(alt)
    return out


def _add_backend(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=[c.value for c in BackendChoice],
        default=BackendChoice.AUTO.value,
        help="sim: the built-in simulator; optimum: optimum-rbln-cli; auto (default): optimum-rbln-cli for real "
        "artifacts and, when installed, for compiles; the simulator otherwise",
    )


def _add_compile_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(*_flag("--model_id"), dest="model_id", required=True, help="local model folder or hub id")
    p.add_argument("-o", *_flag("--output_dir"), dest="output_dir", required=True, help="new artifact folder")
    p.add_argument("--npu", default="RBLN-CA25", help="target NPU SKU (default RBLN-CA25)")
    p.add_argument(
        *_flag("--num_devices", "--tensor_parallel_size"),
        dest="num_devices",
        type=int,
        help="NPUs (TP); default: the fewest that hold the model, as the compile wizard picks",
    )
    p.add_argument(*_flag("--batch_size"), dest="batch_size", type=int, default=1)
    p.add_argument(*_flag("--max_seq_len"), dest="max_seq_len", type=int, help="default: the model's maximum")
    p.add_argument(*_flag("--attn_impl"), dest="attn_impl", choices=["eager", "flash_attn"])
    p.add_argument(*_flag("--kvcache_partition_len"), dest="kvcache_partition_len", type=int)
    p.add_argument(*_flag("--prefill_chunk_size"), dest="prefill_chunk_size", type=int)
    # Not an argparse group: both together get optimum-rbln's own "mutually exclusive" error (exit 1), as there.
    p.add_argument(
        *_flag("--memory_budget"), dest="memory_budget", help="0.8, 80%%, 10GB: caps the automatic block estimate"
    )
    p.add_argument(*_flag("--kvcache_num_blocks"), dest="kvcache_num_blocks", type=int, help="explicit count")
    p.add_argument(*_flag("--materialize_weights"), dest="materialize_weights", action="store_true")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_backend(p)


def _add_timeout(p: argparse.ArgumentParser, prometheus: bool = False) -> None:
    also = " (a --prometheus: its whole read, every request together)" if prometheus else ""
    p.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="give each server this long (default 60, or RBLN_STUDIO_SERVER_TIMEOUT); one that does not answer "
        f"in time is a row with that reason{also}",
    )


def _add_prometheus(p: argparse.ArgumentParser, window_help: str) -> None:
    p.add_argument(
        "--prometheus",
        action="append",
        metavar="URL",
        help="also read the NPU nodes this Prometheus knows from rbln-metrics-exporter (one query for all of them; "
        "repeatable); http(s)://HOST:PORT",
    )
    p.add_argument(
        "--match",
        metavar="SELECTOR",
        help="with --prometheus: only the series these label matchers select, e.g. 'hostname=~\"node-1.*\"'",
    )
    p.add_argument("--window", metavar="DURATION", help=window_help)
    p.add_argument(
        "--prometheus-http-config",
        metavar="FILE",
        help="with --prometheus: basic_auth, authorization (bearer token) and tls_config, in promtool's "
        "--http.config.file YAML format",
    )


def _add_vllm_cache_actions(p: argparse.ArgumentParser) -> None:
    """vllm-cache's own commands (list, lookup, seed, prune) under its parser."""
    sub = p.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    q = sub.add_parser(
        "list", help="every entry with its status", description="every entry of the cache with its status"
    )
    q.add_argument("root", nargs="?", help=VLLM_CACHE_ROOT_HELP)
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
    q.add_argument("root", nargs="?", help=VLLM_CACHE_ROOT_HELP)
    q.add_argument("--stale", action="store_true", help="remove stale entries")
    q.add_argument("--incomplete", action="store_true", help="remove incomplete entries")
    q.add_argument("--older-than", metavar="DURATION", help="remove entries unused for longer (30d, 12h, 2w)")
    q.add_argument("--keep-last", type=int, metavar="N", help="keep only each model's N most recently used entries")
    q.add_argument("--dry-run", action="store_true", help="say what would be removed; remove nothing")
    q.add_argument("--json", action="store_true")


def _add_reading_commands(command: Command) -> None:
    """The commands that read artifacts: inspect, scan, plan, serving, explore."""
    p = command("inspect", "show an artifact's settings, KV cache and per-NPU DRAM breakdown")
    p.add_argument("dir")
    p.add_argument(
        *_flag("--memory_budget"), dest="memory_budget", help="show this artifact's breakdown within this budget"
    )
    p.add_argument(
        "--what-if",
        metavar="BUDGET",
        help="show what a compile at this memory_budget gives instead (blocks and breakdown, as the details' What if)",
    )
    p.add_argument("--json", action="store_true")
    _add_backend(p)

    p = command("scan", "list every artifact under a folder (or folders on several servers at once)")
    p.add_argument(
        "roots",
        nargs="+",
        metavar="root",
        help=f"a folder here, {server_url('HOST')}/PATH or a bucket (several servers: read at once)",
    )
    p.add_argument(
        "--on",
        nargs="+",
        default=[],
        metavar=server_url("HOST"),
        help="scan root (a path) on each of these servers or @GROUP",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="a server's folder: give each server this long in all (default 600)",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--format", choices=["csv", "json", "markdown"], help="print the fleet report in this format")
    fmt.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    p.add_argument("--no-cache", action="store_true", help="read every rbln_config.json again (ignore the scan cache)")
    p.add_argument(
        "--jobs",
        type=_positive_int,
        metavar="N",
        help="read configs in N processes in all (default: one per idle CPU, by the load average; 1 reads them all here)",
    )

    p = command("plan", "check whether artifacts fit on the same NPUs together, and size the fix")
    p.add_argument("dirs", nargs="*", metavar="DIR", help="two or more artifact folders (one with --on)")
    p.add_argument(
        "--on",
        nargs="+",
        default=[],
        metavar=server_url("HOST"),
        help="check against the memory these servers' NPUs have free now (rbln-stat / rbln-smi), instead of empty "
        "NPUs; several servers or @GROUP are read at once",
    )
    _add_timeout(p)
    p.add_argument(
        "--fix", metavar="DIR", help="size the fix for this artifact (default: each one, when they do not fit)"
    )
    p.add_argument("--json", action="store_true")
    _add_backend(p)

    p = command("serving", "show what vllm-rbln derives from an artifact (max_num_seqs, blocks, ...)")
    p.add_argument("dir")
    p.add_argument("--json", action="store_true")

    p = command("explore", "show the blocks an artifact resolves to at every memory budget")
    p.add_argument("dir")
    p.add_argument("--json", action="store_true")
    _add_backend(p)


def _add_fleet_commands(command: Command) -> None:
    """The commands across servers and a Prometheus' nodes, and the server groups (@GROUP)."""
    p = command(
        "devices",
        "list servers' NPUs now (rbln-stat -j, else rbln-smi's table): memory used and total, processes, and each "
        "context's allocation against what its artifact predicts",
    )
    p.add_argument("hosts", nargs="*", metavar=server_url("HOST"), help="one or more servers, or @GROUP (read at once)")
    p.add_argument("--json", action="store_true")
    _add_timeout(p, prometheus=True)
    _add_prometheus(p, "with --prometheus: also each NPU's peak used memory over this long (30m, 1h, 1d)")

    p = command(
        "place",
        "show which servers and NPUs can take each artifact now, best first, and what blocks the others",
    )
    p.add_argument(
        "dirs",
        nargs="*",
        metavar="ART",
        help="artifacts, wherever they live (a folder here, on a server or in a bucket)",
    )
    p.add_argument(
        "--on",
        nargs="+",
        metavar=server_url("HOST"),
        help="the servers to consider, or @GROUP (read at once)",
    )
    p.add_argument("--json", action="store_true")
    _add_timeout(p, prometheus=True)
    _add_prometheus(
        p,
        "with --prometheus: judge each NPU's room by its peak used memory over this long (30m, 1h, 1d), not now",
    )
    _add_backend(p)

    p = command("server-groups", "list the server groups (@GROUP) and their servers")
    p.add_argument("--json", action="store_true")

    p = command(
        "set-server-group",
        "save a server group: @NAME then names these servers wherever servers are taken (replaces its servers)",
    )
    p.add_argument("name", metavar="NAME", help="the group's name: letters, digits, '.', '-', '_' (e.g. rack1)")
    p.add_argument("hosts", nargs="+", metavar=server_url("HOST"), help="its servers, in order")

    p = command("remove-server-group", "remove a server group (its servers are untouched)")
    p.add_argument("name", metavar="NAME")


def _add_server_commands(command: Command) -> None:
    """The commands that reach into a server or a bucket: download, jobs, trust-host."""
    p = command(
        "download",
        "copy a server's or a bucket's artifact as it is into a new folder here (whole, or nothing written)",
    )
    p.add_argument("source", metavar="SOURCE", help=f"{server_url('HOST')}/PATH or {BucketPrefix('BUCKET', 'PREFIX')}")
    p.add_argument("dest", metavar="DEST", help="a new (or empty) folder on this computer")
    p.add_argument("--json", action="store_true")

    p = command("jobs", "list a server's resize jobs, or show one's log and outcome (read back)")
    p.add_argument("host", metavar=server_url("HOST"))
    p.add_argument("job", nargs="?", help="a job id: follow its log until it ends, then show the outcome")
    p.add_argument("--json", action="store_true")

    p = command("trust-host", "show a server's host key fingerprint and record it in known_hosts")
    p.add_argument("host", metavar=server_url("HOST"))
    p.add_argument("--fingerprint", metavar="SHA256:...", help="record the key only if it has this fingerprint")


def _add_compile_commands(command: Command) -> None:
    """compile and what it draws on: presets, backends."""
    p = command("presets", "list the bundled model presets")
    p.add_argument("--json", action="store_true")

    p = command(
        "backends",
        "list the backends available here: the simulator, optimum-rbln-cli, rebel inspection "
        "(configure with RBLN_STUDIO_OPTIMUM_CLI, RBLN_STUDIO_TOOLCHAIN_PYTHON)",
    )
    p.add_argument("--json", action="store_true")

    p = command("compile", "compile a model into a new artifact (the built-in simulator by default)")
    _add_compile_options(p)


def _add_optimum_operations(command: Command) -> None:
    """optimum-rbln-cli's operations on an artifact: get, set-kvcache-num-blocks, set-memory-budget."""
    p = command("get-kvcache-num-blocks", "print an artifact's kvcache_num_blocks")
    p.add_argument("dir")
    p.add_argument(
        *_flag("--output_dir"), "-o", dest="output_dir", help="accepted and ignored, as optimum-rbln-cli does"
    )

    for name, metavar, help_text in (
        ("set-kvcache-num-blocks", "N", "resize the KV cache to N blocks, in place or into a copy"),
        ("set-memory-budget", "BUDGET", "resize the KV cache to what fits a memory budget"),
    ):
        p = command(name, help_text)
        p.add_argument("dir")
        if metavar == "N":
            p.add_argument("num_blocks", type=int, metavar="N")
        else:
            p.add_argument("budget", metavar="BUDGET", help="0.8, 80%%, 10GB")
        p.add_argument(*_flag("--output_dir"), "-o", dest="output_dir", help="write a resized copy here")
        p.add_argument("--json", action="store_true")
        _add_backend(p)


class _Unused:
    """Stands in for the parser of a command not on the command line: what is added to it goes nowhere."""

    def __getattr__(self, name: str) -> Callable[..., _Unused]:
        return lambda *args, **kwargs: self


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `only` a command's exact name, only that command's parser is built under it.

    Each command's parser costs a start gettext look-ups and argparse objects (~15 ms of CPU for all of them): a
    command reads its own line with its own parser and the top one, the same words in its help and errors. A name
    that is no command (a typo, an abbreviation) gets the whole parser, to list the choices.
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Inspect, compile and resize compiled Rebellions NPU artifacts (KV cache sizing).",
        epilog="optimum-rbln-cli spellings work too: --get-kvcache-num-blocks --model-id DIR, "
        "--set-kvcache-num-blocks N --model-id DIR [--output-dir D], --set-memory-budget B --model-id DIR, "
        "and a bare --model-id ... compiles.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help=VERBOSE_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    built: list[str] = []

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        if only is not None and name != only:
            unused: Any = _Unused()
            return unused
        built.append(name)
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
        # After the command too; not given there, it leaves the value given before the command.
        p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP)
        return p

    _add_vllm_cache_actions(command("vllm-cache", "vllm-rbln's compiled-model cache: list, lookup, seed, prune"))

    _add_reading_commands(command)
    _add_fleet_commands(command)
    _add_server_commands(command)
    _add_compile_commands(command)
    _add_optimum_operations(command)
    if only is not None and not built:  # no such command: the whole parser, whose error lists the commands
        return build_parser()
    return parser
