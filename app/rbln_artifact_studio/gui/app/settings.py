"""Typed access to the app's QSettings: recent folders, toolchain paths, window geometry and splitter states.

Every change is written when it is made, by one writer thread (the GUI thread never waits on the disk), and
merged with what the file holds then: several windows open at once each add their recent folders and servers,
none overwrites another's. A settings file that cannot be written is said once, with where; one that is not
plausibly ours (far too large) is moved aside, kept, and the app starts from defaults.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QObject, QSettings, Signal

from rbln_artifact_studio.backends.settings import ToolchainSettings
from rbln_artifact_studio.core import app_dirs
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.app.app_paths import legacy_settings_store
from rbln_artifact_studio.gui.app.session_settings import MAX_SERVERS, SessionSettings

if TYPE_CHECKING:
    import concurrent.futures

MAX_RECENT = 8
MAX_SEEN_JOBS = 500  # per server: job ids are timestamps, older ones drop out first
MAX_SETTINGS_BYTES = 4 << 20
"""Far above what the studio writes (its largest part, the seen jobs of 16 servers, is about 200 KB): a larger
file is not ours, and reading it took 23 s and 1.3 GB (issue 28)."""


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


def refuse_implausible(path: Path) -> str | None:
    """Move a settings file that cannot be ours aside (kept, beside it); what to tell the user, or None."""
    try:
        size = path.stat().st_size
    except OSError:
        return None  # no file yet (or one that cannot be read: QSettings starts from defaults, the writer says why)
    if size <= MAX_SETTINGS_BYTES or not path.is_file():
        return None
    kept = path.with_name(f"{path.name}.refused-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.replace(path, kept)
    except OSError as exc:
        return (
            f"The settings file {path} is {format_bytes(size)}, far too large to be the studio's, and could not be "
            f"moved aside ({exc.strerror}): the studio starts with default settings and saves none. "
            "Move or delete that file."
        )
    return (
        f"The settings file {path} was {format_bytes(size)}, far too large to be the studio's: it was moved to "
        f"{kept} (delete it when you do not need it) and the studio starts with default settings."
    )


def open_store(path: Path) -> tuple[QSettings, str | None]:
    """The settings file at path (an INI file), after refusing one that is not plausibly ours; and what to say."""
    notice = refuse_implausible(path)
    if notice is not None and path.exists():  # could not be moved: never read it, never write over it
        return QSettings(str(path.with_name(f".{path.name}.unused")), QSettings.Format.IniFormat), notice
    return QSettings(str(path), QSettings.Format.IniFormat), notice


def why_not_writable(path: Path) -> str:
    """The reason a settings file could not be written, in words a user can act on."""
    if path.is_dir():
        return f"{path} is a folder; remove or rename it"
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            return f"{parent} is a file, where the settings folder should be; remove or rename it"
        if parent.is_dir():
            break
    if path.exists() and not os.access(path, os.W_OK):
        return f"{path} is read-only; make it writable (chmod u+w)"
    if not os.access(path.parent, os.W_OK):
        return f"the folder {path.parent} is read-only; make it writable"
    return f"{path} cannot be written; check the disk and its permissions"


# ---- the stored values, read leniently: a bad value reads as its default ---------------------------------


def stored_text(store: QSettings, key: str) -> str:
    """A text value, stripped; empty when unset or not text."""
    value = store.value(key, "")
    return value.strip() if isinstance(value, str) else ""


def read_recent(store: QSettings) -> list[str]:
    """The recent folders the file holds, most recent first; anything else stored there reads as none."""
    value = store.value("recentFolders", [])
    if isinstance(value, str):
        value = [value]
    return [v for v in value if isinstance(v, str) and v][:MAX_RECENT] if isinstance(value, list) else []


def read_servers(store: QSettings) -> list[ServerEntry]:
    """The remembered servers the file holds; a damaged list reads as empty."""
    value = store.value("servers/list", "")
    try:
        data = json.loads(value) if isinstance(value, str) and value else []
        return [
            ServerEntry(str(e["host"]), tuple(str(f) for f in e["folders"]))
            for e in data[:MAX_SERVERS]
            if isinstance(e, dict) and e.get("host") and isinstance(e.get("folders"), list)
        ]
    except (ValueError, TypeError, KeyError):
        return []


def read_seen_jobs(store: QSettings) -> dict[str, list[str]]:
    """Per server, the job ids whose outcome was shown; a damaged value reads as none."""
    value = store.value("servers/seenJobs", "")
    try:
        data = json.loads(value) if isinstance(value, str) and value else {}
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(h): [str(i) for i in ids] for h, ids in data.items() if isinstance(ids, list)}


class SettingsNotices(QObject):
    """Carries what the settings need to tell the user to the GUI thread (a writer thread finds most of it)."""

    notice = Signal(str)


Change = Callable[[QSettings], None]

MERGE_LOCK_SUFFIX = ".merge-lock"  # not Qt's own ".lock", which QSettings takes inside each sync
MERGE_LOCK_WAIT = 5.0  # seconds; a merge takes milliseconds, and past this the change is written unlocked


@contextlib.contextmanager
def merge_lock(settings_file: str) -> Iterator[None]:
    """Hold the settings' merge lock while a change reads, edits and writes the file.

    Qt's own lock covers one sync: two writers that each read the file, add a recent folder and write it back
    would both see the old list, and the second would drop the first's folder. The flock spans all three steps.
    Where the lock file cannot be made (a read-only folder) the change goes ahead: its write then fails and says so.
    """
    try:
        fd = os.open(settings_file + MERGE_LOCK_SUFFIX, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        yield
        return
    try:
        deadline = time.monotonic() + MERGE_LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break  # a writer stuck for seconds: write unlocked rather than lose the change
                time.sleep(0.005)
        yield
    finally:
        os.close(fd)  # releases the flock


class RememberedText:
    """One text the app remembers between sessions (read once, each change written at once by the settings)."""

    def __init__(self, settings: Settings, key: str) -> None:
        self._settings, self._key = settings, key
        self._value = stored_text(settings.store, key)

    def get(self) -> str:
        return self._value

    def set(self, value: str) -> None:
        self._value = value
        key = self._key
        self._settings._write(lambda store: store.setValue(key, value))


class Choices:
    """Choices remembered for the next time the same question is asked (the wizard's last target, the last bucket,
    recent buckets, the folders shown), each a JSON value under choices/<key>."""

    def __init__(self, store: QSettings, write: Callable[[Change], None]) -> None:
        self._store, self._write = store, write
        self._values: dict[str, object] = {}  # read when first asked

    def get(self, key: str) -> object:
        """The remembered value; None when there is none or the stored text is damaged."""
        if key not in self._values:
            value = self._store.value(f"choices/{key}", "")
            try:
                self._values[key] = json.loads(value) if isinstance(value, str) and value else None
            except ValueError:
                self._values[key] = None
        return self._values[key]

    def set(self, key: str, value: object) -> None:
        self._values[key] = value
        text = json.dumps(value)
        self._write(lambda store: store.setValue(f"choices/{key}", text))


class SettingsWriter:
    """The thread that writes the settings' changes, one at a time, each merged with the file's content then.

    Started by the first change, ended by close() (the window's save() when it closes)."""

    def __init__(self, file: str, format: QSettings.Format, notices: SettingsNotices) -> None:
        self._file, self._format, self.notices = file, format, notices
        self._thread: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._said_unwritable = False
        self._held: list[Change] | None = None  # hold(): the changes kept for release()

    def hold(self) -> None:
        """Changes made from now on are written once release() is called: the thread, and concurrent.futures it
        runs on (~13 M instructions), then start after the window's first paint, not before (row 7)."""
        with self._lock:
            if self._held is None:
                self._held = []

    def release(self) -> None:
        """Write what was held since hold(); later changes are written as they come again."""
        with self._lock:
            held, self._held = self._held or [], None
        for change in held:
            self.write(change)

    def write(self, change: Change) -> None:
        """Apply change to the file's current content in the writer thread, and write it."""
        with self._lock:
            if self._held is not None:
                self._held.append(change)
                return
            if self._thread is None:  # the first change, or the first since the window closed
                # deferred: the first change is written after the window's first paint (tests/gui/test_gui_startup.py)
                import concurrent.futures

                self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="settings-writer")
            self._thread.submit(self._apply, change)

    def _apply(self, change: Change) -> None:
        # An object of this thread's own: QSettings objects are not shared between threads. Qt re-reads the file
        # when another process changed it, and writes it under a lock file, replacing it by a rename.
        with merge_lock(self._file):
            store = QSettings(self._file, self._format)
            store.sync()
            change(store)
            store.sync()
        if store.status() != QSettings.Status.NoError and not self._said_unwritable:
            self._said_unwritable = True
            self.notices.notice.emit(
                f"Settings cannot be saved: {why_not_writable(Path(self._file))}. "
                "Changes made now last until the studio quits."
            )

    def flush(self) -> None:
        self.release()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.submit(lambda: None).result()

    def close(self) -> None:
        self.release()
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.shutdown(wait=True)  # runs what was submitted first: nothing the user chose is lost


