"""Run an external tool in its own process group: lines streamed as they come, cancel and timeout end the group."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from rbln_artifact_studio.core.errors import NOTHING_CHANGED, CancelledError, InsufficientMemoryError, StudioError
from rbln_artifact_studio.core.progress import CancelToken

LineCallback = Callable[[str], None]

POLL_SECONDS = 0.05
TAIL_LINES = 200
MAX_LINE = 4000
ERROR_MARK = "❌"
_ERROR_PREFIXES = ("Error during model compilation:", "Error:")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_LINE_END = re.compile(rb"\r\n|\n|\r")


class ProcessTimeout(StudioError):
    """The tool did not finish within its time limit; its process group was ended."""


@dataclass
class Finished:
    """How a run ended: exit status and the last lines of each stream."""

    returncode: int
    tail: list[str] = field(default_factory=list)
    stderr_tail: list[str] = field(default_factory=list)

    def error_text(self) -> str | None:
        """The tool's own error message: its last `❌ Error: …` line, else the last line it wrote to stderr."""
        for line in reversed(self.tail):
            if ERROR_MARK in line:
                text = line.split(ERROR_MARK, 1)[1].strip()
                for prefix in _ERROR_PREFIXES:
                    if text.startswith(prefix):
                        return text[len(prefix) :].strip() or text
                return text
        return next((line for line in reversed(self.stderr_tail) if line.strip()), None)

    def describe_exit(self, what: str) -> str:
        if self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = str(-self.returncode)
            return f"{what} was killed by {name}"
        return f"{what} exited with status {self.returncode}"


def failure(finished: Finished, what: str, consequence: str, unchanged: bool = False) -> StudioError:
    """The error to raise for a non-zero exit: the tool's own message first, then what happened to the files
    (unchanged: nothing was, said in the one closing every refusal uses)."""
    text = finished.error_text()
    closing = f" {NOTHING_CHANGED}" if unchanged else ""
    hint = f"({finished.describe_exit(what)}; {consequence}).{closing}"
    if text is None:
        return StudioError(
            f"{finished.describe_exit(what)} without an error message.", hint=f"({consequence}).{closing}"
        )
    cls = InsufficientMemoryError if text.startswith("Insufficient memory") else StudioError
    return cls(text, hint=hint)


def clean_line(raw: bytes) -> str:
    text = _ANSI.sub("", raw.decode("utf-8", errors="replace")).rstrip()
    return text if len(text) <= MAX_LINE else text[:MAX_LINE] + " …"


def _split_lines(stream: IO[bytes]) -> Iterator[bytes]:
    """Lines ended by \\n, \\r\\n or a bare \\r (progress bars redraw with \\r), as they arrive."""
    fd = stream.fileno()
    pending = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        pending += chunk
        parts = _LINE_END.split(pending)
        pending = parts.pop()
        yield from parts
    if pending:
        yield pending


def _pump(stream: IO[bytes], name: str, out: queue.Queue[tuple[str, str | None]]) -> None:
    try:
        for raw in _split_lines(stream):
            line = clean_line(raw)
            if line.strip():
                out.put((name, line))
    except OSError:
        pass
    finally:
        out.put((name, None))


def _group_has_live_member(pgid: int) -> bool:
    """True while any process of the group runs; zombies (dead, not yet reaped) do not count."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    with os.scandir(proc) as entries:
        pids = [entry.name for entry in entries if entry.name.isdigit()]
    for pid in pids:
        try:
            stat = (proc / pid / "stat").read_text()
        except OSError:
            continue
        # After "(comm)": state, ppid, pgrp, ...
        after_name = stat.rpartition(")")[2].split()
        if len(after_name) > 2 and after_name[2] == str(pgid) and after_name[0] != "Z":
            return True
    return False


def _wait_group_gone(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        proc.poll()  # reap the leader so it does not linger as a zombie
        if not _group_has_live_member(proc.pid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def end_process_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM to the whole group, then SIGKILL to whatever is left after `grace` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        if _wait_group_gone(proc, grace):
            break
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)


@contextlib.contextmanager
def _sigint_deferred(note: Callable[[], None]) -> Iterator[None]:
    """While a tool edits files in place, Ctrl-C only says why it cannot stop it (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda *_: note())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_streamed(
    argv: list[str],
    *,
    on_line: LineCallback | None = None,
    cancel: CancelToken | None = None,
    timeout: float | None = None,
    grace: float = 5.0,
    drain: float = 2.0,
    interruptible: bool = True,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    what: str | None = None,
) -> Finished:
    """Run argv; every output line goes to on_line from the calling thread.

    Cancel (or Ctrl-C, or the timeout) ends the whole process group: SIGTERM, then SIGKILL after `grace`.
    Children still holding the output pipes `drain` seconds after the tool exits are ended the same way.
    With interruptible=False the run is never cut short: cancel and Ctrl-C only log why.
    """
    what = what or Path(argv[0]).name
    if cancel is not None and interruptible:
        cancel.raise_if_cancelled()  # cancelled before it started: start nothing
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own session and process group: cancel reaches every child
            env=env,
            cwd=cwd,
        )
    except OSError as exc:
        raise StudioError(f"Cannot run {argv[0]}: {exc.strerror or exc}.") from None
    lines: queue.Queue[tuple[str, str | None]] = queue.Queue()
    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        threading.Thread(target=_pump, args=(proc.stdout, "stdout", lines), daemon=True),
        threading.Thread(target=_pump, args=(proc.stderr, "stderr", lines), daemon=True),
    ]
    for reader in readers:
        reader.start()
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    stderr_tail: deque[str] = deque(maxlen=TAIL_LINES)
    notes: list[str] = []

    def note_uninterruptible() -> None:
        notes.append(
            f"{what} is rewriting files in place; stopping it now could leave them half-written, so it runs to the end."
        )

    deadline = None if timeout is None else time.monotonic() + timeout
    open_streams, exited_at, told = len(readers), None, False
    guard = contextlib.nullcontext() if interruptible else _sigint_deferred(note_uninterruptible)
    try:
        with guard:
            while open_streams or proc.poll() is None:  # a tool may close its pipes and go on
                try:
                    stream, line = lines.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    stream, line = "", ""
                if line is None:
                    open_streams -= 1
                elif line:
                    tail.append(line)
                    if stream == "stderr":
                        stderr_tail.append(line)
                    if on_line is not None:
                        on_line(line)
                if cancel is not None and cancel.cancelled:
                    if interruptible:
                        raise CancelledError(f"Cancelled; {what} was stopped.")
                    if not told:
                        note_uninterruptible()
                        told = True
                while notes and on_line is not None:
                    on_line(notes.pop(0))
                if deadline is not None and time.monotonic() > deadline:
                    raise ProcessTimeout(f"{what} did not finish within {timeout:g} s and was stopped.")
                if exited_at is None and proc.poll() is not None:
                    exited_at = time.monotonic()
                if exited_at is not None and open_streams and time.monotonic() - exited_at > drain:
                    end_process_group(proc, grace)  # leftover children kept the pipes open
                    exited_at = float("inf")
            proc.wait()
    except BaseException:
        end_process_group(proc, grace)
        raise
    finally:
        for reader in readers:
            reader.join(timeout=grace)
        proc.stdout.close()
        proc.stderr.close()
    return Finished(proc.returncode, list(tail), list(stderr_tail))
