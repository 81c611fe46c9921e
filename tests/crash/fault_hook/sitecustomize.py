"""Test-only start-up hook: the CLI kills (or stops) itself at a named write step, or traces every step.

harness.cli_env puts this folder first on PYTHONPATH for every CLI the crash tests start; it acts only when a test
sets one of these (never read by the app itself):
- RBLN_STUDIO_FAULT_STEP: `step` acts at the step's first occurrence, `step#N` at its N-th.
- RBLN_STUDIO_FAULT_ACTION: `kill` (default, SIGKILL) or `stop` (SIGSTOP: the process holds its state,
  locks included, until the test sends SIGCONT).
- RBLN_STUDIO_FAULT_TRACE: a file to which every step appends `step#N monotonic-seconds`.
"""

import os
import signal
import time

ENV_STEP = "RBLN_STUDIO_FAULT_STEP"
ENV_ACTION = "RBLN_STUDIO_FAULT_ACTION"
ENV_TRACE = "RBLN_STUDIO_FAULT_TRACE"

_target = os.environ.get(ENV_STEP)
_trace = os.environ.get(ENV_TRACE)
_stop = os.environ.get(ENV_ACTION, "kill") == "stop"
_seen: dict[str, int] = {}


def _at_step(step: str) -> None:
    n = _seen[step] = _seen.get(step, 0) + 1
    if _trace:
        fd = os.open(_trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{step}#{n} {time.monotonic():.6f}\n".encode())
        finally:
            os.close(fd)
    if _target and (_target == f"{step}#{n}" or (_target == step and n == 1)):
        os.kill(os.getpid(), signal.SIGSTOP if _stop else signal.SIGKILL)


if _target or _trace:
    from rbln_artifact_studio.core.storage import faults

    faults.install(_at_step)
