"""Fault injection for crash tests: the process kills itself at a named step when a test asks it to."""

from __future__ import annotations

import os
import signal

ENV_STEP = "RBLN_STUDIO_FAULT_STEP"


def checkpoint(step: str) -> None:
    """SIGKILL this process if RBLN_STUDIO_FAULT_STEP names this step (tests only; unset in normal use)."""
    target = os.environ.get(ENV_STEP)
    if target and target == step:
        os.kill(os.getpid(), signal.SIGKILL)
