"""Staging folders a killed writer left behind, found and removed the same way here and on a server.

A staging folder is hidden, carries a tag and its writer's pid in its name, and holds a marker file naming the
writer's host and pid until it is published. Standard library only: server programs are sent with this module.
"""

import json
import os
import shutil

NAME_MAX = 255  # bytes in one name, on every file system a server's artifacts live on


def host_name() -> str:
    """This host's name as markers and lock files record it: what socket.gethostname() says on POSIX (the kernel's
    node name), without loading socket (a scan imports this module and never writes a marker)."""
    return os.uname().nodename


def name_digest(name: str, length: int) -> str:
    """The first length hex digits of name's SHA-256: what stands for a name too long to take a tag."""
    # A scan imports this module and must not load OpenSSL (tests/test_config_reader.py).
    # deferred: hashlib loads OpenSSL; only a name too long to take a tag needs it
    import hashlib

    return hashlib.sha256(os.fsencode(name)).hexdigest()[:length]


def claim_name(name: str, tag: str) -> str:
    """`.NAME{tag}`, the claim file beside a destination NAME; `.~DIGEST{tag}` when that name would be too long.
    The same here and on a server (on_server/transfer.py), so both writers take the one claim."""
    whole = "." + name + tag
    if len(os.fsencode(whole)) <= NAME_MAX:
        return whole
    return ".~" + name_digest(name, 16) + tag


def hidden_sibling_name(name: str, tag: str) -> str:
    """`.NAME{tag}PID-TOKEN`, this process's temp or staging name beside NAME; a NAME too long to take the suffix
    is cut, on a character, and a hash of it added, so every name that is legal is also one that can be staged (a
    255-byte output name failed on a server with "File name too long")."""
    suffix = f"{tag}{os.getpid()}-{os.urandom(4).hex()}"
    whole = f".{name}{suffix}"
    if len(os.fsencode(whole)) <= NAME_MAX:
        return whole
    digest = name_digest(name, 8)
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
    host = host_name()
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
