"""vllm-rbln's cache on a disk: its entries' files, the processes holding them, and their crash-safe removal.

Standard library only, Python 3.6 grammar: the studio runs it here and sends it to servers (on_server/vllm_cache.py).
An entry is `compiled_models/NAME/` or a mega-cache bundle `rbln/MODEL-HASH8/SIGNATURE/`. Nothing here follows a link:
a link inside an entry is listed (never entered) and removed as a link, a link that is the entry itself is never
removed by prune.
"""

import contextlib
import os
import pwd
import re
import shutil
import stat

from rbln_artifact_studio.core.portable.staging import pid_alive

COMPILED = "compiled_models"
MEGA = "rbln"
PRUNING_TAG = ".pruning-"
_MEGA_MODEL = re.compile(r".+-[0-9a-f]{8}$")
_MEGA_SIGNATURE = re.compile(r"[0-9a-f]{16}$")
ENTRY_NAME = re.compile(r".+_[0-9a-f]{16}$")
"""A compiled_models folder's name as vllm-rbln makes it: anything else there (a README, a user's folder) is no entry."""


def _owner(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _files(folder):
    """[[name below folder, size]] of every file and link below folder (links listed, never followed), newest mtime
    and atime, and the names of links pointing out of the entry."""
    files, newest, used, out, times = [], 0, 0, [], {}
    real = os.path.realpath(folder)
    for top, dirs, names in os.walk(folder):
        linked = [d for d in dirs if os.path.islink(os.path.join(top, d))]
        dirs[:] = [d for d in dirs if d not in linked]
        for name in names + linked:
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            rel = os.path.relpath(path, folder)
            if stat.S_ISLNK(st.st_mode):
                target = os.path.realpath(path)
                if target != real and not target.startswith(real + os.sep):
                    out.append(rel)
            else:
                times[rel] = [st.st_atime_ns, st.st_mtime_ns]
            files.append([rel, st.st_size])
            newest, used = max(newest, int(st.st_mtime)), max(used, int(st.st_atime))
    return files, newest, used, out, times


def _entry(root, area, name, config_name, marker):
    path = os.path.join(root, area, name)
    st = os.lstat(path)
    record = {"area": area, "name": name, "path": path, "owner": _owner(st.st_uid), "link": os.path.islink(path)}
    if record["link"]:
        record.update(files=[], size=0, modified=int(st.st_mtime), used=int(st.st_atime), links_out=[name])
        return record
    files, newest, used, out, times = _files(path)
    record.update(
        times=times,
        files=files,
        size=sum(size for _, size in files),
        modified=newest or int(st.st_mtime),
        used=used or int(st.st_atime),  # its files' use: listing the folder (as the studio does) moves its own
        links_out=out,
        marker=any(f == marker for f, _ in files),
    )
    config = os.path.join(path, config_name)
    if os.path.isfile(config) and not os.path.islink(config) and os.path.getsize(config) < (1 << 22):
        with open(config, "rb") as f:
            record["config"] = f.read().decode("utf-8", "replace")
    return record


def _visible(folder):
    try:
        return sorted(n for n in os.listdir(folder) if not n.startswith("."))
    except OSError:
        return []


def entry_names(root):
    """(area, name) of every entry of the cache at root."""
    compiled = os.path.join(root, COMPILED)
    out = [
        (COMPILED, n)
        for n in _visible(compiled)
        if ENTRY_NAME.match(n)
        and (os.path.isdir(os.path.join(compiled, n)) or os.path.islink(os.path.join(compiled, n)))
    ]
    for model in _visible(os.path.join(root, MEGA)):
        if _MEGA_MODEL.match(model) and os.path.isdir(os.path.join(root, MEGA, model)):
            out += [
                (MEGA, model + "/" + s) for s in _visible(os.path.join(root, MEGA, model)) if _MEGA_SIGNATURE.match(s)
            ]
    return out


def is_cache(root):
    """Whether root holds a cache's folders (compiled_models/ or rbln/)."""
    return os.path.isdir(os.path.join(root, COMPILED)) or os.path.isdir(os.path.join(root, MEGA))


def read_cache(root, config_name, marker):
    """One record per entry of the cache at root: its files, size, times, owner, config text, holders."""
    records = [_entry(root, area, name, config_name, marker) for area, name in entry_names(root)]
    held = holders([r["path"] for r in records if not r["link"]])
    for record in records:
        record["holders"] = held.get(record["path"], [])
    return records


def restore_used(root, times):
    """Put back the access times the studio's own reading moved: times is {"AREA/NAME/FILE": [atime_ns, mtime_ns]}
    as read_cache saw them. A file changed since (its mtime moved) or not ours to touch (EPERM) is left as it is.
    Without this a list or a dry run would make every entry "just used", and --older-than would select nothing."""
    for rel, (atime_ns, mtime_ns) in times.items():
        if rel.startswith("/") or ".." in rel.split("/"):
            continue
        path = os.path.join(root, rel)
        try:
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and st.st_mtime_ns == mtime_ns and st.st_atime_ns != atime_ns:
                os.utime(path, ns=(atime_ns, mtime_ns))
        except OSError:
            continue


def entry_times(records):
    """{"AREA/NAME/FILE": [atime_ns, mtime_ns]} of every file of the records: what restore_used puts back."""
    return dict(
        (r["area"] + "/" + r["name"] + "/" + rel, pair) for r in records for rel, pair in r.get("times", {}).items()
    )


def serve_processes():
    """[{"pid", "argv"}] of this machine's running `vllm serve` (or `python -m vllm.entrypoints…`), argv from the
    command's first word: what the studio reads the cache key of, as vllm-rbln does, to know what each one runs."""
    found, me = [], os.getpid()
    for pid_text in os.listdir("/proc"):
        if not pid_text.isdigit() or int(pid_text) == me:
            continue
        try:
            with open(os.path.join("/proc", pid_text, "cmdline"), "rb") as raw:
                argv = [a.decode("utf-8", "replace") for a in raw.read().split(b"\0") if a]
        except OSError:
            continue
        # The program itself must be vllm (run directly or by its interpreter), never a command that only names one
        # (`rbln-studio-cli vllm-cache lookup -- vllm serve …`, an editor, a shell's history).
        python = bool(argv) and os.path.basename(argv[0]).startswith("python")
        start = 1 if python else 0
        if (
            argv[start : start + 1]
            and os.path.basename(argv[start]) == "vllm"
            and argv[start + 1 : start + 2] == ["serve"]
        ):
            found.append({"pid": int(pid_text), "argv": ["vllm", *argv[start + 1 :]]})  # /usr/bin/vllm as vllm
        elif python and argv[1:2] == ["-m"] and argv[2:3] and argv[2].startswith("vllm.entrypoints"):
            found.append({"pid": int(pid_text), "argv": argv[3:]})
    return found


def _inside(path, folders):
    """The folders path lies in (each given as a real path)."""
    return [f for f in folders if path == f or path.startswith(f + os.sep)]


def holders(paths):
    """{path: [{"pid", "command", "why"}]}: the processes of this machine that hold a file below path open or mapped,
    work in it, or were started with it on their command line (processes this login may not read are not seen)."""
    real = dict((os.path.realpath(p), p) for p in paths)
    found = {}  # type: dict[str, list[dict[str, object]]]
    me = os.getpid()

    def hold(pid, command, folder, why):
        found.setdefault(real[folder], [])
        if not any(h["pid"] == pid for h in found[real[folder]]):
            found[real[folder]].append({"pid": pid, "command": command, "why": why})

    for pid_text in os.listdir("/proc") if real else []:
        if not pid_text.isdigit() or int(pid_text) == me:
            continue
        pid, base = int(pid_text), os.path.join("/proc", pid_text)
        try:
            with open(os.path.join(base, "cmdline"), "rb") as raw:
                argv = [a.decode("utf-8", "replace") for a in raw.read().split(b"\0") if a]
        except OSError:
            continue
        command = " ".join(argv)[:200]
        try:
            cwd = os.readlink(os.path.join(base, "cwd"))
        except OSError:
            cwd = None
        for folder in _inside(cwd, real) if cwd else []:
            hold(pid, command, folder, "works in it")
        for arg in argv:
            for value in (arg, arg.partition("=")[2]):
                if value.startswith("/") or (cwd and value and value[0] in ".~"):
                    where = os.path.realpath(os.path.join(cwd or "/", os.path.expanduser(value)))
                    for folder in _inside(where, real):
                        hold(pid, command, folder, "was started on it")
        try:
            fds = os.listdir(os.path.join(base, "fd"))
        except OSError:
            fds = []
        for fd in fds:
            try:
                target = os.readlink(os.path.join(base, "fd", fd))
            except OSError:
                continue
            for folder in _inside(target, real):
                hold(pid, command, folder, "has " + os.path.basename(target) + " open")
        try:
            with open(os.path.join(base, "maps")) as f:
                mapped = set(line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6)
        except (OSError, UnicodeDecodeError):
            mapped = set()
        for target in mapped:
            for folder in _inside(target, real):
                hold(pid, command, folder, "has " + os.path.basename(target) + " mapped")
    return found


def _finish_stale(parent):
    """Remove what a prune killed midway left in parent (its staging folders, whose pid is gone)."""
    for name in _visible_all(parent):
        if name.startswith(".") and PRUNING_TAG in name:
            pid = name.rpartition(PRUNING_TAG)[2].split("-", 1)[0]
            if pid.isdigit() and not pid_alive(int(pid)):
                shutil.rmtree(os.path.join(parent, name), ignore_errors=True)


def _visible_all(folder):
    try:
        return os.listdir(folder)
    except OSError:
        return []


def prune(root, names):
    """Remove the entries named "AREA/NAME" below root, each renamed to a hidden staging name first (a crash leaves
    no half-removed entry under its own name: vllm-rbln would take one for a hit), then deleted. One result per
    name: {"name", "removed": bool, "freed": bytes, "reason": why it was kept}. Never an entry a process holds, a
    link, or a path outside root."""
    real_root = os.path.realpath(root)
    results = []
    for text in names:
        area, _, name = text.partition("/")
        path = os.path.join(root, area, name)
        result = {"name": text, "removed": False, "freed": 0}
        results.append(result)
        named = ENTRY_NAME.match(name) if area == COMPILED else "/" in name
        if area not in (COMPILED, MEGA) or not named or ".." in name.split("/") or name.startswith("/"):
            result["reason"] = "not an entry of the cache"
            continue
        if os.path.islink(path):
            result["reason"] = "a link: prune never follows a link out of the cache"
            continue
        if not os.path.isdir(path):
            result["reason"] = "no longer there"
            continue
        real = os.path.realpath(path)
        if not real.startswith(real_root + os.sep):
            result["reason"] = "outside the cache root"
            continue
        held = holders([path]).get(path)
        if held:
            result["reason"] = "in use: pid {} {}".format(held[0]["pid"], held[0]["why"])
            continue
        parent, leaf = os.path.split(path)
        _finish_stale(parent)
        staged = os.path.join(parent, "." + leaf + PRUNING_TAG + f"{os.getpid()}-{os.urandom(4).hex()}")
        freed = sum(size for _, size in _files(path)[0])
        try:
            os.rename(path, staged)
            fd = os.open(parent, os.O_RDONLY)
            try:
                os.fsync(fd)  # the rename is what makes it no entry: durable before anything is deleted
            finally:
                os.close(fd)
            shutil.rmtree(staged)
        except OSError as exc:
            result["reason"] = f"could not remove it: {exc.strerror or exc}"
            continue
        result.update(removed=True, freed=freed)
        if area == MEGA and not _visible_all(parent):
            with contextlib.suppress(OSError):
                os.rmdir(parent)  # the model's folder, empty once its last bundle is gone
    return results
