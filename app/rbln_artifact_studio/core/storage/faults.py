"""The named steps of every write path, and the seam crash tests hook into (nothing is read from the environment).

Write paths call `checkpoint("resize.locked")` and the like; with no hook installed that is one call and one test.
The crash tests install a hook in the CLI they start (tests/crash/fault_hook/sitecustomize.py) that kills, stops
or traces the process at a named step; docs/crash-safety.md lists the steps.
"""

from __future__ import annotations

from collections.abc import Callable

StepHook = Callable[[str], None]

_hook: StepHook | None = None


def install(hook: StepHook | None) -> StepHook | None:
    """Call hook(step) at every checkpoint from now on (None: stop); returns the hook it replaces."""
    global _hook
    previous, _hook = _hook, hook
    return previous


def checkpoint(step: str) -> None:
    """A named step of a write path: the installed hook, if any, sees it."""
    if _hook is not None:
        _hook(step)
