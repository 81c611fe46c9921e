"""Walk a folder on the server like the studio's scan and stream, per artifact, what a table row is made of.

Arguments: ROOT, then a JSON object of the studio's file-naming rules. Writes one JSON line per artifact
{"a": folder, "s": total size, "g": {graph: size}, "cz": N (the blob's first N bytes are rbln_config.json, zlib'd)
or "ce": [errno, message], "n": config.json's _name_or_path, "lt": the link's target when the artifact is a link
to a folder outside ROOT, "fl": [[name, size]] every file (a compiled part's in its subfolder as "part/name"),
"x": [[name, offset, length]] the pieces the studio's full check reads (configs whole; a simulator graph's
preamble and used header slots without trailing zeros), one after another and zlib'd as one, after the config in
the blob, "real": true when a graph was written by the real compiler (its check needs the server's rebel: a second
round trip), "nf": {name: what it is} for a `.rbln` name that is no regular file (a FIFO, a folder), "keep": N when
the studio is to keep this blob as blob N ("forget": 1 first: drop every blob kept so far), "same": N instead of a
blob when blob N holds the very bytes this one would (copies of one model: sent and checked once)},
{"f": path, "e": [errno, message], "do": "list" or "read"} for an entry that could not be read (it becomes a
failed row), {"i": message} for what is reported and skipped, and {"end": count} last. First of all, {"root": 1} when ROOT
is a folder, else {"nd": [errno, message]} alone.
The walk, the pipeline rule and the container's layout are the studio's own (core/portable, sent with this
program: remote/server.py assembles it), in a bare python3. Reads only; writes nothing.
"""

import io
import json
import os
import shutil
import subprocess
import sys
import threading
import zlib

from rbln_artifact_studio.core.portable.container import (
    MAGIC,
    PREAMBLE,
    PREAMBLE_SIZE,
    SLOT,
    declared_slot_size,
    slot_body_length,
    valid_slot_size,
)
from rbln_artifact_studio.core.portable.deflate import deflate
from rbln_artifact_studio.core.portable.files import not_a_file, read_small
from rbln_artifact_studio.core.portable.pipeline import PIPELINE_INDEX, is_pipeline_folder
from rbln_artifact_studio.core.portable.walk import VolumeVersions, volume_version, walk

ROOT = sys.argv[1]
if ROOT == "~" or ROOT.startswith("~/"):  # a server folder below the login folder (rows show its full path)
    ROOT = os.path.expanduser(ROOT)
RULES = json.loads(sys.argv[2])
CONFIG = RULES["config_name"]
MARKER = RULES["incomplete_marker"]
SKIP = set(RULES["skip_names"])
TAGS = RULES["internal_tags"]
MAX_BYTES = RULES["max_json_bytes"]
TEXTS = set(RULES["texts"])
KEEP_COUNT, KEEP_BYTES = RULES["keep"]  # blobs the studio keeps at most, and their raw bytes here
# Written in pieces of 32 KiB (each small write costs ssh a packet at both ends; a larger piece leaves the studio
# more rows to check after the last one arrives), yet never held back long: a thread sends what is written every
# FLUSH_EVERY seconds, so rows appear as the walk finds them.
OUT = io.BufferedWriter(io.FileIO(sys.stdout.fileno(), "wb", closefd=False), buffer_size=1 << 15)
FLUSH_EVERY = 0.05  # seconds
DONE = threading.Event()
CHILDREN = globals().setdefault("CHILDREN", [])  # the prelude's list: ended with this program


def internal(name):
    return name in SKIP or (name.startswith(".") and any(tag in name for tag in TAGS))


def text(data):
    return data.decode("utf-8", "surrogateescape")


NAMES = {}  # type: dict[str, str]


def name_text(name):
    """A file name as sent (text(os.fsencode(name))), remembered: a fleet's artifacts hold the same few names."""
    found = NAMES.get(name)
    if found is None:
        if len(NAMES) >= 4096:
            NAMES.clear()
        found = NAMES[name] = text(os.fsencode(name))
    return found


ZEROS = bytes(256)
PADDING = bytes(PREAMBLE_SIZE - PREAMBLE.size)  # a preamble past its fields, as the studio writes it


def unpadded(data):
    """data without its trailing zero bytes, as bytes.rstrip gives it; that goes a byte at a time (~20 us for a
    preamble's 4 KiB of padding), so whole runs of zeros are dropped first."""
    end = len(data)
    while end >= len(ZEROS) and data.endswith(ZEROS, 0, end):
        end -= len(ZEROS)
    return (data[:end] if end < len(data) else data).rstrip(b"\0")


