"""The studio's log: the named loggers under `rbln_artifact_studio` (and botocore's retries), sent to stderr with
--verbose and, for the desktop, to a rotating file in the app's log folder.

With a file, records go through a queue to a thread that writes them, so no caller (the GUI thread least of all)
waits on the disk or on a terminal; stderr alone (the CLI) is written directly, keeping the CLI single-threaded.
Without setup() nothing is written anywhere: the package's NullHandler keeps a library user's stderr quiet.
"""

from __future__ import annotations

import atexit
import logging
import queue
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from rbln_artifact_studio.core.app_dirs import log_dir
from rbln_artifact_studio.core.errors import CancelledError, StudioError
from rbln_artifact_studio.core.shown import redacted

PACKAGE = "rbln_artifact_studio"
LOG_FILE = "rbln-studio.log"
MAX_BYTES = 1 << 20  # a file this large is renamed .1 (and so on) and a new one begun
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# botocore decides on the object store's retries (objectstore/client.py asks for them); only its decisions to
# retry or give up are kept, not its word on every request that needed none.
RETRIES = "botocore.retries.standard"
_RETRY_WORDS = ("Retry needed", "Max attempts")

if TYPE_CHECKING:
    import logging.handlers

T = TypeVar("T")

_listener: logging.handlers.QueueListener | None = None
_handler: logging.Handler | None = None


# Quiet until setup(): without a handler of the package's, a warning would reach stderr through logging's last
# resort, beside the CLI's own error line.
logging.getLogger(PACKAGE).addHandler(logging.NullHandler())


def logger(name: str) -> logging.Logger:
    """logging.getLogger(name) for a module of the studio (`logger(__name__)`): the package's loggers stay quiet
    until a front end sets up the log."""
    return logging.getLogger(name)


class _RetriesOnly(logging.Filter):
    """botocore's retry decisions as warnings; its other debug records dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(_RETRY_WORDS):
            return False
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


class _Redacting(logging.Formatter):
    """Every record as text without a secret: a password in a URL, an Authorization header, a registered token
    (core/shown.py), whatever the record's author put in it."""

    def format(self, record: logging.LogRecord) -> str:
        return redacted(super().format(record))


def setup(verbose: bool = False, to_file: bool = False) -> Path | None:
    """Send the studio's records to stderr (verbose: everything, debug included) and to the log file (to_file:
    information and above, everything when verbose); returns the log file's path when there is one."""
    # The file's rotation and the queue: the desktop's and --verbose's. The desktop's first paint must not wait for
    # them (tests/gui/test_gui_startup.py).
    # deferred: logging.handlers (~5 ms with socket and pickle), off the desktop's first paint
    import logging.handlers

    stop()
    handlers: list[logging.Handler] = []
    if verbose:
        handlers.append(logging.StreamHandler(sys.stderr))
    path = None
    if to_file:
        folder = log_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / LOG_FILE
            handlers.append(
                logging.handlers.RotatingFileHandler(
                    path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True
                )
            )
        except OSError as exc:  # a log that cannot be written must not stop the app: say so where it can be read
            logging.getLogger(__name__).warning("No log file in %s: %s", folder, exc.strerror or exc)
            path = None
    if not handlers:
        return None
    formatter = _Redacting(FORMAT)
    for handler in handlers:
        handler.setFormatter(formatter)
    global _listener, _handler
    if path is None:
        # stderr alone (the CLI): written as it comes, no thread, so the CLI stays single-threaded and may still
        # fork its scan workers (scan_pool.can_fork_workers).
        _handler = handlers[0]
    else:
        records: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
        _handler = logging.handlers.QueueHandler(records)
        _listener = logging.handlers.QueueListener(records, *handlers, respect_handler_level=True)
        _listener.start()
        atexit.register(stop)
    package = logging.getLogger(PACKAGE)
    package.setLevel(logging.DEBUG if verbose else logging.INFO)
    package.addHandler(_handler)
    retries = logging.getLogger(RETRIES)
    retries.setLevel(logging.DEBUG)  # its decisions are debug records: the filter keeps those and raises them
    retries.addFilter(_RetriesOnly())
    retries.addHandler(_handler)
    return path


def stop() -> None:
    """Write what is queued and detach the handlers setup() added (at exit, or before a new setup)."""
    global _listener, _handler
    if _listener is not None:
        _listener.stop()
        for handler in _listener.handlers:
            handler.close()
        _listener = None
    if _handler is not None:
        logging.getLogger(PACKAGE).removeHandler(_handler)
        retries = logging.getLogger(RETRIES)
        retries.removeHandler(_handler)
        for f in [f for f in retries.filters if isinstance(f, _RetriesOnly)]:
            retries.removeFilter(f)
        _handler.close()
        _handler = None


def logged(logger: logging.Logger, what: str, rows: Iterable[T]) -> Iterator[T]:
    """rows passed through as they come, with a record when they start and one saying how they ended (how many,
    how long; cancelled or failed, and why). Closing this closes rows at once, as closing rows itself would."""
    logger.info("%s: started", what)
    started, count, level, ended = time.monotonic(), 0, logging.INFO, "stopped by its reader"
    try:
        for row in rows:
            count += 1
            yield row
        ended = "done"
    except CancelledError:
        ended = "cancelled"
        raise
    except StudioError as exc:
        level, ended = logging.WARNING, f"failed: {exc.one_line()}"
        raise
    finally:
        close = getattr(rows, "close", None)
        if close is not None:
            close()
        logger.log(level, "%s: %s, %d found in %.1f s", what, ended, count, time.monotonic() - started)
