"""A per-root cache of scan rows, keyed by each artifact folder's file listing (name, size, mtime, ctime, inode).

A row is reused only when every file of its folder has the same identity as when the row was computed,
so a resize, a new, deleted, renamed or replaced file, an edited config or a permission change always forces
a fresh read. Rows of folders changed in the last RACY_SECONDS are not stored: a file system with coarse
timestamps could see a second same-size edit within the same tick (git's "racy clean" problem).

The file proves its own integrity: a header line with the schema version and the resolved root, then one line per
folder, `CHECKSUM JSON`, the checksum a BLAKE2b digest of the JSON's bytes. A line whose checksum, shape or row does
not hold is a miss (read again and rewritten); a damaged cache is never the reason a scan fails. Folders are keyed
relative to the resolved root and a row stores neither path nor name (the walk gives them), so `scan .`, `scan
fleet` and the window's absolute path share one cache, and a row cannot point anywhere else.
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
from rbln_artifact_studio.core.storage.fsutil import TMP_TAG, remove_stale_temp_files

CACHE_VERSION = 5  # 3: the full check's verdict, link targets; 4: the model kind; 5: checksums, keys relative to root
RACY_SECONDS = 2.0
PAUSE_EVERY = 256  # entries between two calls of a save's or release's pause
WRITE_BUFFER = 8 << 20
Signature = list[list[Any]]
Pause = Callable[[], None]
WALK_FIELDS = ("path", "name", "link_target")  # a row's fields the walk gives: never stored, never trusted
CHECKSUM_BYTES = 16


def checksum(body: bytes) -> str:
    """The digest a cache line carries for its JSON (BLAKE2b: fast, in the standard library)."""
    return hashlib.blake2b(body, digest_size=CHECKSUM_BYTES).hexdigest()


def _header(root: str) -> str:
    return json.dumps({"version": CACHE_VERSION, "root": root})


def _entry(line: bytes) -> tuple[str, dict[str, Any]] | None:
    """A line's folder and entry, or None when its checksum or its shape does not hold."""
    digest, _, body = line.partition(b" ")
    if not body or digest.decode("ascii", "replace") != checksum(body):
        return None
    try:
        folder, entry = json.loads(body)
    except (ValueError, TypeError):
        return None
    if not isinstance(folder, str) or not isinstance(entry, dict):
        return None
    if not isinstance(entry.get("signature"), list) or not isinstance(entry.get("row"), dict):
        return None
    return folder, entry


def _parse(data: bytes, root: str) -> tuple[dict[str, dict[str, Any]], bool]:
    """The entries of a cache file, and whether a line was dropped (so the file is rewritten without it).

    Decoded a line at a time: one json.loads of a 50,000-row file would hold the interpreter lock for hundreds of
    milliseconds in the scan worker, and the GUI thread would wait for it. Another version or root: an empty cache.
    """
    lines = data.splitlines()
    try:
        header = json.loads(lines[0]) if lines else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header != json.loads(_header(root)):
        return {}, bool(lines)
    entries: dict[str, dict[str, Any]] = {}
    dropped = False
    for line in lines[1:]:
        found = _entry(line)
        if found is None:
            dropped = True
            continue
        entries[found[0]] = found[1]
    return entries, dropped


class ScanCache:
    """Rows of one scan root; load once, look up per folder, save once (atomically) if anything changed."""

    def __init__(self, root: Path) -> None:
        self.root = os.fspath(root)
        self._real_root = os.path.realpath(root)
        digest = hashlib.sha1(self._real_root.encode(), usedforsecurity=False).hexdigest()[:16]
        self.path = cache_dir() / f"scan-{digest}.json"
        self._entries: dict[str, dict[str, Any]] = {}
        self._seen: set[str] = set()
        self._dirty = False
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError, UnicodeError):
            self._entries, self._dirty = _parse(self.path.read_bytes(), self._real_root)

    def key(self, folder: str) -> str:
        """The folder relative to the root (as the walk spells it below the root), else its resolved path."""
        if folder == self.root:
            return "."
        prefix = self.root.rstrip(os.sep) + os.sep
        if folder.startswith(prefix):
            return folder[len(prefix) :]
        return os.path.realpath(folder)

    def get(self, folder: str, signature: Signature) -> dict[str, Any] | None:
        """The stored row with the folder's path and name filled in (its link target is the walk's to give)."""
        key = self.key(folder)
        self._seen.add(key)
        entry = self._entries.get(key)
        if entry is not None and entry.get("signature") == signature:
            return {**entry["row"], "path": folder, "name": os.path.basename(folder), "link_target": None}
        return None

    def forget(self, folder: str) -> None:
        """A row the caller could not validate: a miss, dropped from the file at the next save."""
        if self._entries.pop(self.key(folder), None) is not None:
            self._dirty = True

    def put(self, folder: str, signature: Signature, row: dict[str, Any]) -> None:
        """Remember a row, unless a file of the folder changed too recently for its timestamps to be trusted."""
        key = self.key(folder)
        self._seen.add(key)
        newest = max((max(mtime, ctime) for _, _, mtime, ctime, _ in signature), default=0)
        if newest > time.time_ns() - RACY_SECONDS * 1e9:
            if self._entries.pop(key, None) is not None:
                self._dirty = True
            return
        stored = {k: v for k, v in row.items() if k not in WALK_FIELDS}
        self._entries[key] = {"signature": signature, "row": stored}
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
        hundred entries, where a long save may give way to other work.

        A save that fails (a full disk, the cache path a folder) removes its temporary file and leaves the old
        cache as it was; temporary files of writers that died are removed first."""
        if complete:
            gone = set(self._entries) - self._seen
            for key in gone:
                del self._entries[key]
            self._dirty = self._dirty or bool(gone)
        if not self._dirty:
            return
        folder = self.path.parent
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(folder)
        tmp = self.path.with_name(f".{self.path.name}{TMP_TAG}{os.getpid()}-{os.urandom(4).hex()}")
        try:
            self._write(tmp, pause)
            os.replace(tmp, self.path)
        except (OSError, ValueError, TypeError):
            # A cache is never the reason a scan fails: keep the old file, and leave no temporary one behind.
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _write(self, tmp: Path, pause: Pause | None) -> None:
        # A line at a time, as _parse reads it: joining 50,000 rows into one string and encoding it would hold
        # the interpreter lock for a fifth of a second in the scan worker, and the GUI thread would wait.
        # A large buffer: few write calls, each of which lets go of the interpreter lock and takes it back at
        # once, while the GUI thread, woken too late, waits another switch interval (stalls of ~100 ms).
        with open(tmp, "wb", buffering=WRITE_BUFFER) as f:
            f.write(_header(self._real_root).encode() + b"\n")
            for i, (folder, entry) in enumerate(self._entries.items(), 1):
                body = json.dumps([folder, entry]).encode()
                f.write(checksum(body).encode() + b" " + body + b"\n")
                if pause is not None and i % PAUSE_EVERY == 0:
                    pause()
