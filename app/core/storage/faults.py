"""Fault injection for crash tests: the process kills (or stops) itself at a named step when a test asks it to.

Environment (tests only; all unset in normal use):
- RBLN_STUDIO_FAULT_STEP: `step` acts at the step's first occurrence, `step#N` at its N-th.
- RBLN_STUDIO_FAULT_ACTION: `kill` (default, SIGKILL) or `stop` (SIGSTOP: the process holds its state,
  locks included, until the test sends SIGCONT).
- RBLN_STUDIO_FAULT_TRACE: a file to which every checkpoint appends `step#N monotonic-seconds`.
"""

from __future__ import annotations

import os
import signal
import time

ENV_STEP = "RBLN_STUDIO_FAULT_STEP"
ENV_ACTION = "RBLN_STUDIO_FAULT_ACTION"
ENV_TRACE = "RBLN_STUDIO_FAULT_TRACE"

_seen: dict[str, int] = {}


def reset() -> None:
    """Forget occurrence counts (for in-process tests that run several operations)."""
    _seen.clear()


def checkpoint(step: str) -> None:
    """Act on RBLN_STUDIO_FAULT_STEP / RBLN_STUDIO_FAULT_TRACE at this step; a no-op when both are unset."""
    target = os.environ.get(ENV_STEP)
    trace = os.environ.get(ENV_TRACE)
    if not target and not trace:
        return
    n = _seen[step] = _seen.get(step, 0) + 1
    if trace:
        fd = os.open(trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{step}#{n} {time.monotonic():.6f}\n".encode())
        finally:
            os.close(fd)
    if target and (target == f"{step}#{n}" or (target == step and n == 1)):
        if os.environ.get(ENV_ACTION, "kill") == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)
        else:
            os.kill(os.getpid(), signal.SIGKILL)
