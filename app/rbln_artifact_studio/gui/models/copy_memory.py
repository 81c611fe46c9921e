"""The folder chosen last for copies of each place's artifacts (a server, a bucket, this computer): proposed first
for the next copy from that place, even elsewhere, because the user chose it for that place; a copy from another
place never inherits it (places/dispatch.default_copy)."""

from __future__ import annotations

from rbln_artifact_studio.core.location import Location
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.places.dispatch import place_of

KEY = "copyFolderByPlace"
"""The choice (settings' choices/) that maps a place (dispatch.place_of: '' for this computer) to a folder's text."""


def _by_place(settings: Settings) -> dict[str, str]:
    stored = settings.choices.get(KEY)
    if not isinstance(stored, dict):
        return {}  # none yet, or a damaged value: as if none were stored
    return {k: v for k, v in stored.items() if isinstance(k, str) and isinstance(v, str)}


def chosen_for(settings: Settings, source: Location) -> str:
    """The folder chosen last for a copy of an artifact of source's place ('' when none was)."""
    return _by_place(settings).get(place_of(source), "")


def remember(settings: Settings, source: Location, output: Location) -> None:
    """A copy of source was asked at output: its folder is proposed first for source's place, and last for copies
    of any place (the global folder, used where it stays on the source's place or this computer)."""
    folder = str(output.parent)
    settings.choices.set(KEY, {**_by_place(settings), place_of(source): folder})
    settings.copy_folder.set(folder)
