"""What each process holding an NPU runs: its command line, working directory, and the arguments naming artifacts.

Arguments: the config file name an artifact folder holds (rbln_config.json), then one or more PIDs. Writes one
JSON line per pid, in order: {"pid", "argv": [...], "cwd": path or null, "folders": {argument: absolute folder}}
for each argument (or a flag's value after "=") that names a folder holding that file, relative ones from the
process's working directory, with "cwd_error" (why) when that directory cannot be read and "unreadable"
{argument: "path (why)"} for folders this login may not look into; or {"pid", "error": message} when the process
cannot be read (gone, not ours).
Reads /proc only; writes nothing.
"""

import errno
import json
import os
import sys

CONFIG = sys.argv[1]
PIDS = sys.argv[2:]


def emit(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def text(raw):
    return raw.decode("utf-8", "replace")


def folders(argv, cwd, unreadable):
    """The arguments that name artifact folders; those this login may not look into go to unreadable (why)."""
    found = {}
    for arg in argv[1:]:
        tokens = [arg]
        if "=" in arg:
            tokens.append(arg.split("=", 1)[1])
        for token in tokens:
            if not token or token in found:
                continue
            if os.path.isabs(token):
                path = token
            elif cwd is not None:
                path = os.path.join(cwd, token)
            else:
                continue
            try:
                if os.path.isfile(os.path.join(path, CONFIG)):
                    found[token] = os.path.normpath(path)
                else:
                    os.stat(os.path.join(path, CONFIG))  # why not: a missing file is no artifact, a denial is said
            except PermissionError as exc:
                unreadable[token] = f"{os.path.normpath(path)} ({exc.strerror})"
            except (OSError, ValueError):
                pass
    return found


def proc_hides_others():
    """The /proc mount's hidepid option when it hides other users' processes from this login (None: it does not)."""
    try:
        with open("/proc/self/mounts", encoding="utf-8") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return None
    options = [m[3] for m in mounts if len(m) > 3 and m[1] == "/proc" and m[2] == "proc"]
    if not options or os.geteuid() == 0:
        return None
    for option in options[-1].split(","):  # the last mount on /proc is the one seen
        if option.startswith("hidepid=") and option[len("hidepid=") :] not in ("0", "off"):
            return option
    return None


def why_unseen(exc):
    """Why a process the NPU tool lists cannot be read here, in words that say what to do."""
    number = getattr(exc, "errno", None)
    hidden = proc_hides_others() if number in (errno.ENOENT, errno.EACCES, errno.EPERM) else None
    if hidden is not None:
        return (
            f"/proc is mounted with {hidden}, which hides other users' processes from this login; "
            "connect as root or as the process's user to see its artifact"
        )
    if number == errno.ENOENT:
        return "no such process here: it has ended, or it runs in another PID namespace (a container)"
    return getattr(exc, "strerror", None) or str(exc)


def main():
    for pid in PIDS:
        record = {"pid": int(pid)}  # type: dict[str, object]
        try:
            with open(f"/proc/{int(pid)}/cmdline", "rb") as f:
                raw = f.read()
        except (OSError, ValueError) as exc:
            record["error"] = why_unseen(exc)
            emit(record)
            continue
        argv = [text(a) for a in raw.split(b"\0")]
        if argv and argv[-1] == "":
            argv.pop()
        try:
            cwd = os.readlink(f"/proc/{int(pid)}/cwd")
        except OSError as exc:
            cwd = None
            record["cwd_error"] = exc.strerror or str(exc)  # another user's process: its relative paths are unknown
        unreadable = {}  # type: dict[str, str]
        record.update(argv=argv, cwd=cwd, folders=folders(argv, cwd, unreadable))
        if unreadable:
            record["unreadable"] = unreadable
        emit(record)


main()
