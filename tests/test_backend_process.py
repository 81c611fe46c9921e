"""The process runner under the real backend: streamed lines, error lines, timeouts and whole-group termination."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from fakes.helpers import running, wait_for

from rbln_artifact_studio.backends.process import Finished, ProcessTimeout, failure, run_streamed
from rbln_artifact_studio.core.errors import CancelledError, InsufficientMemoryError, StudioError
from rbln_artifact_studio.core.progress import CancelToken


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_lines_arrive_in_order_with_progress_redraws_split_and_colours_removed() -> None:
    code = (
        "import sys\n"
        "print('\\x1b[92mfirst\\x1b[0m', flush=True)\n"
        "sys.stdout.write('bar 10%\\rbar 50%\\rbar 100%\\n'); sys.stdout.flush()\n"
        "print('on stderr', file=sys.stderr, flush=True)\n"
        "print('last')\n"
    )
    seen: list[str] = []
    finished = run_streamed(_python(code), on_line=seen.append)
    assert finished.returncode == 0
    assert [line for line in seen if line != "on stderr"] == ["first", "bar 10%", "bar 50%", "bar 100%", "last"]
    assert finished.stderr_tail == ["on stderr"]


def test_lines_are_delivered_while_the_tool_still_runs(tmp_path: Path) -> None:
    # The tool waits for a file that the line callback creates: without streaming this would time out.
    gate = tmp_path / "gate"
    code = (
        "import os, time\n"
        "print('ready', flush=True)\n"
        f"deadline = time.monotonic() + 20\n"
        f"while not os.path.exists({str(gate)!r}):\n"
        "    assert time.monotonic() < deadline, 'never released'\n"
        "    time.sleep(0.01)\n"
        "print('released')\n"
    )

    def on_line(line: str) -> None:
        if line == "ready":
            gate.touch()

    finished = run_streamed(_python(code), on_line=on_line)
    assert finished.returncode == 0 and finished.tail == ["ready", "released"]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["Compiling prefill", "❌ Error during model compilation: boom at layer 3"], "boom at layer 3"),
        (["❌ Error: Insufficient memory for the required KV cache: only 3 blocks"], "Insufficient memory"),
        (["Traceback (most recent call last):", "ModuleNotFoundError: No module named 'rebel'"], "ModuleNotFoundError"),
    ],
)
def test_error_text_is_the_tools_own_message(lines: list[str], expected: str) -> None:
    finished = Finished(1, lines, lines)
    text = finished.error_text()
    assert text is not None and text.startswith(expected)
    error = failure(finished, "optimum-rbln-cli", "nothing was written")
    assert error.message == text
    assert "exited with status 1; nothing was written" in (error.hint or "")
    assert isinstance(error, InsufficientMemoryError) == expected.startswith("Insufficient")


def test_a_missing_program_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StudioError, match="Cannot run"):
        run_streamed([str(tmp_path / "no-such-tool")])


def _group_script(pidfile: Path, ignore_term: bool) -> list[str]:
    """A leader that starts a worker in its group, writes both pids, then waits forever."""
    handler = "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else ""
    worker = f"import signal, time\n{handler}time.sleep(600)\n"
    code = (
        "import os, signal, subprocess, sys, time\n"
        f"{handler}"
        f"w = subprocess.Popen([sys.executable, '-c', {worker!r}])\n"
        f"open({str(pidfile)!r} + '.tmp', 'w').write(f'{{os.getpid()}} {{w.pid}}')\n"
        f"os.replace({str(pidfile)!r} + '.tmp', {str(pidfile)!r})\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n"
    )
    return _python(code)


@pytest.mark.parametrize("ignore_term", [False, True], ids=["sigterm", "needs-sigkill"])
def test_cancel_ends_the_whole_process_group(tmp_path: Path, ignore_term: bool) -> None:
    pidfile = tmp_path / "pids"
    cancel = CancelToken()

    def on_line(line: str) -> None:
        if line == "started":
            cancel.cancel()

    with pytest.raises(CancelledError):
        run_streamed(_group_script(pidfile, ignore_term), on_line=on_line, cancel=cancel, grace=0.3)
    leader, worker = (int(p) for p in pidfile.read_text().split())
    assert not running(leader) and not running(worker)


def test_timeout_ends_the_group_and_says_so(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    with pytest.raises(ProcessTimeout, match=r"did not finish within 0.5 s"):
        run_streamed(_group_script(pidfile, False), timeout=0.5, grace=0.3, what="the helper")
    leader, worker = (int(p) for p in pidfile.read_text().split())
    assert not running(leader) and not running(worker)


def test_a_tool_that_closes_its_pipes_and_goes_on_still_times_out() -> None:
    code = "import os, time\nos.close(1); os.close(2)\ntime.sleep(600)\n"
    with pytest.raises(ProcessTimeout):
        run_streamed(_python(code), timeout=0.5, grace=0.3)


def test_a_child_left_holding_the_pipes_is_ended_after_the_tool_exits(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    worker = "import time; time.sleep(600)"
    code = (
        "import subprocess, sys\n"
        f"w = subprocess.Popen([sys.executable, '-c', {worker!r}])\n"
        f"open({str(pidfile)!r}, 'w').write(str(w.pid))\n"
        "print('leader done')\n"
    )
    finished = run_streamed(_python(code), drain=0.2, grace=0.3)
    assert finished.returncode == 0 and finished.tail == ["leader done"]
    assert not running(int(pidfile.read_text()))


def test_an_uninterruptible_run_logs_the_cancel_and_finishes(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    cancel = CancelToken()
    code = (
        "import os, time\n"
        "print('rewriting', flush=True)\n"
        f"while not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
        "print('done')\n"
    )
    seen: list[str] = []

    def on_line(line: str) -> None:
        seen.append(line)
        if line == "rewriting":
            cancel.cancel()
        elif "runs to the end" in line:
            gate.touch()

    finished = run_streamed(_python(code), on_line=on_line, cancel=cancel, interruptible=False, what="the tool")
    assert finished.returncode == 0 and seen[-1] == "done"


def test_callbacks_run_on_the_calling_thread() -> None:
    threads: set[int] = set()
    run_streamed(_python("print('a'); print('b')"), on_line=lambda _: threads.add(threading.get_ident()))
    assert threads == {threading.get_ident()}


def test_wait_for_helper_times_out() -> None:
    with pytest.raises(AssertionError, match="never"):
        wait_for(lambda: False, timeout=0.05, what="never")
