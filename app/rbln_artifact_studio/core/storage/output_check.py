"""Check the folder typed for a resized copy as the user types it: check_new_output_dir's rules, creating nothing."""

from __future__ import annotations

import os
from pathlib import Path

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.storage.fsutil import check_new_output_dir

CHOOSE_FOLDER = "Choose the folder for the copy."


def _absolute(text: str) -> Path:
    return Path(os.path.abspath(os.path.expanduser(text.strip())))


def path_problem(text: str, source: str | Path | None) -> str | None:
    """What the typed path alone shows (no disk access): empty, the source itself, or inside the source (None: a
    source that is not on this computer)."""
    if not text.strip():
        return CHOOSE_FOLDER
    if source is None:
        return None
    output, src = _absolute(text), Path(os.path.abspath(source))
    if output == src:
        return f"The output folder {output} is the source artifact; choose a new folder."
    if src in output.parents:
        return f"The output folder {output} lies inside the source artifact {src}; choose another."
    return None


def folder_problem(text: str, source: str | Path | None) -> str | None:
    """The message check_new_output_dir would raise for this folder, or None; reads the disk, writes nothing.

    Where the parent folders do not exist yet (the copy would create them), the nearest folder that exists
    is checked instead: it must be a folder the user can write into. Run it off the GUI thread.
    """
    quick = path_problem(text, source)
    if quick is not None:
        return quick
    probe = _absolute(text)
    while not probe.parent.is_dir():
        if os.path.lexists(probe.parent):
            return f"{probe.parent} exists and is not a folder; choose another place for the copy."
        probe = probe.parent
    try:
        check_new_output_dir(probe, Path(source) if source is not None else None)  # its parent exists: creates nothing
    except StudioError as exc:
        return exc.one_line()
    return None
