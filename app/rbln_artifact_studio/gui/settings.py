"""Typed access to the app's QSettings: recent folders, toolchain paths, window geometry and splitter states."""

from __future__ import annotations

import json
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QSettings

from rbln_artifact_studio.backends.settings import ToolchainSettings
from rbln_artifact_studio.gui.app_paths import legacy_settings_store, settings_store

MAX_RECENT = 8
MAX_SERVERS = 16
MAX_SEEN_JOBS = 500  # per server: job ids are timestamps, older ones drop out first


@dataclass(frozen=True)
class ServerEntry:
    """A server the user connected to: its ssh host (alias or user@host[:port]) and folders. No secret, ever."""

    host: str
    folders: tuple[str, ...]


@dataclass(frozen=True)
class ToolchainPaths:
    """The Preferences' toolchain fields; empty means "find it" (PATH, then the CLI script's interpreter)."""

    toolchain_python: str = ""
    optimum_cli: str = ""

    def settings(self) -> ToolchainSettings:
        """What the backends are given with each detection, compile and resize (environment variables still win)."""
        return ToolchainSettings(optimum_cli=self.optimum_cli or None, toolchain_python=self.toolchain_python or None)


def migrate(store: QSettings, legacy: QSettings) -> bool:
    """Copy every key of the old settings file into a new, empty one; True when something was copied."""
    if store.allKeys() or not legacy.allKeys():
        return False
    for key in legacy.allKeys():
        store.setValue(key, legacy.value(key))
    store.sync()
    return True


class Settings:
    """A thin typed layer over QSettings; every value has a default and a bad stored value reads as that.

    Values are read once and written by save() (when the window closes): QSettings writes its file from
    the GUI thread, and a write there can wait on a busy disk.
    """

    def __init__(self, store: QSettings | None = None) -> None:
        if store is None:
            store = settings_store()
            migrate(store, legacy_settings_store())
        self.store = store
        self._recent = self._read_recent()
        self._toolchain = ToolchainPaths(self._text("toolchain/python"), self._text("toolchain/optimumCli"))
        self._states: dict[str, QByteArray] = {}
        self._servers = self._read_servers()
        self._seen_jobs = self._read_seen_jobs()

    def file_name(self) -> str:
        """Where the settings are stored (shown in the About box)."""
        return self.store.fileName()

    def _text(self, key: str) -> str:
        value = self.store.value(key, "")
        return value.strip() if isinstance(value, str) else ""

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

    def _read_servers(self) -> list[ServerEntry]:
        value = self.store.value("servers/list", "")
        try:
            data = json.loads(value) if isinstance(value, str) and value else []
            return [
                ServerEntry(str(e["host"]), tuple(str(f) for f in e["folders"]))
                for e in data[:MAX_SERVERS]
                if isinstance(e, dict) and e.get("host") and isinstance(e.get("folders"), list)
            ]
        except (ValueError, TypeError, KeyError):
            return []

    def servers(self) -> list[ServerEntry]:
        """Remembered servers, most recent first."""
        return list(self._servers)

    def _read_seen_jobs(self) -> dict[str, list[str]]:
        value = self.store.value("servers/seenJobs", "")
        try:
            data = json.loads(value) if isinstance(value, str) and value else {}
        except ValueError:
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(h): [str(i) for i in ids] for h, ids in data.items() if isinstance(ids, list)}

    def seen_jobs(self, host: str) -> set[str] | None:
        """The server's job ids whose outcome was shown already; None before the first look at its jobs."""
        ids = self._seen_jobs.get(host)
        return None if ids is None else set(ids)

    def mark_jobs_seen(self, host: str, ids: list[str]) -> None:
        known = self._seen_jobs.get(host, [])
        self._seen_jobs[host] = [*known, *(i for i in ids if i not in known)][-MAX_SEEN_JOBS:]

    def ssh_config(self) -> str:
        """An ssh_config file to use instead of ~/.ssh/config (like ssh -F); empty: ssh's own."""
        return self._text("ssh/configFile")

    def remember_server(self, entry: ServerEntry) -> None:
        self._servers = [entry, *(e for e in self._servers if e.host != entry.host)][:MAX_SERVERS]

    def toolchain(self) -> ToolchainPaths:
        return self._toolchain

    def set_toolchain(self, paths: ToolchainPaths) -> None:
        self._toolchain = ToolchainPaths(paths.toolchain_python.strip(), paths.optimum_cli.strip())

    def state(self, key: str) -> QByteArray | None:
        """A saved geometry or splitter/window state, or None."""
        value = self._states.get(key, self.store.value(f"state/{key}"))
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_state(self, key: str, value: QByteArray) -> None:
        self._states[key] = value

    def save(self) -> None:
        """Write everything to the settings file."""
        self.store.setValue("recentFolders", self._recent)
        self.store.setValue("toolchain/python", self._toolchain.toolchain_python)
        self.store.setValue("toolchain/optimumCli", self._toolchain.optimum_cli)
        self.store.setValue(
            "servers/list", json.dumps([{"host": e.host, "folders": list(e.folders)} for e in self._servers])
        )
        self.store.setValue("servers/seenJobs", json.dumps(self._seen_jobs))
        for key, value in self._states.items():
            self.store.setValue(f"state/{key}", value)
        self.store.sync()
