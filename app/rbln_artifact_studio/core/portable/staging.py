"""Staging folders a killed writer left behind, found and removed the same way here and on a server.

A staging folder is hidden, carries a tag and its writer's pid in its name, and holds a marker file naming the
writer's host and pid until it is published. Standard library only: server programs are sent with this module.
"""

import json
import os
import shutil


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
