"""rbln-studio-cli: the headless front end; speaks optimum-rbln-cli's flags and imports only what a command needs."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from rbln_artifact_studio import __version__

# argparse, json and the backends' choice (an Enum) load only for the commands that use them: `get` runs in shell
# loops, and its whole process is measured against a one-line json.load (docs/performance.md row 1).
if TYPE_CHECKING:
    import argparse

    from rbln_artifact_studio.core.errors import StudioError
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
    from rbln_artifact_studio.core.simulator.compiler import CompileRequest

PROG = "rbln-studio-cli"
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INVALID = 3  # inspect, serving, plan and scan: an artifact read is invalid (docs/cli.md)
VERBOSE_HELP = "say on stderr what the studio does (scans, calls to servers, jobs, retries), as it happens"

# optimum-rbln-cli spells the artifact operations as flags on one command; map them onto our subcommands.
_OPTIMUM_OPERATIONS = {
    "--get-kvcache-num-blocks": ("get-kvcache-num-blocks", False),
    "--set-kvcache-num-blocks": ("set-kvcache-num-blocks", True),
    "--set-memory-budget": ("set-memory-budget", True),
}


def _positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {text!r}")
    return value


def _seconds(text: str) -> float:
    """--timeout's value: a finite number of seconds above 0 (core's one check), else argparse's usage error."""
    import argparse

    from rbln_artifact_studio.core.numbers import BadNumber, positive_seconds

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


def _warn(message: str) -> None:
    from rbln_artifact_studio.core.shown import line_shown

    print(f"warning: {line_shown(message)}", file=sys.stderr)


def _print_json(data: Any) -> None:
    import json

    json.dump(data, sys.stdout, indent=2)
    sys.stdout.write("\n")


class TerminalProgress:
    """A one-line progress bar on a terminal's stderr; silent when stderr is piped."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, done: int, total: int, message: str) -> None:
        if not self.enabled:
            return
        import time

        now = time.monotonic()
        if now - self._last < 0.1 and done < total:
            return
        self._last = now
        from rbln_artifact_studio.core.sizes import format_bytes

        if total:
            width = 30
            filled = int(width * done / total)
            bar = "#" * filled + "-" * (width - filled)
            text = f"\r[{bar}] {done * 100 // total:3d}% {format_bytes(done)} / {format_bytes(total)}  {message}"
        else:
            text = f"\r{message}"
        sys.stderr.write(text[:200].ljust(80))
        if total and done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _bar_progress() -> Callable[[int, int, str], None]:
    """The bar for byte counts; indeterminate updates (total 0) are skipped, their lines are logged already.

    Run by a resize job on a server (remote/job_progress.ENV set), the counts go to stderr as marked lines
    instead, a few a second: the job's log carries them back to the app or CLI that follows the job.
    """
    from rbln_artifact_studio.remote.job_progress import ENV

    if os.environ.get(ENV):
        return _progress_lines()
    bar = TerminalProgress()

    def progress(done: int, total: int, message: str) -> None:
        if total:
            bar(done, total, message)

    return progress


def _progress_lines() -> Callable[[int, int, str], None]:
    import time

    from rbln_artifact_studio.remote.job_progress import progress_line

    last = 0.0

    def progress(done: int, total: int, message: str) -> None:
        nonlocal last
        now = time.monotonic()
        if not total or (0 < done < total and now - last < 0.2):
            return
        last = now
        print(progress_line(done, total, message), file=sys.stderr, flush=True)

    return progress


# ---- commands -----------------------------------------------------------------------------------------


def _as_optimum_refusal(exc: Exception, model_id: str) -> Exception:
    """A NoKvCacheError worded with the folder exactly as given, as optimum-rbln-cli words it."""
    from rbln_artifact_studio.core.errors import StudioError
    from rbln_artifact_studio.core.model.kinds import NoKvCacheError, not_resizable_message

    if isinstance(exc, NoKvCacheError):
        return StudioError(not_resizable_message(model_id, exc.description.cls_name))
    return exc


def cmd_get(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.core.errors import ConfigError, StudioError
    from rbln_artifact_studio.core.schemes import is_local

    count = None
    if is_local(args.dir):  # shell loops call get per artifact: the common kind's one number, read first
        from rbln_artifact_studio.core.storage.jsonfile import plain_decoder_count

        try:  # what places.local reads first too; anything else (a file it cannot read) takes the road below
            count = plain_decoder_count(args.dir)
        except ConfigError:
            count = None
    if count is None:  # any other kind or place, or an error to word: the location model and its dispatch
        from rbln_artifact_studio.core.location import parse_location
        from rbln_artifact_studio.places import dispatch

        try:
            count = dispatch.read_block_count(parse_location(args.dir))
        except StudioError as exc:
            raise _as_optimum_refusal(exc, args.dir) from None
    print(count)  # optimum-rbln-cli prints what the file records, whatever it is, and exits 0: so do we
    from rbln_artifact_studio.core.storage.jsonfile import block_count_problem

    problem = block_count_problem(count)
    if problem is not None:
        _warn(f"{args.dir}: {problem} `inspect` says what else is wrong.")
    return 0


def _inspector(args: argparse.Namespace) -> Any:
    from rbln_artifact_studio.backends.choice import BackendChoice
    from rbln_artifact_studio.backends.registry import inspector_for

    return inspector_for(BackendChoice.parse(getattr(args, "backend", BackendChoice.AUTO.value)))


def _open_verdict(target: str, args: argparse.Namespace) -> Any:
    """_open for a command that gives a verdict: a config that fails validation makes the artifact invalid
    (exit 3, as scan marks its row), while a folder without rbln_config.json is no artifact at all (exit 1);
    told by the error's class, which every kind of place keeps."""
    from rbln_artifact_studio.core.errors import ConfigError, InvalidArtifactError, NotAnArtifactError

    try:
        return _open(target, args)
    except NotAnArtifactError:
        raise
    except ConfigError as exc:
        raise InvalidArtifactError(exc.message, hint=exc.hint) from None


