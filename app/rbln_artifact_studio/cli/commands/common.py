"""What the CLI's commands share: opening an artifact wherever it lives, optimum-rbln-cli's wording of a refusal,
JSON on stdout, a usage error, and the progress a long job shows on stderr."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.cli.codes import EXIT_USAGE, PROG
from rbln_artifact_studio.core.errors import (
    ConfigError,
    InvalidArtifactError,
    NotAnArtifactError,
    StudioError,
)
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.core.model.kinds import NoKvCacheError, not_resizable_message
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.remote.job_progress import ENV, progress_line

if TYPE_CHECKING:  # the artifact model loads pydantic: for the hints alone, a scan would start 100 ms later
    from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2)
    sys.stdout.write("\n")


def log_line(line: str) -> None:
    print(line, file=sys.stderr)


def usage_error(command: str, message: str) -> int:
    print(f"usage: {PROG} {command} ...\n{PROG} {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def as_optimum_refusal(exc: Exception, model_id: str) -> Exception:
    """A NoKvCacheError worded with the folder exactly as given, as optimum-rbln-cli words it."""
    if isinstance(exc, NoKvCacheError):
        return StudioError(not_resizable_message(model_id, exc.description.cls_name))
    return exc


def read_block_count(where: str) -> int:
    """get-kvcache-num-blocks' count from any kind of place (cli/get.py reads the common kind's first)."""
    try:
        return dispatch.read_block_count(parse_location(where))
    except StudioError as exc:
        raise as_optimum_refusal(exc, where) from None


def inspector(args: argparse.Namespace) -> GraphInspector | None:
    # deferred: the backends' registry (pydantic, ~160 ms) only once an artifact is read; a scan's rows rarely need it
    from rbln_artifact_studio.backends.registry import inspector_for

    return inspector_for(BackendChoice.parse(getattr(args, "backend", BackendChoice.AUTO.value)))


def open_artifact(target: str, args: argparse.Namespace) -> Artifact:
    """An artifact wherever it lives (a local folder; a server's, read there by its own rebel)."""
    return dispatch.open_artifact(parse_location(target), inspector(args))


def open_verdict(target: str, args: argparse.Namespace) -> Artifact:
    """open_artifact for a command that gives a verdict: a config that fails validation makes the artifact invalid
    (exit 3, as scan marks its row), while a folder without rbln_config.json is no artifact at all (exit 1);
    told by the error's class, which every kind of place keeps."""
    try:
        return open_artifact(target, args)
    except NotAnArtifactError:
        raise
    except ConfigError as exc:
        raise InvalidArtifactError(exc.message, hint=exc.hint) from None


class TerminalProgress:
    """A one-line progress bar on a terminal's stderr; silent when stderr is piped."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, done: int, total: int, message: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and done < total:
            return
        self._last = now
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


def bar_progress() -> Callable[[int, int, str], None]:
    """The bar for byte counts; indeterminate updates (total 0) are skipped, their lines are logged already.

    Run by a resize job on a server (remote/job_progress.ENV set), the counts go to stderr as marked lines
    instead, a few a second: the job's log carries them back to the app or CLI that follows the job.
    """
    if os.environ.get(ENV):
        return _progress_lines()
    bar = TerminalProgress()

    def progress(done: int, total: int, message: str) -> None:
        if total:
            bar(done, total, message)

    return progress


def _progress_lines() -> Callable[[int, int, str], None]:
    last = 0.0

    def progress(done: int, total: int, message: str) -> None:
        nonlocal last
        now = time.monotonic()
        if not total or (0 < done < total and now - last < 0.2):
            return
        last = now
        print(progress_line(done, total, message), file=sys.stderr, flush=True)

    return progress
