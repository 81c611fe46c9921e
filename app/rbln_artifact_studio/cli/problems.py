"""How the CLI says a problem on stderr: a warning, or a failure's one line and the exit code it gives.

Loaded by every command but kept light: the start-up modules (main, get) import it only when there is something
to say, so `get-kvcache-num-blocks` reads its number without the wording below.
"""

from __future__ import annotations

import errno
import os
import sys

from rbln_artifact_studio.cli.codes import EXIT_ERROR, EXIT_INVALID, EXIT_USAGE
from rbln_artifact_studio.cli.flags import FLAGS
from rbln_artifact_studio.core.errors import NOTHING_CHANGED, InvalidArtifactError, StudioError
from rbln_artifact_studio.core.numbers import BadNumber
from rbln_artifact_studio.core.shown import line_shown
from rbln_artifact_studio.core.stop_signals import exit_status, left_by


def warn(message: str) -> None:
    print(f"warning: {line_shown(message)}", file=sys.stderr)


def exit_code(exc: BaseException) -> int:
    """What a command that stopped on `exc` prints on stderr, and the exit code it gives (a bug, not bad input,
    is still one line unless RBLN_STUDIO_DEBUG asks for the traceback)."""
    if isinstance(exc, StudioError):
        return _studio_error(exc)
    if isinstance(exc, KeyboardInterrupt):
        print(f"cancelled: {left_by(exc) or NOTHING_CHANGED}", file=sys.stderr)
        return exit_status(exc)
    if isinstance(exc, BrokenPipeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    if isinstance(exc, OSError):
        if exc.errno != errno.ENAMETOOLONG or os.environ.get("RBLN_STUDIO_DEBUG"):
            return _internal_error(exc)
        print(f"error: {_name_too_long(exc)}", file=sys.stderr)
        return EXIT_ERROR
    return _internal_error(exc)


def stop_reason(exc: BaseException) -> str:
    """Why a command stopped early, in the words main() prints for it."""
    if isinstance(exc, KeyboardInterrupt):
        return "cancelled"
    if isinstance(exc, StudioError):
        return exc.one_line(FLAGS)  # a remedy names its flag
    return f"internal error: {type(exc).__name__}: {exc}"


def _studio_error(exc: StudioError) -> int:
    """Print a StudioError on one line and give its exit code."""
    print(f"error: {line_shown(exc.one_line(FLAGS))}", file=sys.stderr)  # a remedy names its flag
    if isinstance(exc, InvalidArtifactError):
        return EXIT_INVALID
    if isinstance(exc, BadNumber):  # a number typed into an environment variable: a usage error, as a flag's
        return EXIT_USAGE
    return EXIT_ERROR


def _internal_error(exc: BaseException) -> int:
    # deferred: logging (10 ms) only to keep a bug's traceback for --verbose; every command loads this module
    from rbln_artifact_studio.core.logs import logger

    logger(__name__).debug("internal error", exc_info=exc)  # the traceback, with --verbose
    if os.environ.get("RBLN_STUDIO_DEBUG"):
        raise exc
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
