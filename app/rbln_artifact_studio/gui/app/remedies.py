"""How the desktop names the options a core remedy asks for (core/errors.py Remedy): by the controls that set them,
never by a CLI flag."""

from __future__ import annotations

from rbln_artifact_studio.core.errors import OptionNames, StudioError

CONTROLS: OptionNames = {
    "output": "choose a folder of its own in the resize dialog's Where ▸ To a copy",
    "backend=optimum": "install the real toolchain and name it in Preferences ▸ Real toolchain",
    "backend=sim": "the desktop resizes the simulator's artifacts with the simulator's engine by itself",
    "backend": "Preferences ▸ Real toolchain",
    "num_devices": "num_devices on the compile wizard's target page",
}


def said(exc: StudioError) -> str:
    """An error's message as the desktop shows it: its remedy names the desktop's controls."""
    return exc.said(CONTROLS)


def one_line(exc: StudioError) -> str:
    """An error's message and hint on one line, its remedy naming the desktop's controls."""
    return exc.one_line(CONTROLS)
