"""Staging folders a killed writer left behind, found and removed the same way here and on a server.

A staging folder is hidden, carries a tag and its writer's pid in its name, and holds a marker file naming the
writer's host and pid until it is published. Standard library only: server programs are sent with this module.
"""

import json
import os
import shutil

NAME_MAX = 255  # bytes in one name, on every file system a server's artifacts live on


def hidden_sibling_name(name: str, tag: str) -> str:
    """`.NAME{tag}PID-TOKEN`, this process's temp or staging name beside NAME; a NAME too long to take the suffix
    is cut, on a character, and a hash of it added, so every name that is legal is also one that can be staged (a
    255-byte output name failed on a server with "File name too long")."""
    suffix = f"{tag}{os.getpid()}-{os.urandom(4).hex()}"
    whole = f".{name}{suffix}"
    if len(os.fsencode(whole)) <= NAME_MAX:
        return whole
    import hashlib  # a name too long to stage: rare, and hashlib loads OpenSSL

    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:8]
    room = NAME_MAX - len(os.fsencode(f".~{digest}{suffix}"))
    kept = os.fsencode(name)[:room].decode("utf-8", "ignore")  # cut on a character, never inside one
    return f".{kept}~{digest}{suffix}"


def staging_path(final: str, partial_tag: str) -> str:
    """A hidden staging folder's path beside final, named as the studio names its own here."""
    parent, name = os.path.split(os.path.abspath(final))
    return os.path.join(parent, hidden_sibling_name(name, partial_tag))


def pid_alive(pid: int) -> bool:
    """Whether a process of this host with that pid still runs (one we may not signal counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_partials(folder: "str | os.PathLike[str]", partial_tag: str, marker_name: str) -> None:
    """Delete the staging folders in folder whose writer, a process of this host, is gone."""
    import socket  # here, not at import: the desktop imports the storage layer before its first paint

    host = socket.gethostname()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(".") and partial_tag in entry.name and entry.is_dir(follow_symlinks=False)):
            continue
        try:
            with open(os.path.join(entry.path, marker_name), encoding="utf-8") as f:
                marker = json.load(f)
            stale = marker.get("host") == host and not pid_alive(int(marker["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            # No marker: the folder was about to be renamed into place when its writer died.
            pid = entry.name.rpartition(partial_tag)[2].split("-", 1)[0]
            stale = pid.isdigit() and not pid_alive(int(pid))
        if stale:
            shutil.rmtree(entry.path, ignore_errors=True)
