"""What each process holding an NPU runs: its command line, working directory, and the arguments naming artifacts.

Arguments: the config file name an artifact folder holds (rbln_config.json), then one or more PIDs. Writes one
JSON line per pid, in order: {"pid", "argv": [...], "cwd": path or null, "folders": {argument: absolute folder}}
for each argument (or a flag's value after "=") that names a folder holding that file, relative ones from the
process's working directory, with "cwd_error" (why) when that directory cannot be read and "unreadable"
{argument: "path (why)"} for folders this login may not look into; or {"pid", "error": message} when the process
cannot be read (gone, not ours).
Reads /proc only; writes nothing.
"""

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


def main():
    for pid in PIDS:
        record = {"pid": int(pid)}  # type: dict[str, object]
        try:
            with open(f"/proc/{int(pid)}/cmdline", "rb") as f:
                raw = f.read()
        except (OSError, ValueError) as exc:
            record["error"] = getattr(exc, "strerror", None) or str(exc)
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
