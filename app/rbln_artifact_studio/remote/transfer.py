"""Copy an artifact's files between a folder here and a folder on a server, over its shared SSH connection.

Sending writes into a hidden staging folder beside the server's output that is renamed into place only when every
file is on its disk (on_server/transfer.py); a copy that is stopped, cancelled or killed leaves nothing a scan
takes for an artifact. Fetching reads the server's folder under its lock. Both report bytes and stop on cancel.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from rbln_artifact_studio.core.errors import CancelledError, StudioError
from rbln_artifact_studio.core.location import Location, ServerFolder
from rbln_artifact_studio.core.operations.resize_request import ResizeResult
from rbln_artifact_studio.core.progress import Progress
from rbln_artifact_studio.core.storage import faults
from rbln_artifact_studio.core.storage.fsutil import CLAIM_TAG, INCOMPLETE_MARKER, PARTIAL_TAG, is_internal_name
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME
from rbln_artifact_studio.remote.records import AnswerError, RecordReader
from rbln_artifact_studio.remote.server import ANSWER_LIMIT, BOOT, Server, assembled_program
from rbln_artifact_studio.remote.server_said import server_said
from rbln_artifact_studio.remote.transport import kill_local, remote_group, timed_out, without_mark

PROGRAM = "transfer"
RULES = json.dumps({"config": CONFIG_NAME, "marker": INCOMPLETE_MARKER, "partial": PARTIAL_TAG, "claim": CLAIM_TAG})
IDLE = 120.0  # seconds the server waits for the next bytes before it drops the copy (our process was killed)
CHUNK = 4 << 20
STOP_WAIT = 10.0  # seconds a stopped copy gets to remove its staging folder before it is killed there
POLL = 0.05


@dataclass(frozen=True)
class ServerCopyResult(ResizeResult):
    """A resized copy written into a folder on a server; `path` is there."""

    host: str = ""

    @property
    def where(self) -> Location:
        return ServerFolder(self.host, self.path.as_posix())

    @classmethod
    def on(cls, folder: ServerFolder, previous: int, target: int, warnings: list[str], size: int) -> ServerCopyResult:
        return cls(Path(folder.path), previous, target, warnings, size, host=folder.host)


def _refused(record: dict[str, Any], where: ServerFolder) -> StudioError:
    """The server's refusal in words, with its paths as URLs."""
    path = where.at(str(record.get("path") or where.path))
    why = record["refused"]
    if why == "exists":
        return StudioError(f"The output folder {path} exists and is not empty; choose a new folder", unchanged=True)
    if why == "busy":
        holder = record.get("holder") or "another copy"
        return StudioError(
            f"{path} is being written by {holder}. Try again when it is done, or choose another folder", unchanged=True
        )
    if why == "appeared":
        return StudioError(f"{path} appeared while the copy ran; the copy was not put there", unchanged=True)
    if why == "not_folder":
        return StudioError(f"{path} exists and is not a folder; choose a new output folder", unchanged=True)
    if why == "inside":
        return StudioError(
            f"The output folder {where} lies inside the artifact {path}; a copy there would be hidden from scans. "
            "Choose a folder outside every artifact",
            unchanged=True,
        )
    if why == "denied":
        return StudioError(f"Cannot write into {path}: permission denied. Choose a folder you can write to.")
    if why == "missing":
        return StudioError(f"{path} is not a folder", unchanged=True)
    if why == "no_artifact":
        return StudioError(
            f"{path} holds no rbln_config.json (nor a pipeline's model_index.json): it is not an artifact folder. "
            "Name the artifact's own folder",
            unchanged=True,
        )
    if why == "locked":
        return StudioError(f"{path} is being changed by {record.get('holder')}. Try again later", unchanged=True)
    return StudioError(f"{where.host} refused the copy ({why}) at {path}.")


