"""A server over a transport (SSH): run the studio's small programs in its python3, stream their JSON lines back."""

from __future__ import annotations

import ast
import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Generator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.errors import CancelledError, StudioError
from rbln_artifact_studio.core.logs import logger
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.remote.records import AnswerError, RecordReader
from rbln_artifact_studio.remote.server_said import server_said
from rbln_artifact_studio.remote.transport import (
    RemoteResult,
    Transport,
    kill_local,
    remote_group,
    run_to_end,
    timed_out,
    without_mark,
)

PROGRAMS = Path(__file__).resolve().parent / "on_server"
PORTABLE = "rbln_artifact_studio.core.portable"  # standard-library-only modules a program may import: sent with it
PORTABLE_DIR = Path(__file__).resolve().parents[1] / "core" / "portable"
MIN_PYTHON = (3, 6)
PYTHON_TOO_OLD = 86  # the boot code's exit status for an interpreter older than MIN_PYTHON
NOT_FOUND = 127  # sh: command not found
POLL = 0.05
ENV_REMOTE_PYTHON = "RBLN_STUDIO_REMOTE_PYTHON"  # the servers' Python, when python3 on their PATH is not it
STDERR_KEPT = 40  # lines of the server's error output kept for a failure message
ANSWER_LIMIT = 60.0  # seconds a program may stay silent before the server counts as not answering
# Seconds a whole program may take, however it trickles its answer (signs of life, one row at a time): a call
# ends by then, what it started on the server stopped. A command with a --timeout passes that instead.
OPERATION_LIMIT = 600.0
log = logger(__name__)

# Run by `python3 -c`: checks the version (in syntax Python 2 still parses), then reads the program itself
# from stdin, so the command line stays short and the program is never pasted into a shell.
BOOT = (
    "import sys\n"
    f"if sys.version_info < {MIN_PYTHON!r}:\n"
    "    sys.stderr.write('rbln-studio: python %s is too old\\n' % sys.version.split()[0])\n"
    f"    sys.exit({PYTHON_TOO_OLD})\n"
    "code = sys.stdin.buffer.read(int(sys.argv[1]))\n"
    "sys.argv = ['rbln-studio'] + sys.argv[2:]\n"
    "exec(compile(code, '<rbln-studio>', 'exec'), {'__name__': '__main__'})\n"
)


_BODIES = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})  # where a statement holds statements


def _portable_imports(source: str) -> list[str]:
    """The portable modules a source imports (absolute imports of PORTABLE's modules), in the order it names them."""
    names: list[str] = []
    if PORTABLE not in source:
        return names  # no parse: it names no portable module
    # Statements only, in the order ast.walk meets them (an import is a statement, inside a def, an if or a try
    # at most): walking every expression too cost a program ~10 ms before its ssh could start.
    statements = deque(ast.parse(source).body)
    while statements:
        node = statements.popleft()
        statements.extend(child for field in node._fields if field in _BODIES for child in getattr(node, field))
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            if node.module == PORTABLE:  # from ...portable import walk: the module walk
                names += [f"{PORTABLE}.{alias.name}" for alias in node.names]
    found = [name for name in names if name.startswith(PORTABLE + ".")]
    return sorted(set(found), key=found.index)


def bundled_modules(source: str) -> dict[str, str]:
    """{module name: source} of every portable module the program's source needs, with the ones they need and
    the packages above them (empty, but PORTABLE's own); {} for a program that needs none."""
    modules: dict[str, str] = {}
    pending = _portable_imports(source)
    while pending:
        name = pending.pop(0)
        if name not in modules:
            modules[name] = (PORTABLE_DIR / f"{name[len(PORTABLE) + 1 :]}.py").read_text(encoding="utf-8")
            pending += _portable_imports(modules[name])
    if not modules:
        return {}
    packages = {"rbln_artifact_studio": "", "rbln_artifact_studio.core": ""}
    return {**packages, PORTABLE: (PORTABLE_DIR / "__init__.py").read_text(encoding="utf-8"), **modules}


