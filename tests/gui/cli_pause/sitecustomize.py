"""Test-only start-up hook: rbln-studio-cli waits at one fault-injection step until its stdin is closed.

A test puts this folder first on PYTHONPATH and names the step in RBLN_STUDIO_PAUSE_STEP; the process prints
"paused at STEP" on stdout and holds whatever it holds there (e.g. the artifact's lock) until released.
"""

import os
import sys

_STEP = os.environ.get("RBLN_STUDIO_PAUSE_STEP")

if _STEP:
    from rbln_artifact_studio.core.storage import faults

    def _pause(step: str) -> None:
        if step == _STEP:
            print(f"paused at {step}", flush=True)
            sys.stdin.read()

    faults.install(_pause)
