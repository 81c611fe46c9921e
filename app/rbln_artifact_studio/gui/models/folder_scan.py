"""The desktop's one reader of rows (scan_folders), for every kind of place; a folder's runs in a process of its own.

scan_folders reads the parts of an opened location through its Kind (places/dispatch), fast rows first, then the
full check's verdicts, and sends what the table must do: rows to add or update, rows gone, folders to watch. A
folder here runs it in the scan process below; a place elsewhere (a server, a bucket) runs it in a job's worker
(place_scan.read_in_process), whose reads wait on the network, not on this interpreter.

The window's process parses no local artifact. Its scan job starts this module (`python -m ...gui.folder_scan`, or the
bundled program with SCAN_PROCESS_FLAG), writes a ScanRequest to its stdin and reads messages back from its stdout,
each a length-prefixed pickle: rows with their cell texts prepared (TableRow), folders to watch, progress, and how
the scan ended. The scan's Python runs on its own interpreter and core, so it never takes the window's interpreter
lock, and a reader that crashes ends this process, not the window. Qt-free: the child never loads Qt.
"""

from __future__ import annotations

import json
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from rbln_artifact_studio.core.errors import CancelledError, StudioError
from rbln_artifact_studio.core.fleet.scan_pool import idle_cpus
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.core.portable.walk import is_inside
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.gui.models.scan_messages import (
    Failed,
    Finished,
    Logged,
    Message,
    Progress,
    RowsFound,
    RowsRead,
    RowsRemoved,
    ScanRequest,
    Send,
)
from rbln_artifact_studio.gui.models.table_rows import TableRow
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.places.kind import Rescan, ScanOptions

if TYPE_CHECKING:  # the artifact reader (pydantic) loads with the backends, for the full check only
    from rbln_artifact_studio.core.fleet.artifact import GraphInspector

SCAN_PROCESS_FLAG = "--scan-process"  # the bundled rbln-studio runs this module's main() when given it first
BATCH_ROWS = 256
BATCH_SECONDS = 0.1
STOP_SECONDS = 5.0  # a cancelled scan process saves its cache and exits; killed if it takes longer
POLL_SECONDS = 0.05  # between two cancel checks while the parent waits for the scan process
# Rows that arrived while the window painted are handed over together, up to one batch: the table takes a batch per
# slot, and each row of the fast pass also adds a watched folder (QFileSystemWatcher's cost grows with the watches it
# holds), so a larger batch is a longer slot on the GUI thread.
MERGED_ROWS = BATCH_ROWS
END_GRACE = 1.0  # seconds the stream may stay open after the process died (a forked worker of it still holds it)
_HEADER = struct.Struct("<I")


def folders_to_watch(root: str, artifact: str) -> list[str]:
    """The artifact folder and every folder between it and the root (pure path arithmetic)."""
    out = [artifact]
    parent = os.path.dirname(artifact)
    while len(parent) >= len(root) and parent != out[-1]:
        out.append(parent)
        if parent == root:
            break
        parent = os.path.dirname(parent)
    return out