def assemble(main: str) -> str:
    """A program's source with the portable modules it imports sent along ahead of it (on_server/bundle.py serves
    them), so a bare python3 runs it; the source as it is when it imports none."""
    modules = bundled_modules(main)
    if not modules:
        return main
    return f"{(PROGRAMS / 'bundle.py').read_text(encoding='utf-8')}\nserve({modules!r})\n\n{main}"


@cache
def assembled_program(name: str) -> str:
    """A program of on_server/ as a server runs it, assembled; without the prelude (a detached job's runner must
    outlive the connection)."""
    return assemble((PROGRAMS / f"{name}.py").read_text(encoding="utf-8"))


@cache
def program_source(name: str) -> bytes:
    """A program from on_server/, assembled, behind the prelude that ends it when the client goes away."""
    return f"{(PROGRAMS / 'prelude.py').read_text(encoding='utf-8')}\n{assembled_program(name)}".encode()


def _end(proc: subprocess.Popen[bytes], readers: Sequence[threading.Thread]) -> None:
    """Close our side (the server's program sees stdin end and exits), then stop the local end (ssh)."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    if proc.poll() is None:  # the local ssh has nothing to tidy: the server's side ends on its closed stdin
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for reader in readers:
        reader.join(5)  # the pipes reach end of file once the command on the server is gone
    kill_local(proc)


class Server:
    """One NPU server: the transport that reaches it (an SshConnection, say) and the python3 the studio's programs
    run in."""

    def __init__(self, transport: Transport, python: str = "python3") -> None:
        self.transport = transport
        self.python = python

    @property
    def host(self) -> str:
        return self.transport.host

    def stream(
        self,
        program: str,
        args: Sequence[str],
        cancel: CancelToken | None = None,
        limit: float = ANSWER_LIMIT,
        total: float | None = OPERATION_LIMIT,
    ) -> Generator[dict[str, Any], None, None]:
        """Run on_server/<program>.py there and yield each JSON line it writes, as it arrives.

        Cancel (or closing the generator) closes the program's stdin and stops the local end: the program on the
        server ends at once. Raises StudioError when python3 is missing or too old, or the program failed, and
        when no line arrives for `limit` seconds (the options' answer_timeout replaces it) or the whole call
        takes more than `total` seconds (None: a call that lasts as long as what it follows, a job's log): then
        what the call started on the server is stopped, whether it reads its stdin or not. The time the caller
        spends on each line counts too: `total` is the call's, from its start to its end.
        """
        limit = self.transport.limit(limit)
        deadline = None if total is None else time.monotonic() + total
        code = program_source(program)
        log.debug("%s: running %s", self.host, program)
        started, records = time.monotonic(), 0
        proc = self.transport.start([self.python, "-c", BOOT, str(len(code)), *args])
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        errors: list[bytes] = []
        err_thread = threading.Thread(target=lambda: errors.extend(proc.stderr or ()), daemon=True)
        err_thread.start()
        answer = RecordReader(proc.stdout.fileno())
        answered = False
        heard = time.monotonic()

        def stop_there() -> None:
            self.transport.stop_remote(remote_group(b"".join(errors[:20]).decode("utf-8", "replace")))

        try:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write(code)
                proc.stdin.flush()
            while True:
                if cancel is not None and cancel.cancelled:
                    stop_there()
                    raise CancelledError(f"Cancelled; the work on {self.host} was stopped.")
                if time.monotonic() - heard > limit:
                    stop_there()
                    raise timed_out(self.host, limit)
                if deadline is not None and time.monotonic() > deadline:
                    assert total is not None
                    stop_there()  # a server that trickles its answer never falls silent: the call's own limit
                    raise timed_out(self.host, total, what="finish")
                try:
                    record = answer.next(POLL)
                except AnswerError as exc:
                    raise StudioError(
                        f"{self.host} answered something the studio cannot read ({exc}).",
                        hint="Something on the server printed text into the answer: make its shell startup files "
                        "(~/.bashrc, ~/.profile) print only in interactive shells.",
                    ) from None
                if record is not None:
                    answered = True
                    heard = time.monotonic()
                    if "alive" not in record:  # a long step's sign of life, nothing to show
                        records += 1
                        yield record
                elif answer.ended:
                    break
            proc.wait()
            err_thread.join(5)
            stderr = without_mark(b"".join(errors[-STDERR_KEPT:]).decode("utf-8", "replace"))
            if answered and self.transport.failed(proc.returncode):
                raise StudioError(
                    f"The connection to {self.host} was lost before the answer was complete "
                    f"({stderr.strip() or 'no reason given'}); what arrived is shown, the rest is missing.",
                    hint="Reconnect to try again.",
                )
            self._check_status(proc.returncode, stderr)
            log.debug("%s: %s answered %d records in %.2f s", self.host, program, records, time.monotonic() - started)
        except CancelledError:
            log.info("%s: %s cancelled", self.host, program)
            raise
        except StudioError as exc:
            log.warning("%s: %s failed: %s", self.host, program, exc.one_line())
            raise
        finally:
            _end(proc, (err_thread,))

    def _check_status(self, status: int, stderr: str) -> None:
        if status == 0:
            return
        if self.transport.failed(status):
            self.transport.raise_for_failure(stderr)
        if status == NOT_FOUND:
            said = " ".join(stderr.strip().splitlines()[-1:])
            raise StudioError(
                f"{self.host} has no {self.python} on its PATH{': ' + said if said else '.'}",
                hint=f"The studio runs its read-only helpers with the server's Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} "
                f"or newer (nothing is installed there): install python3 on the server, or name the one to use with "
                f"{ENV_REMOTE_PYTHON}=PATH before starting the studio or the CLI.",
            )
        if status == PYTHON_TOO_OLD:
            raise StudioError(
                f"{self.host}'s {self.python} is too old: {stderr.strip()}.",
                hint=f"The studio's helpers need Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer on the server; "
                f"name a newer one with {ENV_REMOTE_PYTHON}=PATH before starting the studio or the CLI.",
            )
        if not stderr.strip():  # a wrapper or a broken install that exits without a word: say where to look
            raise StudioError(
                f"The studio's helper failed on {self.host} (status {status}) and {self.python} there printed no "
                "reason.",
                hint=f"Check that `ssh {self.host} {self.python} -c 'print(1)'` prints 1 in a terminal (a wrapper "
                f"script, a broken install or a shell startup file that exits can cause this), or name a working "
                f"Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]}+ there with {ENV_REMOTE_PYTHON}=PATH.",
            )
        said = server_said(stderr, f"status {status}")  # a traceback in words, never its fragments
        raise StudioError(f"The studio's helper failed on {self.host} (status {status}): {said}")

    def run(
        self, argv: Sequence[str], input: bytes = b"", timeout: float | None = None, cancel: CancelToken | None = None
    ) -> RemoteResult:
        """A command run there to its end (a shell script, a tool), within timeout; see transport.run_to_end."""
        log.debug("%s: running %s", self.host, argv[0] if argv else "nothing")
        try:
            result = run_to_end(self.transport, argv, input, timeout, cancel)
        except StudioError as exc:
            log.warning("%s: %s failed: %s", self.host, argv[0] if argv else "nothing", exc.one_line())
            raise
        log.debug("%s: %s ended with status %d", self.host, argv[0] if argv else "nothing", result.returncode)
        return result

    def run_program(
        self, program: str, args: Sequence[str], cancel: CancelToken | None = None, total: float = OPERATION_LIMIT
    ) -> list[dict[str, Any]]:
        """Every JSON line of a program, once it has finished (within `total` seconds)."""
        return list(self.stream(program, args, cancel, total=total))