def emit(record, blob=b""):
    """One JSON line; a blob (bytes) follows it raw, its length in the line's "blob"."""
    if blob:
        record["blob"] = len(blob)
    OUT.write(json.dumps(record).encode("ascii") + b"\n" + blob)


def flush_often():
    """Send what is written at least every FLUSH_EVERY seconds: a row found before a long step (a slow disk, a
    large folder, the server's own scan pausing) is not held back."""
    try:
        while not DONE.wait(FLUSH_EVERY):
            OUT.flush()
    except OSError:
        pass  # the client is gone: the prelude ends the program


def is_artifact(names, folder):
    names = set(names)
    if MARKER in names:
        return False
    return CONFIG in names or (PIPELINE_INDEX in names and is_pipeline_folder(folder, CONFIG, MAX_BYTES))


def listing(entries, top=True):
    """Total size, each graph's size and the newest file's mtime (ns); a compiled part's subfolder (a VLM's
    language_model/, a pipeline's unet/) counts towards the size, as in the local scan's listing. Raises OSError
    like it."""
    size, graphs, newest = 0, {}, 0
    for entry in entries:
        if internal(entry.name):
            continue
        if not entry.is_file():
            part = top and not entry.name.startswith(".") and entry.is_dir()
            if part and os.path.exists(os.path.join(entry.path, CONFIG)):
                with os.scandir(entry.path) as it:
                    part_size, _, part_newest = listing(list(it), top=False)
                size, newest = size + part_size, max(newest, part_newest)
            continue
        st = entry.stat()
        size += st.st_size
        newest = max(newest, st.st_mtime_ns)
        if top and entry.name.endswith(".rbln"):
            graphs[name_text(entry.name[: -len(".rbln")])] = st.st_size
    return size, graphs, newest


def failed(path, exc, action):
    emit({"f": text(os.fsencode(path)), "e": [exc.errno or 0, exc.strerror or str(exc)], "do": action})


def check_entries(entries):
    """(prefix, entry) of the folder's files and of its compiled parts' files ("language_model/")."""
    out = []
    for entry in entries:
        if internal(entry.name):
            continue
        if entry.is_file():
            out.append(("", entry))
        elif not entry.name.startswith(".") and entry.is_dir() and os.path.exists(os.path.join(entry.path, CONFIG)):
            with os.scandir(entry.path) as it:
                part = name_text(entry.name) + "/"
                out += [(part, e) for e in it if not internal(e.name) and e.is_file()]
    return out


def head_pieces(path):
    """A simulator graph's preamble and the used bytes of its two header slots, as (offset, bytes) without trailing
    zeros (what is not sent reads as zeros there: a preamble is mostly padding); None for a graph without the
    container's magic (the real compiler's, or damage the studio names)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        head = os.pread(fd, PREAMBLE_SIZE, 0)
        if not head.startswith(MAGIC):
            return None
        pieces = [(0, head)]
        slot_size = declared_slot_size(head)
        if valid_slot_size(slot_size):  # else a broken preamble: the check says so
            for offset in (PREAMBLE_SIZE, PREAMBLE_SIZE + slot_size):
                start = os.pread(fd, SLOT.size, offset)
                length = slot_body_length(start)
                pieces.append((offset, start + os.pread(fd, min(length, slot_size - SLOT.size), offset + SLOT.size)))
        # A preamble past its fields is zeros as written: one comparison, not a strip of its 4 KiB byte by byte.
        preamble = head[: PREAMBLE.size].rstrip(b"\0") if head.endswith(PADDING) else unpadded(head)
        stripped = [(0, preamble)] + [(offset, unpadded(data)) for offset, data in pieces[1:]]
        return [(offset, data) for offset, data in stripped if data]
    finally:
        os.close(fd)


def check_files(entries, record, model):
    """What the full check reads, for the studio to check the artifact without asking again (see the top): the
    pieces' bytes one after another (None when there are none). model: config.json as row() read it (its bytes or
    the OSError), not read again."""
    files, pieces, raw = [], [], []
    for prefix, entry in check_entries(entries):
        name = prefix + name_text(entry.name)
        try:
            files.append([name, entry.stat().st_size])
            if (entry.name in TEXTS and entry.name != CONFIG) or (prefix and entry.name == CONFIG):
                if not prefix and entry.name == "config.json":
                    if isinstance(model, OSError):
                        raise model
                    data = model
                else:
                    data = read_small(entry.path, MAX_BYTES)
                found = [(0, data)]  # whole, even empty: the check says what is wrong with it
            elif entry.name.endswith(".rbln"):
                found = head_pieces(entry.path)
                if found is None:
                    record["real"] = True
                    continue
            else:
                continue
        except OSError:
            record["real"] = True  # the check reads it there and says what is wrong
            continue
        for offset, data in found:
            pieces.append([name, offset, len(data)])
            raw.append(data)
    record["fl"] = files
    record["x"] = pieces
    return b"".join(raw) if raw else None


def not_files(entries):
    """{name: what it is} of each `.rbln` name that is no regular file (a FIFO, a folder, a link to nothing)."""
    out = {}
    for entry in entries:
        if not entry.name.endswith(".rbln") or internal(entry.name):
            continue
        try:
            if entry.is_file():
                continue
            mode = os.stat(entry.path).st_mode
        except FileNotFoundError:
            out[text(os.fsencode(entry.name))] = "a link to nothing"
            continue
        except OSError:
            continue
        what = not_a_file(mode)
        if what is not None:
            out[text(os.fsencode(entry.name))] = what
    return out


MODEL_NAMES = {}  # type: dict[bytes, str | None]


def model_name(data):
    """config.json's _name_or_path (None when it has none), parsed once for the same bytes: copies of a model."""
    if data in MODEL_NAMES:
        return MODEL_NAMES[data]
    name = None
    try:
        model = json.loads(data)
        if isinstance(model, dict) and isinstance(model.get("_name_or_path"), str) and model["_name_or_path"]:
            name = model["_name_or_path"]
    except (ValueError, RecursionError):
        pass
    if len(data) <= 1 << 16:  # a config.json is a few KB; a huge one is parsed each time, not kept
        if len(MODEL_NAMES) >= 256:
            MODEL_NAMES.clear()
        MODEL_NAMES[data] = name
    return name