class _Batch:
    """Rows sent in batches of BATCH_ROWS or every BATCH_SECONDS, each with a progress message."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.rows: list[TableRow] = []
        self.watch: list[str] = []
        self.last = time.monotonic()
        self.count = 0

    def add(self, row: TableRow, watch: list[str], done: int, total: int, message: str) -> None:
        self.rows.append(row)
        self.watch += watch
        self.count += 1
        if len(self.rows) >= BATCH_ROWS or time.monotonic() - self.last >= BATCH_SECONDS:
            self.send(Progress(done, total, message))
            self.flush()

    def flush(self) -> None:
        if self.rows or self.watch:
            self.send(RowsFound(self.rows, self.watch))
        self.rows, self.watch, self.last = [], [], time.monotonic()


def scan_folders(request: ScanRequest, send: Send, cancel: CancelToken, processes: int = 1) -> int:
    """Read each folder through its Kind (places/dispatch), sending RowsRemoved and RowsFound as they are read, then
    the full check's verdicts: the one loop every opened location's rows come from, whatever its kind.

    Everything the window would otherwise work out per row is done here: the cell texts (TableRow) and, for a
    folder here, the folders to watch (each artifact and the folders above it, each sent once). processes: how
    many read the full checks.
    """
    root, folders = request.root, request.folders
    shown = parse_location(root)
    here = dispatch.capabilities(shown).on_this_computer  # its folders are watched; it can read only what changed
    if request.opening and here and not os.path.isdir(folders[0]):
        raise StudioError(f"{folders[0]} is not a folder; open a folder that holds compiled artifacts.")
    whole = request.whole or not here
    # A folder here is read through Rescan (its listing tells what is gone, and which folders to watch); read
    # whole, no row is taken as known, so every one is read again (the scan cache still spares unchanged files).
    rescan = None
    if here:
        known = frozenset() if whole else frozenset(request.known)
        rescan = Rescan(shown, known, lambda gone, watch: send(RowsRemoved(gone, watch)))
    fast = ScanOptions(
        on_issue=lambda _path, message: send(Logged(message)), cancel=cancel, verify=False, rescan=rescan
    )
    found = 0
    sent: set[str] = set()
    checking: list[ArtifactSummary] = []
    for folder in folders:
        cancel.raise_if_cancelled()
        batch = _Batch(send)
        seen: set[str] = set()
        for summary in dispatch.scan(parse_location(folder), fast):
            cancel.raise_if_cancelled()
            watch = []
            if here:
                # A row for an entry that failed (a link to itself) is watched through its folder: Qt cannot watch it.
                watched = summary.path if os.path.isdir(summary.path) else os.path.dirname(summary.path)
                for f in folders_to_watch(root, watched):
                    if f in sent:
                        break  # its parents were sent with it
                    sent.add(f)
                    watch.append(f)
            found += 1
            seen.add(summary.path)
            if summary.status is Status.CHECKING:
                checking.append(summary)
            batch.add(TableRow.of(summary), watch, found, 0, f"{found:,} artifacts read")
        batch.flush()
        if whole:  # rows shown under this folder that its read did not find are gone
            gone = [p for p in request.known if p not in seen and is_inside(p, folder)]
            if gone:
                send(RowsRemoved(gone, []))
    send(RowsRead(found))
    if not checking:
        return found  # nothing to check (rows from the cache, a folder emptied): pydantic and the backends never load

    # The full check (inspect's) of every row the fast pass could not settle; until then it says "checking".
    def choose() -> GraphInspector | None:
        # deferred: the backends (pydantic, ~300 ms) load only for a graph the real compiler wrote, in this process
        from rbln_artifact_studio.backends.registry import inspector_for

        return inspector_for(cancel=cancel)

    batch = _Batch(send)
    total = len(checking)
    # The backends load with the first graph of the real compiler, if any (the Kind defers choose until then).
    full = ScanOptions(cancel=cancel, processes=processes, inspector=choose)
    for i, verified in enumerate(dispatch.verify(shown, checking, full), 1):
        cancel.raise_if_cancelled()
        batch.add(TableRow.of(verified), [], i, total, f"Checked {i:,} of {total:,} artifacts")
    batch.flush()
    return found


def _frames_out(stream: IO[bytes]) -> Send:
    def send(message: Message) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        stream.write(_HEADER.pack(len(data)) + data)
        stream.flush()

    return send


def main() -> int:
    """The scan process: a ScanRequest (JSON) on stdin, messages on stdout; SIGTERM cancels (the cache is saved)."""
    # Frames go to a copy of stdout; anything else printed (a library's stray print) goes to stderr, so it can
    # never be taken for a frame.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    cancel = CancelToken()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: cancel.cancel())
    send = _frames_out(out)
    try:
        request = ScanRequest(**json.loads(sys.stdin.buffer.read()))
        try:
            # The window's process runs almost no Python during a scan: this process may use every idle core.
            send(Finished(scan_folders(request, send, cancel, processes=idle_cpus())))
        except CancelledError:
            return 0
        except StudioError as exc:
            send(Failed(exc.message, exc.hint))
        return 0
    except BrokenPipeError:  # the window went away
        return 0


def command() -> list[str]:
    """How to start the scan process: the bundled program with its flag, or this interpreter with this module."""
    if getattr(sys, "frozen", False):
        return [sys.executable, SCAN_PROCESS_FLAG]
    return [sys.executable, "-m", __name__]


def _environment() -> dict[str, str]:
    """This process's environment, with the folder this package was imported from first on the child's path (a
    bucket's store travels in its location, never in the environment)."""
    env = dict(os.environ)
    source_root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source_root, env.get("PYTHONPATH", "")) if p)
    return env


