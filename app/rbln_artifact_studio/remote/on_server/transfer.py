"""Move an artifact's files between this server and the studio, for a copy from or into a bucket.

python3 transfer.py check OUTPUT RULES | receive OUTPUT RULES IDLE_SECONDS | send FOLDER RULES

check: whether OUTPUT can take a new artifact ({"ok": true}, or {"refused": WHY, "path": P}).
receive: the same check, then a hidden staging folder beside OUTPUT (marked incomplete, as the studio's own
staging folders are) filled from stdin: a line {"file": NAME, "size": N} and N bytes per file, then {"end": true};
the folder is flushed and renamed into place only then ({"done": OUTPUT}). A stdin that ends, or stays silent for
IDLE_SECONDS, before {"end"} removes the staging folder: a stopped copy leaves nothing a scan calls an artifact.
receive and send run without the prelude (stdin carries the files, and a lock must be given back), so they watch
stdin themselves. send: FOLDER's files (hidden names skipped, links followed) under the folder's lock: {"files": [[NAME, SIZE]...]},
then per file {"file": NAME, "size": N} and its bytes as {"blob": K} records, then {"end": true}.
RULES is a JSON object of the studio's names: config, marker, partial, claim. A receive holds an flock beside OUTPUT
while it writes (refused {"refused": "busy", "holder": WHO} while another holds it).
"""

import json
import os
import select
import shutil
import socket
import sys
import threading

from rbln_artifact_studio.core.portable.files import fsync_dir
from rbln_artifact_studio.core.portable.lock import FolderLock, LockContended, LockHeld
from rbln_artifact_studio.core.portable.pipeline import is_pipeline_folder
from rbln_artifact_studio.core.portable.staging import claim_name, remove_stale_partials, staging_path

CHUNK = 4 << 20
INDEX_LIMIT = 1 << 20  # a pipeline's model_index.json is read as at most this many bytes
SYNC_EVERY = 256 << 20
RULES = json.loads(sys.argv[3])
CONFIG, MARKER, PARTIAL = RULES["config"], RULES["marker"], RULES["partial"]


class Stopped(Exception):
    """The client went away (stdin ended or stayed silent) before the copy was whole."""


def answer(record, blob=b""):
    out = sys.stdout.buffer
    out.write(json.dumps(record).encode() + b"\n" + blob)
    out.flush()


def refusal(output):
    """Why output cannot take a new artifact ({"refused": ..., "path": ...}), or None."""
    output = os.path.abspath(output)
    folder = os.path.dirname(output)
    while True:
        if os.path.isfile(os.path.join(folder, CONFIG)) and not os.path.exists(os.path.join(folder, MARKER)):
            return {"refused": "inside", "path": folder}  # an artifact's subfolders belong to it: hidden from scans
        up = os.path.dirname(folder)
        if up == folder:
            break
        folder = up
    if os.path.lexists(output):
        if not os.path.isdir(output):
            return {"refused": "not_folder", "path": output}
        if os.listdir(output):
            return {"refused": "exists", "path": output}
    existing = os.path.dirname(output)
    while not os.path.isdir(existing):
        existing = os.path.dirname(existing)
    if not os.access(existing, os.W_OK | os.X_OK):
        return {"refused": "denied", "path": existing}
    return None


class Input:
    """stdin as framed records, each read bounded by the idle limit."""

    def __init__(self, idle):
        self.idle = idle
        self.buffer = b""

    def _more(self):
        ready, _, _ = select.select([0], [], [], self.idle)
        if not ready:
            raise Stopped(f"no data for {self.idle:g} s")
        data = os.read(0, CHUNK)
        if not data:
            raise Stopped("the client went away")
        self.buffer += data

    def line(self):
        while b"\n" not in self.buffer:
            self._more()
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line.decode())

    def copy_to(self, f, size):
        left, unsynced = size, 0
        while left:
            if not self.buffer:
                self._more()
            piece, self.buffer = self.buffer[:left], self.buffer[left:]
            f.write(piece)
            left -= len(piece)
            unsynced += len(piece)
            if unsynced >= SYNC_EVERY:  # no single flush of a large graph keeps the client waiting for long
                f.flush()
                os.fsync(f.fileno())
                unsynced = 0


def inside(staging, name):
    """The path of a sent file's name in the staging folder; a name that would leave it is refused."""
    parts = name.split("/")
    if name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"a file name that leaves the folder: {name!r}")
    return os.path.join(staging, *parts)


def destination_claim(output):
    """The flock beside output that one writer holds while it writes there (`.NAME` + the claim tag)."""
    claim = FolderLock(os.path.dirname(output), "copy from the studio")
    claim.path = os.path.join(os.path.dirname(output), claim_name(os.path.basename(output), RULES["claim"]))
    return claim