def row(folder, entries, size, graphs, link_target, newest=0):
    """The artifact's record, its rbln_config.json's bytes (None when unreadable) and the check's pieces (None:
    none); packed() makes the blob when it is sent."""
    record = {"a": text(os.fsencode(folder)), "s": size, "g": graphs}
    odd = not_files(entries)
    if odd:
        record["nf"] = odd
    if newest:
        record["m"] = newest // 1000000000  # when it was compiled or last changed (the Modified column)
    if link_target is not None:
        record["lt"] = text(os.fsencode(link_target))
    config = None
    try:
        config = read_small(os.path.join(folder, CONFIG), MAX_BYTES)
    except OSError as exc:
        record["ce"] = [exc.errno or 0, exc.strerror or str(exc)]
    try:
        model_text = read_small(os.path.join(folder, "config.json"), MAX_BYTES)  # type: bytes | OSError
    except OSError as exc:
        model_text = exc  # the check's piece of it says so too
    if not isinstance(model_text, OSError):
        name = model_name(model_text)
        if name is not None:
            record["n"] = name
    pieces = None
    if config is not None or any(e.name == PIPELINE_INDEX for e in entries):  # a pipeline: its index and configs
        pieces = check_files(entries, record, model_text)
    return record, config, pieces


class Kept:
    """The blobs the studio keeps, by their bytes: a copy of a model already sent (the same config and header
    bytes) is named, not compressed and sent again, and the studio checks it once."""

    def __init__(self):
        self.blobs = {}  # (lengths, checksum) -> (config, pieces, number, config's compressed length)
        self.last = None  # the entry found or kept last: copies of a model lie side by side (no checksum then)
        self.size = 0
        self.count = 0

    def packed(self, record, config, pieces):
        """The blob that follows the record: rbln_config.json zlib'd ("cz": its length), then the pieces zlib'd as
        one; or none when a blob the studio keeps has the same bytes ("same")."""
        if config is None and pieces is None:
            return b""
        kept, key = self.last, None
        if kept is None or kept[0] != config or kept[1] != pieces:  # bytes compared: ~1 us for a config
            key = (
                -1 if config is None else len(config),
                -1 if pieces is None else len(pieces),
                zlib.adler32(pieces or b"", zlib.adler32(config or b"")),
            )
            kept = self.blobs.get(key)
            if kept is not None and (kept[0] != config or kept[1] != pieces):
                kept = None  # the same checksum, other bytes: sent, and kept in its place
        if kept is not None:
            self.last = kept
            record["same"] = kept[2]
            if kept[3] is not None:
                record["cz"] = kept[3]
            return b""
        # Compressed and sent raw after the line: a config is tens of KB of repetitive JSON.
        packed = deflate(config) if config is not None else b""
        if config is not None:
            record["cz"] = len(packed)  # its length: the check's pieces follow it in the blob
        if pieces is not None:
            packed += deflate(pieces)
        size = len(config or b"") + len(pieces or b"")
        if size <= KEEP_BYTES:
            if len(self.blobs) >= KEEP_COUNT or self.size + size > KEEP_BYTES:
                self.blobs.clear()  # the studio forgets them too: a fleet of many models keeps the latest
                self.size = 0
                record["forget"] = 1
            self.last = self.blobs[key] = (config, pieces, self.count, record.get("cz"))
            self.size += size
            record["keep"] = self.count
            self.count += 1
        return packed


