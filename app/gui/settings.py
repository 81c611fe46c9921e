"""Typed access to the app's QSettings: recent folders, window geometry and splitter states."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings

MAX_RECENT = 8


class Settings:
    """A thin typed layer over QSettings; every value has a default and a bad stored value reads as that.

    Values are read once and written by save() (when the window closes): QSettings writes its file from
    the GUI thread, and a write there can wait on a busy disk.
    """

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store if store is not None else QSettings()
        self._recent = self._read_recent()
        self._states: dict[str, QByteArray] = {}

    def _read_recent(self) -> list[str]:
        value = self.store.value("recentFolders", [])
        if isinstance(value, str):
            value = [value]
        return [v for v in value if isinstance(v, str) and v][:MAX_RECENT] if isinstance(value, list) else []

    def recent_folders(self) -> list[str]:
        return list(self._recent)

    def add_recent_folder(self, folder: str) -> list[str]:
        self._recent = [folder, *(f for f in self._recent if f != folder)][:MAX_RECENT]
        return self.recent_folders()

    def clear_recent_folders(self) -> None:
        self._recent = []

    def last_folder(self) -> str | None:
        recent = self.recent_folders()
        return recent[0] if recent else None

    def state(self, key: str) -> QByteArray | None:
        """A saved geometry or splitter/window state, or None."""
        value = self._states.get(key, self.store.value(f"state/{key}"))
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_state(self, key: str, value: QByteArray) -> None:
        self._states[key] = value

    def save(self) -> None:
        """Write everything to the settings file."""
        self.store.setValue("recentFolders", self._recent)
        for key, value in self._states.items():
            self.store.setValue(f"state/{key}", value)
        self.store.sync()
