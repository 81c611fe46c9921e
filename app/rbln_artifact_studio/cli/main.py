"""rbln-studio-cli: the headless front end's entry, on the start-up-critical path (speaks optimum-rbln-cli's flags).

`get-kvcache-num-blocks DIR` runs in shell loops, its whole process measured against a one-line json.load
(docs/performance.md row 1): it is read here without the parser and run by cli/get.py. Every other command line is
parsed by cli/parser.py, built for the command named alone, and run by its own module through cli/commands' table.
So this module imports only what get needs, and loads the rest in the few places marked `# deferred`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rbln_artifact_studio.cli.codes import EXIT_USAGE, PROG
from rbln_artifact_studio.cli.get import print_blocks

if TYPE_CHECKING:
    import argparse

# optimum-rbln-cli spells the artifact operations as flags on one command; map them onto our subcommands.
_OPTIMUM_OPERATIONS = {
    "--get-kvcache-num-blocks": ("get-kvcache-num-blocks", False),
    "--set-kvcache-num-blocks": ("set-kvcache-num-blocks", True),
    "--set-memory-budget": ("set-memory-budget", True),
}


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
                # deferred: a warning's wording, loaded only when there is one (not on get's fast path)
                from rbln_artifact_studio.cli.problems import warn

                warn(f"{flag} is ignored with --get-kvcache-num-blocks (as optimum-rbln-cli does); nothing is changed.")
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


def command_named(args_list: Sequence[str]) -> str | None:
    """The command a command line names, when nothing but --verbose comes before it (else the whole parser reads it)."""
    for arg in args_list:
        if arg not in ("-v", "--verbose"):
            return None if arg.startswith("-") else arg
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser (cli/parser.py); with `only` a command's exact name, only that command's."""
    # deferred: argparse and every command's options, which get's fast path never reads
    from rbln_artifact_studio.cli import parser

    return parser.build_parser(only)


def _plain_get(args_list: list[str]) -> str | None:
    """The folder of `get-kvcache-num-blocks DIR` and nothing else: shell loops call it per artifact, so it is read
    without building the parser."""
    if len(args_list) == 2 and args_list[0] == "get-kvcache-num-blocks" and not args_list[1].startswith("-"):
        return args_list[1]
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
    folder = _plain_get(args_list)
    if folder is not None:
        try:  # reads one file and writes nothing: SIGTERM's default loses nothing
            return print_blocks(folder)
        except (Exception, KeyboardInterrupt) as exc:
            return _failed(exc)
    args = build_parser(command_named(args_list)).parse_args(args_list)
    if getattr(args, "verbose", False):
        # deferred: logging (10 ms) only with --verbose
        from rbln_artifact_studio.core.logs import logger, setup

        setup(verbose=True)
        logger(__name__).debug("%s %s", PROG, " ".join(given))  # the log's formatter redacts URL passwords
    try:
        # deferred: the table of commands, which imports the module of the one command parsed when it runs
        from rbln_artifact_studio.cli.commands import run

        return run(args)
    except (Exception, KeyboardInterrupt) as exc:
        return _failed(exc)


def _failed(exc: BaseException) -> int:
    """The line and exit code of a command stopped by exc (cli/problems.py)."""
    # deferred: a failure's wording (shown text, remedies' flags), loaded only when something failed
    from rbln_artifact_studio.cli.problems import exit_code

    return exit_code(exc)


if __name__ == "__main__":
    sys.exit(main())