def _open(target: str, args: argparse.Namespace) -> Any:
    """An artifact wherever it lives (a local folder; a server's, read there by its own rebel)."""
    from rbln_artifact_studio.core.location import parse_location
    from rbln_artifact_studio.places import dispatch

    return dispatch.open_artifact(parse_location(target), _inspector(args))


def _resize(args: argparse.Namespace, target: int | None, budget_text: str | None) -> int:
    from rbln_artifact_studio.backends.choice import BackendChoice
    from rbln_artifact_studio.core.location import parse_beside, parse_location
    from rbln_artifact_studio.core.model.kinds import NoKvCacheError
    from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
    from rbln_artifact_studio.places import dispatch
    from rbln_artifact_studio.places.kind import Report

    source = parse_location(args.dir)
    output = parse_beside(args.output_dir, source) if args.output_dir else None  # a plain path: beside the source
    request = ResizeRequest(source, target, budget_text, output, BackendChoice.parse(args.backend))
    try:
        result = dispatch.resize(request, Report(_log_line, _bar_progress()))
    except NoKvCacheError as exc:
        raise _as_optimum_refusal(exc, args.dir) from None
    from rbln_artifact_studio.places.read_back import confirm_blocks

    confirm_blocks(result.where, result.target)  # what the place holds now is what is confirmed
    for warning in result.warnings:
        _warn(warning)
    for shared in result.unshared:
        print(f"note: copied {shared} before writing, so the other path keeps its bytes", file=sys.stderr)
    if args.json:
        _print_json(result.to_json())
        return 0
    if budget_text is not None:
        print(f"memory_budget {budget_text} fits kvcache_num_blocks={result.target}")
    print(result.summary())
    return 0


def cmd_set_blocks(args: argparse.Namespace) -> int:
    return _resize(args, args.num_blocks, None)


def cmd_set_budget(args: argparse.Namespace) -> int:
    return _resize(args, None, args.budget)


