"""A per-root cache of scan rows, keyed by each artifact folder's file listing (name, size, mtime, ctime, inode).

A row is reused only when every file of its folder has the same identity as when the row was computed,
so a resize, a new, deleted, renamed or replaced file, an edited config or a permission change always forces
a fresh read. Rows of folders changed in the last RACY_SECONDS are not stored: a file system with coarse
timestamps could see a second same-size edit within the same tick (git's "racy clean" problem).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.app_dirs import cache_dir

CACHE_VERSION = 4  # 3: rows hold the full check's verdict (verify.py), and link targets; 4: the model kind, subfolders
RACY_SECONDS = 2.0
PAUSE_EVERY = 256  # entries between two calls of a save's or release's pause
WRITE_BUFFER = 8 << 20
Signature = list[list[Any]]
Pause = Callable[[], None]


def _parse(data: bytes) -> dict[str, dict[str, Any]]:
    """The entries of a cache file: a version line, then one [folder, entry] line each.

    Decoded a line at a time: one json.loads of a 50,000-row file would hold the interpreter lock for hundreds of
    milliseconds in the scan worker, and the GUI thread would wait for it. Anything unexpected: an empty cache.
    """
    lines = data.splitlines()
    if not lines or json.loads(lines[0]).get("version") != CACHE_VERSION:
        return {}
    entries: dict[str, dict[str, Any]] = {}
    for line in lines[1:]:
        folder, entry = json.loads(line)
        if not isinstance(folder, str) or not isinstance(entry, dict):
            return {}
        entries[folder] = entry
    return entries


class ScanCache:
    """Rows of one scan root; load once, look up per folder, save once (atomically) if anything changed."""

    def __init__(self, root: Path) -> None:
        digest = hashlib.sha1(os.path.realpath(root).encode(), usedforsecurity=False).hexdigest()[:16]
        self.path = cache_dir() / f"scan-{digest}.json"
        self._entries: dict[str, dict[str, Any]] = {}
        self._seen: set[str] = set()
        self._dirty = False
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            self._entries = _parse(self.path.read_bytes())

    def get(self, folder: str, signature: Signature) -> dict[str, Any] | None:
        self._seen.add(folder)
        entry = self._entries.get(folder)
        if entry is not None and entry.get("signature") == signature:
            return entry.get("row")
        return None

    def put(self, folder: str, signature: Signature, row: dict[str, Any]) -> None:
        """Remember a row, unless a file of the folder changed too recently for its timestamps to be trusted."""
        self._seen.add(folder)
        newest = max((max(mtime, ctime) for _, _, mtime, ctime, _ in signature), default=0)
        if newest > time.time_ns() - RACY_SECONDS * 1e9:
            if self._entries.pop(folder, None) is not None:
                self._dirty = True
            return
        self._entries[folder] = {"signature": signature, "row": row}
        self._dirty = True

    def release(self, pause: Pause | None = None) -> None:
        """Drop the entries one at a time: freeing 50,000 at once is one long deallocation holding the interpreter
        lock (a GUI thread waiting for it stalls); a loop lets other threads in between."""
        while self._entries:
            self._entries.popitem()
            if pause is not None and len(self._entries) % PAUSE_EVERY == 0:
                pause()
        self._seen = set()

    def save(self, complete: bool, pause: Pause | None = None) -> None:
        """Write the cache; after a complete scan, drop folders that no longer exist. `pause` is called every few
        hundred entries: a GUI's worker gives way there while the window paints (jobs.WorkerGate)."""
        if complete:
            gone = set(self._entries) - self._seen
            for folder in gone:
                del self._entries[folder]
            self._dirty = self._dirty or bool(gone)
        if not self._dirty:
            return
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            # A line at a time, as _parse reads it: joining 50,000 rows into one string and encoding it would hold
            # the interpreter lock for a fifth of a second in the scan worker, and the GUI thread would wait.
            # A large buffer: few write calls, each of which lets go of the interpreter lock and takes it back at
            # once, while the GUI thread, woken too late, waits another switch interval (stalls of ~100 ms).
            with open(tmp, "w", encoding="utf-8", buffering=WRITE_BUFFER) as f:
                f.write(json.dumps({"version": CACHE_VERSION}) + "\n")
                for i, (folder, entry) in enumerate(self._entries.items(), 1):
                    f.write(json.dumps([folder, entry]) + "\n")
                    if pause is not None and i % PAUSE_EVERY == 0:
                        pause()
            os.replace(tmp, self.path)