def receive(output, idle):
    output = os.path.abspath(output)
    refused = refusal(output)
    if refused is not None:
        answer(refused)
        return
    parent = os.path.dirname(output)
    os.makedirs(parent, exist_ok=True)
    claim = destination_claim(output)  # one writer per output, as the studio's own (fsutil.DestinationClaim)
    try:
        claim.acquire()
    except (LockHeld, LockContended) as exc:
        answer({"refused": "busy", "path": output, "holder": exc.holder if isinstance(exc, LockHeld) else ""})
        return
    remove_stale_partials(parent, PARTIAL, MARKER)  # what a stopped receive of this server left
    staging = staging_path(output, PARTIAL)  # within 255 bytes, whatever output's name
    os.mkdir(staging)
    published = False
    try:
        with open(os.path.join(staging, MARKER), "w", encoding="utf-8") as f:
            json.dump({"pid": os.getpid(), "host": socket.gethostname(), "target": output}, f)
        answer({"ready": staging})
        stdin = Input(idle)
        while True:
            record = stdin.line()
            if record.get("end"):
                break
            path = inside(staging, record["file"])
            folder = os.path.dirname(path)
            if not os.path.isdir(folder):
                os.makedirs(folder)
            with open(path, "xb") as f:
                stdin.copy_to(f, int(record["size"]))
                f.flush()
                os.fsync(f.fileno())  # each file on disk as it lands: the rename at the end waits for nothing
        for folder, _, _ in os.walk(staging):
            fsync_dir(folder)
        os.unlink(os.path.join(staging, MARKER))
        fsync_dir(staging)
        claim.release()  # before the rename: a receive killed after it leaves no claim beside the output
        if os.path.isdir(output) and not os.path.islink(output) and not os.listdir(output):
            os.rmdir(output)  # rename cannot replace a folder everywhere; it was empty
        if os.path.lexists(output):
            answer({"refused": "appeared", "path": output})
            return
        os.rename(staging, output)
        published = True
        fsync_dir(parent)
        answer({"done": output})
    except Stopped as exc:
        sys.stderr.write(f"rbln-studio: copy to {output} stopped ({exc}). Nothing was changed.\n")
        sys.exit(3)
    finally:
        if not published:
            shutil.rmtree(staging, ignore_errors=True)
        claim.release()


def files_of(folder):
    """[name, size] of every file below folder, hidden names skipped (the studio's lock, marker, staging)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith("."):
                path = os.path.join(dirpath, name)
                out.append([os.path.relpath(path, folder).replace(os.sep, "/"), os.path.getsize(path)])
    return out


def watch_client(lock):
    """End the program when the client leaves (stdin ends: a cancel, or the studio killed), giving the lock back
    first, so a stopped copy leaves the source folder as it was, without a lock file."""
    guard = threading.Lock()

    def watch():
        try:
            while os.read(0, CHUNK):
                pass
        except OSError:
            pass
        with guard:
            if lock is not None:
                lock.release()
            os._exit(130)

    threading.Thread(target=watch, daemon=True).start()
    return guard


def send(folder):
    if not os.path.isdir(folder):
        answer({"refused": "missing", "path": folder})
        return
    if not os.path.isfile(os.path.join(folder, CONFIG)) and not is_pipeline_folder(folder, CONFIG, INDEX_LIMIT):
        answer({"refused": "no_artifact", "path": folder})  # before any walk: ssh://HOST/ is not copied whole
        return
    # A read-only source cannot be changed by anyone through the studio, so it needs no lock (and cannot hold one).
    lock = FolderLock(folder, "copy to a bucket") if os.access(folder, os.W_OK) else None
    try:
        if lock is not None:
            lock.acquire()
    except LockHeld as exc:
        answer({"refused": "locked", "path": folder, "holder": exc.holder})
        return
    except LockContended:
        answer({"refused": "locked", "path": folder, "holder": "other writers"})
        return
    guard = watch_client(lock)
    try:
        files = files_of(folder)
        answer({"files": files})
        for name, size in files:
            answer({"file": name, "size": size})
            left = size
            with open(os.path.join(folder, name), "rb") as f:
                while left:
                    chunk = f.read(min(CHUNK, left))
                    if not chunk:
                        raise OSError(f"{name} shrank while it was sent")
                    answer({"blob": len(chunk)}, chunk)
                    left -= len(chunk)
        answer({"end": True})
    finally:
        with guard:
            if lock is not None:
                lock.release()


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if path == "~" or path.startswith("~/"):  # HOST/~/PATH: below the login folder, as the other programs
        path = os.path.expanduser(path)
    if mode == "check":
        answer(refusal(path) or {"ok": True})
    elif mode == "receive":
        receive(path, float(sys.argv[4]))
    else:
        send(path)


main()