def cmd_inspect(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.core.display.report import inspect_dict, inspect_text
    from rbln_artifact_studio.core.model.budget import parse_budget
    from rbln_artifact_studio.core.model.kinds import NoKvCacheError

    try:
        artifact = _open_verdict(args.dir, args)
    except NoKvCacheError as exc:  # no resizable KV cache: say what the folder holds instead
        from rbln_artifact_studio.core.display.kinds_report import description_dict, description_text

        if args.json:
            _print_json(description_dict(exc.description))
        else:
            print(description_text(exc.description))
        return 0
    if args.what_if is not None:  # what a compile at that budget gives: the details' What-if table
        from rbln_artifact_studio.core.display.explore_display import what_if_text
        from rbln_artifact_studio.core.planning.explore import what_if

        result = what_if(artifact, args.what_if)
        if args.json:
            from rbln_artifact_studio.core.display.report import breakdown_dict

            what = {"memory_budget": args.what_if, "kvcache_num_blocks": result.blocks, "current": result.current}
            _print_json(
                {**what, "floor": result.floor, "full": result.full, "breakdown": breakdown_dict(result.breakdown)}
            )
        else:
            print(what_if_text(result, artifact.npu.chiplets if artifact.npu else 1))
        return 0
    budget = parse_budget(args.memory_budget)
    if args.json:
        _print_json(inspect_dict(artifact, budget))
    else:
        print(inspect_text(artifact, budget))
    return EXIT_INVALID if artifact.status.value == "invalid" else 0


def _stop_reason(exc: BaseException) -> str:
    """Why a command stopped early, in the words main() prints for it."""
    from rbln_artifact_studio.core.errors import StudioError

    if isinstance(exc, KeyboardInterrupt):
        return "cancelled"
    if isinstance(exc, StudioError):
        from rbln_artifact_studio.cli.flags import FLAGS

        return exc.one_line(FLAGS)  # a remedy names its flag
    return f"internal error: {type(exc).__name__}: {exc}"


def cmd_scan(args: argparse.Namespace) -> int:
    def issue(path: object, message: str) -> None:
        _warn(message)

    from rbln_artifact_studio.core.location import parse_location
    from rbln_artifact_studio.places import dispatch
    from rbln_artifact_studio.places.kind import ScanOptions

    several = len(args.roots) > 1 or bool(args.on)  # servers read at once, a failed one a row
    args.root = ", ".join(args.roots)
    root = None if several else parse_location(args.roots[0])
    invalid = count = 0
    failed: list[str] = []  # servers' folders that could not be read: a row each, yet no artifact

    def counted(rows: Iterable[ArtifactSummary]) -> Iterator[ArtifactSummary]:
        nonlocal invalid, count
        for row in rows:
            count += 1
            invalid += row.status.value == "invalid"
            yield row

    from rbln_artifact_studio.core.fleet.scan_pool import idle_cpus

    processes = args.jobs if args.jobs is not None else idle_cpus()
    # With --verbose (only then is logging loaded): why a scan read in one process or several.
    if args.jobs is None and getattr(args, "verbose", False):
        from rbln_artifact_studio.core.logs import logger

        logger(__name__).debug("--jobs not given: up to %d process(es), the CPUs idle now", processes)
    if root is None:
        from rbln_artifact_studio.cli.fleet import scan_fleet

        rows = counted(scan_fleet(args.roots, args.on, args.timeout or 600.0, issue, failed))
    else:
        options = ScanOptions(
            issue, not args.no_cache, processes, inspector=lambda: _inspector(args), timeout=args.timeout
        )
        rows = counted(dispatch.scan(root, options))  # inspect's check: one verdict for both
    if args.format == "json":
        from rbln_artifact_studio.core.fleet.fleet_report import write_json

        # Row by row (the report of a large fleet is never held whole), and one whole array even when stopped.
        write_json(rows, sys.stdout.write, _stop_reason)
        return EXIT_INVALID if invalid else 0
    if args.format:
        from rbln_artifact_studio.core.fleet.fleet_report import render

        sys.stdout.write(render(rows, args.format))
        return EXIT_INVALID if invalid else 0
    from rbln_artifact_studio.core.fleet.fleet_report import text_lines

    for line in text_lines(rows, with_host=several):
        print(line)
    if failed:
        print(f"{count - len(failed)} artifact(s) under {args.root}; {len(failed)} could not be read", file=sys.stderr)
    else:
        print(f"{count} artifact(s) under {args.root}", file=sys.stderr)
    return EXIT_INVALID if invalid else 0


def cmd_presets(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.core.model.modelspec import preset_ids, resolve_model
    from rbln_artifact_studio.core.simulator.memory_model import weight_bytes_per_shard
    from rbln_artifact_studio.core.sizes import format_bytes

    presets = [(model_id, resolve_model(model_id).spec) for model_id in preset_ids()]
    if args.json:
        _print_json(
            [
                {
                    "model_id": model_id,
                    "architecture": spec.architecture,
                    "layers": spec.num_hidden_layers,
                    "kv_heads": spec.kv_heads,
                    "head_dim": spec.dim_per_head,
                    "max_position_embeddings": spec.max_position_embeddings,
                    "weights_bytes": weight_bytes_per_shard(spec, 1),
                }
                for model_id, spec in presets
            ]
        )
    else:
        for model_id, spec in presets:
            print(
                f"{model_id:36} {spec.architecture:24} {spec.num_hidden_layers:3} layers  "
                f"max_seq_len {spec.max_position_embeddings:>7,}  "
                f"weights {format_bytes(weight_bytes_per_shard(spec, 1))}"
            )
    return 0


def compile_request(args: argparse.Namespace) -> CompileRequest:
    """The compile options of a parsed command line (the GUI's "Show command" is tested against this)."""
    from rbln_artifact_studio.core.simulator.compiler import CompileRequest

    return CompileRequest(
        model_id=args.model_id,
        npu=args.npu,
        num_devices=1 if args.num_devices is None else args.num_devices,  # 0 is refused, not taken as unset
        batch_size=args.batch_size,
        max_seq_len=args.max_seq_len,
        attn_impl=args.attn_impl,
        kvcache_partition_len=args.kvcache_partition_len,
        prefill_chunk_size=args.prefill_chunk_size,
        memory_budget=args.memory_budget,
        kvcache_num_blocks=args.kvcache_num_blocks,
        materialize_weights=args.materialize_weights,
    )


def cmd_compile(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.backends.choice import BackendChoice
    from rbln_artifact_studio.core.location import parse_location
    from rbln_artifact_studio.core.simulator.compile_defaults import with_defaults
    from rbln_artifact_studio.places.delivery import compile_to
    from rbln_artifact_studio.places.kind import Report

    output = parse_location(args.output_dir)  # a folder here, on a server or in a bucket: parsed once
    # The wizard's defaults where none were given (one function for both): a partition that divides max_seq_len.
    request = with_defaults(compile_request(args), devices_given=args.num_devices is not None)
    result = compile_to(request, output, BackendChoice.parse(args.backend), Report(_log_line, _bar_progress()))
    from rbln_artifact_studio.places.read_back import confirm_blocks

    confirm_blocks(result.where, result.num_blocks)  # what the place holds now is what is confirmed
    for warning in result.warnings:
        _warn(warning)
    if args.json:
        _print_json(result.to_json())
    else:
        print(result.summary())
    return 0


def _log_line(line: str) -> None:
    print(line, file=sys.stderr)


def cmd_backends(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.backends.registry import detect_backends

    found = detect_backends()
    if args.json:
        _print_json([b.to_json() for b in found])
    else:
        for b in found:
            print(b.line())
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    import shlex

    from rbln_artifact_studio.core.display.plan_display import plan_text
    from rbln_artifact_studio.core.planning.planner import fixes, plan, require_valid

    if args.on:
        from rbln_artifact_studio.cli.fleet import cmd_plan_on, split_on
        from rbln_artifact_studio.core.location import server_url

        hosts, dirs = split_on(args.on, args.dirs)
        if not dirs:
            return _usage_error("plan", f"name the artifacts: plan DIR... --on {server_url('HOST')} ...")
        return cmd_plan_on(hosts, [_open(d, args) for d in dirs], args.json, args.timeout)  # here or on any server
    if not args.dirs:
        return _usage_error("plan", "the following arguments are required: DIR")
    artifacts = [_open(d, args) for d in args.dirs]  # wherever they live
    require_valid(artifacts)  # the verdict scan and inspect give: a plan never counts on an invalid artifact
    p = plan(artifacts)
    found = fixes(p, p.label_for(args.fix) if args.fix else None)
    commands = [[PROG, "set-kvcache-num-blocks", f.path, str(f.target)] if f.changes else None for f in found]
    if args.json:
        out = p.to_json()
        out["fixes"] = [{**f.to_json(), "command": cmd} for f, cmd in zip(found, commands, strict=True)]
        _print_json(out)
    else:
        print(plan_text(p, found))
        for cmd in filter(None, commands):
            print(f"  run: {shlex.join(cmd)}   (add --output-dir D to resize a copy instead)")
    return 0 if p.fits else EXIT_ERROR


def cmd_serving(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from rbln_artifact_studio.core.display.serving_display import serving_text
    from rbln_artifact_studio.core.model.kinds import NoKvCacheError
    from rbln_artifact_studio.core.planning.serving import check_artifact_serving

    try:  # the verdict inspect and scan give; a VLM through its language model; wherever it lives
        artifact = _open_verdict(args.dir, args)
    except NoKvCacheError as exc:
        raise _as_optimum_refusal(exc, args.dir) from None
    check = check_artifact_serving(artifact.loaded, artifact.problems)
    check = replace(check, path=str(artifact.where_of(artifact.loaded.path.parent)))  # on its server, for a server's
    if args.json:
        _print_json(check.to_json())
    else:
        print(serving_text(check))
    if not check.loads:
        return EXIT_INVALID
    return EXIT_ERROR if check.errors else 0


def _usage_error(command: str, message: str) -> int:
    print(f"usage: {PROG} {command} ...\n{PROG} {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _sources(args: argparse.Namespace) -> Any:
    from rbln_artifact_studio.cli.fleet import PrometheusSources

    urls = tuple(dict.fromkeys(args.prometheus or ()))  # each once, as servers are
    return PrometheusSources(urls, args.match, args.window, args.prometheus_http_config)


def cmd_devices(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.cli.fleet import cmd_devices as devices
    from rbln_artifact_studio.core.location import server_url

    if not args.hosts and not args.prometheus:
        return _usage_error("devices", f"name the servers ({server_url('HOST')}, @GROUP) or give --prometheus URL")
    return devices(args.hosts, args.json, args.timeout, _sources(args))


def cmd_place(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.cli.fleet import cmd_place as place
    from rbln_artifact_studio.cli.fleet import split_on
    from rbln_artifact_studio.core.location import server_url

    hosts, dirs = split_on(args.on or [], args.dirs)
    if not dirs:
        return _usage_error("place", f"name the artifacts: place ART... --on {server_url('HOST')} ...")
    if not hosts and not args.prometheus:
        return _usage_error("place", f"say where: --on {server_url('HOST')} ... (or @GROUP), or --prometheus URL")
    sources = _sources(args)
    sources.check()  # a wrong flag is said before any artifact is opened
    return place(dirs, [_open(d, args) for d in dirs], hosts, args.json, args.timeout, sources)  # wherever they live


def cmd_server_groups(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.cli.fleet import cmd_server_groups as groups

    return groups(args.json)


def cmd_set_server_group(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.cli.fleet import cmd_set_server_group as set_group

    return set_group(args.name, args.hosts)


def cmd_remove_server_group(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.cli.fleet import cmd_remove_server_group as remove_group

    return remove_group(args.name)


def cmd_trust_host(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.cli.servers import cmd_trust_host as trust

    return trust(args.host, args.fingerprint)


def cmd_jobs(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.cli.servers import cmd_jobs as jobs

    return jobs(args.host, args.job, args.json, _log_line, _bar_progress())


def cmd_explore(args: argparse.Namespace) -> int:
    from rbln_artifact_studio.core.planning.explore import exploration_text, explore

    exploration = explore(_open(args.dir, args))
    if args.json:
        _print_json(exploration.to_json())
    else:
        print(exploration_text(exploration))
    return 0


# ---- parser -------------------------------------------------------------------------------------------


def cmd_download(args: argparse.Namespace) -> int:
    """`download SERVER-OR-BUCKET-ARTIFACT DEST`: the artifact as it is into the new folder DEST here, whole or not
    at all (as the desktop's Download to This Computer); DEST parsed once as a location (a URL is refused)."""
    from rbln_artifact_studio.core.location import parse_location
    from rbln_artifact_studio.core.progress import Progress
    from rbln_artifact_studio.core.sizes import format_bytes
    from rbln_artifact_studio.places.download import download

    done = download(parse_location(args.source), parse_location(args.dest), Progress(_bar_progress()))
    if args.json:
        _print_json({"source": args.source, "output": str(done.where.path), "bytes": done.size})
    else:
        print(f"Downloaded {args.source} to {done.where.path} ({format_bytes(done.size)})")
    return 0


def _add_backend(p: argparse.ArgumentParser) -> None:
    from rbln_artifact_studio.backends.choice import BackendChoice

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


class _Unused:
    """Stands in for the parser of a command not on the command line: what is added to it goes nowhere."""

    def __getattr__(self, name: str) -> Callable[..., _Unused]:
        return lambda *args, **kwargs: self


def command_named(args_list: Sequence[str]) -> str | None:
    """The command a command line names, when nothing but --verbose comes before it (else the whole parser reads it)."""
    for arg in args_list:
        if arg not in ("-v", "--verbose"):
            return None if arg.startswith("-") else arg
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `only` a command's exact name, only that command's parser is built under it.

    Each command's parser costs a start gettext look-ups and argparse objects (~15 ms of CPU for all of them): a
    command reads its own line with its own parser and the top one, the same words in its help and errors. A name
    that is no command (a typo, an abbreviation) gets the whole parser, to list the choices.
    """
    import argparse

    from rbln_artifact_studio.core.location import BucketPrefix, server_url

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

    def command(name: str, func: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        if only is not None and name != only:
            unused: Any = _Unused()
            return unused
        built.append(name)
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
        # After the command too; not given there, it leaves the value given before the command.
        p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP)
        p.set_defaults(func=func)
        return p

    from rbln_artifact_studio.cli import vllm_cache

    vllm_cache.add_parser(
        command("vllm-cache", vllm_cache.cmd_vllm_cache, "vllm-rbln's compiled-model cache: list, lookup, seed, prune")
    )

    p = command("inspect", cmd_inspect, "show an artifact's settings, KV cache and per-NPU DRAM breakdown")
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

    p = command("scan", cmd_scan, "list every artifact under a folder (or folders on several servers at once)")
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

    p = command("plan", cmd_plan, "check whether artifacts fit on the same NPUs together, and size the fix")
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

    p = command("serving", cmd_serving, "show what vllm-rbln derives from an artifact (max_num_seqs, blocks, ...)")
    p.add_argument("dir")
    p.add_argument("--json", action="store_true")

    p = command("explore", cmd_explore, "show the blocks an artifact resolves to at every memory budget")
    p.add_argument("dir")
    p.add_argument("--json", action="store_true")
    _add_backend(p)

    p = command(
        "devices",
        cmd_devices,
        "list servers' NPUs now (rbln-stat -j, else rbln-smi's table): memory used and total, processes, and each "
        "context's allocation against what its artifact predicts",
    )
    p.add_argument("hosts", nargs="*", metavar=server_url("HOST"), help="one or more servers, or @GROUP (read at once)")
    p.add_argument("--json", action="store_true")
    _add_timeout(p, prometheus=True)
    _add_prometheus(p, "with --prometheus: also each NPU's peak used memory over this long (30m, 1h, 1d)")

    p = command(
        "place",
        cmd_place,
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

    p = command("server-groups", cmd_server_groups, "list the server groups (@GROUP) and their servers")
    p.add_argument("--json", action="store_true")

    p = command(
        "set-server-group",
        cmd_set_server_group,
        "save a server group: @NAME then names these servers wherever servers are taken (replaces its servers)",
    )
    p.add_argument("name", metavar="NAME", help="the group's name: letters, digits, '.', '-', '_' (e.g. rack1)")
    p.add_argument("hosts", nargs="+", metavar=server_url("HOST"), help="its servers, in order")

    p = command("remove-server-group", cmd_remove_server_group, "remove a server group (its servers are untouched)")
    p.add_argument("name", metavar="NAME")

    p = command(
        "download",
        cmd_download,
        "copy a server's or a bucket's artifact as it is into a new folder here (whole, or nothing written)",
    )
    p.add_argument("source", metavar="SOURCE", help=f"{server_url('HOST')}/PATH or {BucketPrefix('BUCKET', 'PREFIX')}")
    p.add_argument("dest", metavar="DEST", help="a new (or empty) folder on this computer")
    p.add_argument("--json", action="store_true")

    p = command("jobs", cmd_jobs, "list a server's resize jobs, or show one's log and outcome (read back)")
    p.add_argument("host", metavar=server_url("HOST"))
    p.add_argument("job", nargs="?", help="a job id: follow its log until it ends, then show the outcome")
    p.add_argument("--json", action="store_true")

    p = command("trust-host", cmd_trust_host, "show a server's host key fingerprint and record it in known_hosts")
    p.add_argument("host", metavar=server_url("HOST"))
    p.add_argument("--fingerprint", metavar="SHA256:...", help="record the key only if it has this fingerprint")

    p = command("presets", cmd_presets, "list the bundled model presets")
    p.add_argument("--json", action="store_true")

    p = command(
        "backends",
        cmd_backends,
        "list the backends available here: the simulator, optimum-rbln-cli, rebel inspection "
        "(configure with RBLN_STUDIO_OPTIMUM_CLI, RBLN_STUDIO_TOOLCHAIN_PYTHON)",
    )
    p.add_argument("--json", action="store_true")

    p = command("compile", cmd_compile, "compile a model into a new artifact (the built-in simulator by default)")
    _add_compile_options(p)

    p = command("get-kvcache-num-blocks", cmd_get, "print an artifact's kvcache_num_blocks")
    p.add_argument("dir")
    p.add_argument(
        *_flag("--output_dir"), "-o", dest="output_dir", help="accepted and ignored, as optimum-rbln-cli does"
    )

    for name, func, metavar, help_text in (
        ("set-kvcache-num-blocks", cmd_set_blocks, "N", "resize the KV cache to N blocks, in place or into a copy"),
        ("set-memory-budget", cmd_set_budget, "BUDGET", "resize the KV cache to what fits a memory budget"),
    ):
        p = command(name, func, help_text)
        p.add_argument("dir")
        if metavar == "N":
            p.add_argument("num_blocks", type=int, metavar="N")
        else:
            p.add_argument("budget", metavar="BUDGET", help="0.8, 80%%, 10GB")
        p.add_argument(*_flag("--output_dir"), "-o", dest="output_dir", help="write a resized copy here")
        p.add_argument("--json", action="store_true")
        _add_backend(p)
    if only is not None and not built:  # no such command: the whole parser, whose error lists the commands
        return build_parser()
    return parser


SET_FLAGS_EXCLUSIVE = "--set-kvcache-num-blocks and --set-memory-budget are mutually exclusive."


def _given(argv: list[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in argv)


def _drop_flag(argv: list[str], flag: str) -> list[str]:
    """argv without `flag VALUE` / `flag=VALUE`."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == flag:
            skip = True
        elif not a.startswith(flag + "="):
            out.append(a)
    return out


def translate_optimum_argv(argv: list[str]) -> list[str]:
    """Rewrite optimum-rbln-cli style arguments (operation flags, bare --model-id) into our subcommands."""
    if not argv or not argv[0].startswith("-") or argv[0] in ("-h", "--help", "--version"):
        return argv
    rest = list(argv)
    if _given(rest, "--get-kvcache-num-blocks"):  # get wins over the set flags, as in optimum-rbln-cli
        for flag in ("--set-kvcache-num-blocks", "--set-memory-budget"):
            if _given(rest, flag):
                _warn(
                    f"{flag} is ignored with --get-kvcache-num-blocks (as optimum-rbln-cli does); nothing is changed."
                )
                rest = _drop_flag(rest, flag)
    for flag, (command, takes_value) in _OPTIMUM_OPERATIONS.items():
        matches = [i for i, a in enumerate(rest) if a == flag or a.startswith(flag + "=")]
        if not matches:
            continue
        i = matches[0]
        value: list[str] = []
        if "=" in rest[i]:
            value = [rest[i].split("=", 1)[1]]
            del rest[i]
        elif takes_value and i + 1 < len(rest):
            value = [rest[i + 1]]
            del rest[i : i + 2]
        else:
            del rest[i]
        model_dir: list[str] = []
        for j, a in enumerate(rest):
            if a in ("--model-id", "--model_id") and j + 1 < len(rest):
                model_dir = [rest[j + 1]]
                del rest[j : j + 2]
                break
            if a.startswith(("--model-id=", "--model_id=")):
                model_dir = [a.split("=", 1)[1]]
                del rest[j]
                break
        if any(v.startswith("-") for v in model_dir + value):  # a folder named -rf: positional, not an option
            return [command, *rest, "--", *model_dir, *value]
        return [command, *model_dir, *value, *rest]
    if any(a in ("--model-id", "--model_id") or a.startswith(("--model-id=", "--model_id=")) for a in argv):
        return ["compile", *argv]
    return argv


def _plain_get(args_list: list[str]) -> SimpleNamespace | None:
    """`get-kvcache-num-blocks DIR` and nothing else: shell loops call it per artifact, so skip building the parser."""
    if len(args_list) == 2 and args_list[0] == "get-kvcache-num-blocks" and not args_list[1].startswith("-"):
        return SimpleNamespace(dir=args_list[1], func=cmd_get)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if (
        given
        and given[0].startswith("-")
        and all(_given(given, f) for f in ("--set-kvcache-num-blocks", "--set-memory-budget"))
    ):
        print(SET_FLAGS_EXCLUSIVE, file=sys.stderr)  # optimum-rbln-cli's words and exit code
        return EXIT_USAGE
    args_list = translate_optimum_argv(given)
    plain_get = _plain_get(args_list)
    args = plain_get or build_parser(command_named(args_list)).parse_args(args_list)
    from rbln_artifact_studio.core.errors import StudioError

    if getattr(args, "verbose", False):
        from rbln_artifact_studio.core.logs import logger, setup

        setup(verbose=True)
        logger(__name__).debug("%s %s", PROG, " ".join(given))  # the log's formatter redacts URL passwords

    try:
        if plain_get is not None:  # reads one file and writes nothing: SIGTERM's default loses nothing
            return int(args.func(args))
        from rbln_artifact_studio.core.stop_signals import terminate_raises

        with terminate_raises():  # SIGTERM cancels as Ctrl-C does: staging folders and locks cleaned up
            return int(args.func(args))
    except StudioError as exc:
        return _studio_error(exc)
    except KeyboardInterrupt as exc:
        from rbln_artifact_studio.core.errors import NOTHING_CHANGED
        from rbln_artifact_studio.core.stop_signals import exit_status, left_by

        print(f"cancelled: {left_by(exc) or NOTHING_CHANGED}", file=sys.stderr)
        return exit_status(exc)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG or os.environ.get("RBLN_STUDIO_DEBUG"):
            return _internal_error(exc)
        print(f"error: {_name_too_long(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a bug, not bad input: still one line unless asked for the traceback
        return _internal_error(exc)


def _studio_error(exc: StudioError) -> int:
    """Print a StudioError on one line and give its exit code; what it takes loads only then, off get's fast path."""
    from rbln_artifact_studio.cli.flags import FLAGS
    from rbln_artifact_studio.core.errors import InvalidArtifactError
    from rbln_artifact_studio.core.numbers import BadNumber
    from rbln_artifact_studio.core.shown import line_shown

    print(f"error: {line_shown(exc.one_line(FLAGS))}", file=sys.stderr)  # a remedy names its flag
    if isinstance(exc, InvalidArtifactError):
        return EXIT_INVALID
    if isinstance(exc, BadNumber):  # a number typed into an environment variable: a usage error, as a flag's
        return EXIT_USAGE
    return EXIT_ERROR


def _internal_error(exc: Exception) -> int:
    from rbln_artifact_studio.core.logs import logger

    logger(__name__).debug("internal error", exc_info=exc)  # the traceback, with --verbose
    if os.environ.get("RBLN_STUDIO_DEBUG"):
        raise exc
    from rbln_artifact_studio.core.shown import line_shown

    said = line_shown(str(exc))
    print(f"internal error: {type(exc).__name__}: {said} (set RBLN_STUDIO_DEBUG=1 for the traceback)", file=sys.stderr)
    return EXIT_ERROR


def _name_too_long(exc: OSError) -> str:
    """ENAMETOOLONG in words: which path, and the limits it broke (a name of 255 bytes, a path of 4,096)."""
    path = os.fsdecode(exc.filename) if exc.filename is not None else "a path given"
    longest = max((len(os.fsencode(part)) for part in path.split(os.sep)), default=0)
    what = (
        f"one of its names is {longest} bytes long, and a file system allows 255"
        if longest > 255
        else f"it is {len(os.fsencode(path))} bytes long, more than the system allows"
    )
    shown = os.sep.join(part if len(os.fsencode(part)) <= 255 else f"{part[:24]}…" for part in path.split(os.sep))
    return f"The path {shown} is too long ({what}); give a shorter name."


if __name__ == "__main__":
    sys.exit(main())