class ScanProcess:
    """The window's side: starts the scan process and reads its messages in a thread of their own, so the process
    never waits for the window (the pipe is drained as fast as it fills) while the window takes them at its pace."""

    def __init__(self, request: ScanRequest) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115  # lives as long as the process; close() ends it
        self.process = subprocess.Popen(
            command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=_environment(),
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdout = self.process.stdout
        self._queue: queue.SimpleQueue[Message | None] = queue.SimpleQueue()
        self._held: Message | None = None
        self.broken = ""  # why the stream could not be read, if it could not
        self._reader = threading.Thread(target=self._read, name="scan-process-reader", daemon=True)
        self._reader.start()
        try:
            self.process.stdin.write(json.dumps(request._asdict()).encode())
            self.process.stdin.close()
        except BrokenPipeError:
            pass  # it ended before reading: its exit status and stderr say why

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read(self) -> None:
        """Reader thread: frames until the end of the stream (None marks it); blocked in read() the rest of the time,
        holding no interpreter lock."""
        try:
            while header := self._stdout.read(_HEADER.size):
                if len(header) < _HEADER.size:
                    break
                (size,) = _HEADER.unpack(header)
                data = self._stdout.read(size)
                if len(data) < size:
                    break
                self._queue.put(pickle.loads(data))
        except Exception as exc:  # a broken stream: the exit status tells the rest
            self.broken = f"{type(exc).__name__}: {exc}"
            self.process.kill()  # nobody reads its output any more: it would wait on a full pipe forever
        finally:
            self._queue.put(None)

    def next(self, cancel: CancelToken, timeout: float | None = None) -> Message | None:
        """The next message; None at the end of the stream. Raises CancelledError (the process stopped) on cancel,
        TimeoutError when timeout passes first."""
        if self._held is not None:
            message, self._held = self._held, None
            return message
        deadline = None if timeout is None else time.monotonic() + timeout
        died_at: float | None = None
        while True:
            if cancel.cancelled:
                self.stop()
                cancel.raise_if_cancelled()
            wait = POLL_SECONDS if deadline is None else min(POLL_SECONDS, deadline - time.monotonic())
            try:
                return self._queue.get(timeout=max(wait, 0.0))
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError from None
                if self.process.poll() is not None:
                    died_at = died_at or time.monotonic()
                    if time.monotonic() - died_at > END_GRACE:
                        return None

    def _merged(self, first: RowsFound) -> RowsFound:
        """first and the RowsFound already read behind it, as one (up to MERGED_ROWS rows); the next other kind of
        message is held for next()."""
        rows, watch = list(first.rows), list(first.watch)
        while len(rows) < MERGED_ROWS:
            try:
                message = self._queue.get_nowait()
            except queue.Empty:
                break
            if not isinstance(message, RowsFound):
                self._held = message
                if message is None:
                    self._queue.put(None)  # the end stays visible to next()
                    self._held = None
                break
            rows += message.rows
            watch += message.watch
        return RowsFound(rows, watch) if len(rows) > len(first.rows) else first

    def messages(self, cancel: CancelToken) -> Iterator[Message]:
        """Every message up to Finished (rows that arrived together merged); raises StudioError when the scan failed
        or its process died."""
        while (message := self.next(cancel)) is not None:
            if isinstance(message, Failed):
                self.close()
                raise StudioError(message.message, hint=message.hint)
            if isinstance(message, RowsFound):
                message = self._merged(message)
            yield message
            if isinstance(message, Finished):
                self.close()
                return
        raise self._died()

    def _died(self) -> StudioError:
        code = self.process.wait()
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        self.close()
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        detail = "\n".join([*lines[-20:], *([self.broken] if self.broken else [])])
        return StudioError(
            f"The scan stopped: its reader process {how} before it finished; the window is unaffected.",
            hint=f"Press Refresh (F5) to scan again.{' Its last output:' + chr(10) + detail if detail else ''}",
        )

    def stop(self) -> None:
        """Cancel: SIGTERM (the process saves its scan cache and exits), SIGKILL if it takes longer."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.close()

    def close(self) -> None:
        self.process.wait()
        self._reader.join(END_GRACE)
        if not self._reader.is_alive():  # else a forked worker of the dead process still holds the stream
            self._stdout.close()
        self._stderr.close()


if __name__ == "__main__":
    # Run as the package's module, not as __main__: the messages are pickled under their importable names.
    from rbln_artifact_studio.gui.models.folder_scan import main as scan_process

    sys.exit(scan_process())