KEPT = Kept()


def issue(path, message):
    emit({"i": text(os.fsencode(message))})  # the message names paths as the file system gave them


def read_row(found):
    """row()'s record, config and pieces, or the OSError its listing failed with (the caller sends a failed row)."""
    try:
        size, graphs, newest = listing(found.entries)
    except OSError as exc:
        return exc
    return row(found.folder, found.entries, size, graphs, found.link_target, newest)


def send(found, record):
    if found.entries is None:
        failed(found.folder, found.error, found.action)
    elif isinstance(record, OSError):
        failed(found.folder, record, "list")
    else:
        record, config, pieces = record
        emit(record, KEPT.packed(record, config, pieces))


def one_version(found, versions):
    """A Kubernetes volume's row read while one version was current: read again when its `..data` was swapped
    under it (its files could come from both), noted with its version to say which rows come from which."""
    version = volume_version(found.volume)
    record = None
    for _ in range(3):
        record = read_row(found) if found.entries is not None else None
        now = volume_version(found.volume)
        if now == version:
            break
        version = now
        try:
            with os.scandir(found.folder) as it:
                found = found._replace(entries=list(it))
        except OSError as exc:
            found = found._replace(entries=None, error=exc, action="list")
    send(found, record)
    versions.note(found.volume, version, found.folder)


def scan_walk(root):
    """The local scan's walk (core/portable/walk.py) with the server's rules: a row per artifact, a failed row per
    entry that could not be read, and the count last."""
    count = 0
    versions = VolumeVersions()
    for found in walk(root, is_artifact, issue):
        count += 1
        if found.volume is not None:
            one_version(found, versions)
        else:
            send(found, read_row(found) if found.entries is not None else None)
    for message in versions.messages():
        issue(root, message)
    emit({"end": count})


def studio_scan(cli):
    """The server's own rbln-studio-cli (no cache: nothing written); False when it cannot do it."""
    proc = subprocess.Popen(
        [cli, "scan", "--no-cache", "--format", "json", ROOT], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    CHILDREN.append(proc)
    assert proc.stdout is not None and proc.stderr is not None
    errors = proc.stderr
    warnings = []  # type: list[bytes]
    reader = threading.Thread(target=lambda: warnings.extend(errors), daemon=True)
    reader.start()
    count = 0
    for line in proc.stdout:
        line = line.strip().rstrip(b",")
        if line.startswith(b'{"incomplete"'):  # it stopped early: no row; its error output says why
            continue
        if line.startswith(b"{"):
            OUT.write(b'{"row": ' + line + b"}\n")
            count += 1
    proc.wait()
    reader.join()
    if proc.returncode != 0 and count == 0:
        return False
    for warning in warnings:
        message = text(warning.strip())
        emit({"i": message[len("warning: ") :] if message.startswith("warning: ") else message})
    emit({"end": count})
    return True


def root_is_folder(root):
    """Whether root is a folder to walk, said first: {"root": 1}, or {"nd": [errno, message]} and nothing else
    (a missing path or a file is no folder of artifacts, as the local scan refuses it)."""
    if os.path.isdir(root):
        emit({"root": 1})
        return True
    try:
        os.stat(root)
        code, message = 20, "Not a directory"  # ENOTDIR: a file, or anything else that is no folder
    except OSError as exc:
        code, message = exc.errno or 0, exc.strerror or str(exc)
    emit({"nd": [code, message]})
    return False


FLUSHER = threading.Thread(target=flush_often, daemon=True)
FLUSHER.start()
try:
    if root_is_folder(ROOT or "."):
        STUDIO = shutil.which("rbln-studio-cli")
        if not (STUDIO and studio_scan(STUDIO)):
            scan_walk(ROOT or ".")
finally:
    DONE.set()
    FLUSHER.join()  # before the last flush: a thread still flushing at exit could hold the writer's lock
    OUT.flush()
# Everything is sent and nothing else runs: end without the interpreter's teardown, ~7 ms the studio would wait for
# the answer's end (its exit status) after the last row.
sys.stderr.flush()
os._exit(0)
