"""Typed access to the app's QSettings: recent folders, window geometry and splitter states."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings

MAX_RECENT = 8


class Settings:
    """A thin typed layer over QSettings; every value has a default and a bad stored value reads as that."""

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store if store is not None else QSettings()

    def recent_folders(self) -> list[str]:
        value = self.store.value("recentFolders", [])
        if isinstance(value, str):
            value = [value]
        return [v for v in value if isinstance(v, str) and v] if isinstance(value, list) else []

    def add_recent_folder(self, folder: str) -> list[str]:
        recent = [folder, *(f for f in self.recent_folders() if f != folder)][:MAX_RECENT]
        self.store.setValue("recentFolders", recent)
        return recent

    def clear_recent_folders(self) -> None:
        self.store.setValue("recentFolders", [])

    def last_folder(self) -> str | None:
        recent = self.recent_folders()
        return recent[0] if recent else None

    def state(self, key: str) -> QByteArray | None:
        """A saved geometry or splitter/window state, or None."""
        value = self.store.value(f"state/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_state(self, key: str, value: QByteArray) -> None:
        self.store.setValue(f"state/{key}", value)

    def sync(self) -> None:
        self.store.sync()