def check_output(server: Server, output: ServerFolder, progress: Progress | None = None) -> None:
    """Refuse, before any byte moves, an output folder on the server that cannot take a new artifact (or a server
    that cannot be reached: StudioError says why)."""
    cancel = progress.cancel if progress is not None else None
    for record in server.stream(PROGRAM, ["check", output.path, RULES], cancel):
        if "refused" in record:
            raise _refused(record, output)


def fetch_folder(server: Server, source: ServerFolder, into: Path, progress: Progress) -> int:
    """Every file of the server's folder (hidden names skipped) into the empty local folder `into`; bytes fetched.
    Reads under the folder's lock there, so no resize on the server changes it meanwhile; a cancel gives it back."""
    out: BinaryIO | None = None
    done = 0
    session = _Session(server, ["send", source.path, RULES], source, f"from {source}")
    try:
        for record in session.records(progress):
            if "files" in record:
                total = sum(int(size) for _, size in record["files"])
                progress.start(total, f"Fetching {source.name} from {source.host}")
            elif "file" in record:
                if out is not None:
                    out.close()
                path = into.joinpath(*str(record["file"]).split("/"))
                if not path.resolve().is_relative_to(into.resolve()):
                    raise StudioError(f"{source.host} sent a file name outside {source}: {record['file']!r}.")
                path.parent.mkdir(parents=True, exist_ok=True)
                out = open(path, "xb")  # noqa: SIM115 (one file open at a time, across records)
            elif "blob_data" in record:
                assert out is not None
                out.write(record["blob_data"])
                done += len(record["blob_data"])
                progress.advance(len(record["blob_data"]))
            elif record.get("end"):
                faults.checkpoint("transfer.fetched")
                return done
    except CancelledError:
        raise CancelledError("Cancelled", unchanged=True) from None
    finally:
        if out is not None:
            out.close()
        session.stop()
    raise StudioError(f"The copy from {source} ended before its last file", unchanged=True)


def _files(folder: Path) -> list[tuple[str, Path]]:
    """(name, path) of every file to send, rbln_config.json of each folder after its other files."""
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not is_internal_name(d))
        for name in filenames:
            if not is_internal_name(name):
                path = Path(dirpath, name)
                found.append((path.relative_to(folder).as_posix(), path))
    return sorted(found, key=lambda f: (f[0].rsplit("/", 1)[-1] == CONFIG_NAME, f[0].count("/") == 0, f[0]))


def _pieces(files: list[tuple[str, Path]]) -> Iterator[tuple[bytes, int]]:
    """The stream the server's receive reads: (bytes, how many of them are file payload)."""
    for i, (name, path) in enumerate(files):
        if i:
            faults.checkpoint(f"transfer.sent.{i - 1}")  # every byte of the file before handed to ssh
        size = path.stat().st_size
        yield json.dumps({"file": name, "size": size}).encode() + b"\n", 0
        with open(path, "rb") as f:
            left = size
            while left:
                chunk = f.read(min(CHUNK, left))
                if not chunk:
                    raise StudioError(f"{path} shrank while it was sent", unchanged=True)
                left -= len(chunk)
                yield chunk, len(chunk)
    yield b'{"end": true}\n', 0