class Settings:
    """A thin typed layer over QSettings; every value has a default and a bad stored value reads as that.

    Values are read once; each change is written at once by the writer thread, merged with the file's content
    then (see the module docstring). save() writes the window's states, waits for the writes and ends the writer
    thread (on close).
    """

    def __init__(self, store: QSettings | None = None) -> None:
        self.notices = SettingsNotices()
        self._pending_notice: str | None = None
        if store is None:
            store, self._pending_notice = open_store(app_dirs.settings_file())
            migrate(store, legacy_settings_store())
        store.sync()  # what other windows wrote since this store object was made
        self.store = store
        self._file = store.fileName()
        self._format = store.format()
        self._writer = SettingsWriter(self._file, self._format, self.notices)
        self._write = self._writer.write
        self._recent = read_recent(store)
        self._toolchain = ToolchainPaths(
            stored_text(store, "toolchain/python"), stored_text(store, "toolchain/optimumCli")
        )
        self._states: dict[str, QByteArray] = {}
        self._servers = read_servers(store)
        self._seen_jobs = read_seen_jobs(store)
        self.copy_folder = RememberedText(self, "copies/lastFolder")  # the folder last chosen for a resized copy
        self._ssh_config: str | None = None  # None: as the store says (read when asked)
        self.session = SessionSettings(store, self._write)  # what was open: servers, buckets, the console
        self.choices = Choices(store, self._write)  # the last answers to the same questions (wizard, bucket)

    def file_name(self) -> str:
        """Where the settings are stored (shown in the About box)."""
        return self._file

    def take_notice(self) -> str | None:
        """What opening the settings found to say (a refused file), once; the window shows it."""
        notice, self._pending_notice = self._pending_notice, None
        return notice

    def flush(self) -> None:
        """Wait until every change made so far is written."""
        self._writer.flush()

    def hold_writes(self) -> Callable[[], None]:
        """Hold the changes made from now on (SettingsWriter.hold); returns what writes them."""
        self._writer.hold()
        return self._writer.release

    def close(self) -> None:
        """Write every change made so far, then end the writer thread (a window leaves none behind when it goes;
        a change made later starts another)."""
        self._writer.close()

    # ---- values ----------------------------------------------------------------------------------------

    def recent_folders(self) -> list[str]:
        return list(self._recent)

    def add_recent_folder(self, folder: str) -> list[str]:
        self._recent = [folder, *(f for f in self._recent if f != folder)][:MAX_RECENT]

        def change(store: QSettings) -> None:
            stored = read_recent(store)
            store.setValue("recentFolders", [folder, *(f for f in stored if f != folder)][:MAX_RECENT])

        self._write(change)
        return self.recent_folders()

    def clear_recent_folders(self) -> None:
        self._recent = []
        self._write(lambda store: store.setValue("recentFolders", []))

    def servers(self) -> list[ServerEntry]:
        """Remembered servers, most recent first."""
        return list(self._servers)

    def seen_jobs(self, host: str) -> set[str] | None:
        """The server's job ids whose outcome was shown already; None before the first look at its jobs."""
        ids = self._seen_jobs.get(host)
        return None if ids is None else set(ids)

    def mark_jobs_seen(self, host: str, ids: list[str]) -> None:
        self._seen_jobs[host] = _seen_with(self._seen_jobs.get(host, []), ids)

        def change(store: QSettings) -> None:
            stored = read_seen_jobs(store)
            stored[host] = _seen_with(stored.get(host, []), ids)
            store.setValue("servers/seenJobs", json.dumps(stored))

        self._write(change)

    def ssh_config(self) -> str:
        """An ssh_config file to use instead of ~/.ssh/config (like ssh -F); empty: ssh's own."""
        return stored_text(self.store, "ssh/configFile") if self._ssh_config is None else self._ssh_config

    def set_ssh_config(self, path: str) -> None:
        chosen = self._ssh_config = path.strip()
        self._write(lambda store: store.setValue("ssh/configFile", chosen))

    def remember_server(self, entry: ServerEntry) -> None:
        self._servers = [entry, *(e for e in self._servers if e.host != entry.host)][:MAX_SERVERS]

        def change(store: QSettings) -> None:
            stored = [entry, *(e for e in read_servers(store) if e.host != entry.host)][:MAX_SERVERS]
            store.setValue("servers/list", json.dumps([{"host": e.host, "folders": list(e.folders)} for e in stored]))

        self._write(change)

    def toolchain(self) -> ToolchainPaths:
        return self._toolchain

    def set_toolchain(self, paths: ToolchainPaths) -> None:
        chosen = self._toolchain = ToolchainPaths(paths.toolchain_python.strip(), paths.optimum_cli.strip())

        def change(store: QSettings) -> None:
            store.setValue("toolchain/python", chosen.toolchain_python)
            store.setValue("toolchain/optimumCli", chosen.optimum_cli)

        self._write(change)

    def state(self, key: str) -> QByteArray | None:
        """A saved geometry or splitter/window state, or None."""
        value = self._states.get(key, self.store.value(f"state/{key}"))
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_state(self, key: str, value: QByteArray) -> None:
        self._states[key] = value

    def save(self) -> None:
        """Write the window's states (each change is written when made), wait until everything is written, and end
        the writer thread (the window saves when it closes: close())."""
        states = dict(self._states)

        def change(store: QSettings) -> None:
            for key, value in states.items():
                store.setValue(f"state/{key}", value)

        self._write(change)
        self.close()


def _seen_with(known: list[str], ids: list[str]) -> list[str]:
    return [*known, *(i for i in ids if i not in known)][-MAX_SEEN_JOBS:]