class _Session:
    """One run of the transfer program on the server without the prelude (its stdin is ours: the files, or only its
    end when we leave): the ssh process, its answer and its error output."""

    def __init__(self, server: Server, args: list[str], where: ServerFolder, what: str) -> None:
        self.server, self.where, self.what = server, where, what
        self.limit = server.transport.limit(ANSWER_LIMIT)
        code = assembled_program(PROGRAM).encode()
        self.proc = server.transport.start([server.python, "-c", BOOT, str(len(code)), *args])
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self.stdin = self.proc.stdin.fileno()
        os.set_blocking(self.stdin, False)
        self.errors: list[bytes] = []
        self.err_thread = threading.Thread(target=lambda: self.errors.extend(self.proc.stderr or ()), daemon=True)
        self.err_thread.start()
        self.answer = RecordReader(self.proc.stdout.fileno())
        self.pending = memoryview(code)

    def record(self, timeout: float) -> dict[str, Any] | None:
        """The next record within timeout, or None; a refusal raised in words."""
        try:
            record = self.answer.next(timeout)
        except AnswerError as exc:
            raise StudioError(f"{self.server.host} answered something the studio cannot read ({exc}).") from None
        if record is not None and "refused" in record:
            raise _refused(record, self.where)
        return record

    def failed(self) -> StudioError:
        """Why the program ended without its answer."""
        self.proc.wait()
        self.err_thread.join(5)
        stderr = without_mark(b"".join(self.errors).decode("utf-8", "replace"))
        if self.server.transport.failed(self.proc.returncode):
            self.server.transport.raise_for_failure(stderr)
        tail = server_said(stderr, f"status {self.proc.returncode}")  # a traceback in words, never its fragments
        return StudioError(f"The copy {self.what} failed on {self.server.host}: {tail}", unchanged=True)

    def records(self, progress: Progress) -> Iterator[dict[str, Any]]:
        """Each record as it arrives (what is pending, the code first, written meanwhile); a cancel, an answer that
        ends early, or a server silent for the answer limit raise."""
        heard = time.monotonic()
        while True:
            progress.check()
            if self.pending:
                self.write()
            record = self.record(POLL)
            if record is not None:
                heard = time.monotonic()
                if "alive" not in record:
                    yield record
            elif self.answer.ended:
                raise self.failed()
            elif time.monotonic() - heard > self.limit:
                raise timed_out(self.server.host, self.limit)

    def write(self) -> int:
        """Write what the pipe takes now of the pending bytes; how many."""
        try:
            written = os.write(self.stdin, self.pending)
        except BlockingIOError:
            return 0
        except BrokenPipeError:
            while not self.answer.ended:  # a refusal or an error line explains it
                self.record(POLL)
            raise self.failed() from None
        self.pending = self.pending[written:]
        return written

    def send(self, files: list[tuple[str, Path]], progress: Progress) -> None:
        """The files as receive reads them, each chunk as the pipe takes it; nothing is said back meanwhile."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.stdin, selectors.EVENT_WRITE)
            moved = time.monotonic()
            for data, payload in _pieces(files):
                self.pending = memoryview(data)
                while self.pending:
                    progress.check()
                    if selector.select(POLL):
                        if self.write():
                            moved = time.monotonic()
                    elif time.monotonic() - moved > self.limit:
                        raise timed_out(self.server.host, self.limit)
                    if self.record(0) is None and self.answer.ended:
                        raise self.failed()
                if payload:
                    progress.advance(payload)

    def stop(self) -> None:
        """End the program: stdin closed (it cleans up and exits), else killed there after STOP_WAIT."""
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            self.server.transport.stop_remote(remote_group(b"".join(self.errors[:20]).decode("utf-8", "replace")))
        kill_local(self.proc)
        self.err_thread.join(5)


def send_folder(server: Server, folder: Path, output: ServerFolder, progress: Progress, idle: float = IDLE) -> int:
    """Every file of the local folder (the studio's own names skipped) into a new folder on the server, published
    there by one rename when all of it is on its disk; bytes sent. On any failure or cancel nothing is left there."""
    files = _files(folder)
    total = sum(path.stat().st_size for _, path in files)
    session = _Session(server, ["receive", output.path, RULES, str(idle)], output, f"to {output}")
    try:
        next(r for r in session.records(progress) if "ready" in r)
        progress.start(total, f"Sending {folder.name} to {output.host}")
        session.send(files, progress)
        next(r for r in session.records(progress) if "done" in r)
    except CancelledError:
        raise CancelledError(f"Cancelled before {output} was written", unchanged=True) from None
    finally:
        session.stop()
    return total
