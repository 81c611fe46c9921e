"""What a studio program on a server printed when it failed, as one line saying what happened and what to do: a
Python traceback becomes its last line in words, never `File "<rbln-studio>", line …` fragments."""

from __future__ import annotations

import errno
import re

_TRACE = re.compile(r'^(Traceback \(most recent call last\):|File ".*", line \d+|\^[\^~ ]*$)')
_OS_ERROR = re.compile(r"^(?:[\w.]+\.)?\w*Error: \[Errno (?P<code>\d+)\] (?P<reason>.+?)(?:: (?P<path>'.*'))?$")
# What to do about what the server's file system said, by errno: the reason it gave comes first.
WHAT_TO_DO = {
    errno.ENOSPC: "the server's disk is full; free space there (df -h on the server) and try again",
    errno.EDQUOT: "your disk quota on the server is used up; free space there and try again",
    errno.ELOOP: "a symbolic link there leads back to itself; remove the link, or point it at a file, and try again",
    errno.ENAMETOOLONG: "a name there is too long for the server's file system; give a shorter one",
    errno.EACCES: "the account the studio logs in as may not do this there; fix the folder's permissions",
    errno.EPERM: "the account the studio logs in as may not do this there; fix the folder's permissions",
    errno.EROFS: "that file system is read-only on the server; choose a folder that can be written",
    errno.EIO: "the server's disk could not be read or written; check it there (dmesg) before trying again",
}


def server_said(stderr: str, fallback: str) -> str:
    """One line for a failed program's stderr: a traceback's exception in words (what to do, for an OSError the
    file system gave), else the last lines it printed; fallback when it printed nothing."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    if not any(_TRACE.match(line) for line in lines):
        return " ".join(lines[-3:]) or fallback
    said = [line for line in lines if not _TRACE.match(line)]
    return in_words(said[-1]) if said else fallback


def in_words(exception: str) -> str:
    """An exception's last line (`OSError: [Errno 28] …`) as what happened and what to do."""
    found = _OS_ERROR.match(exception)
    if found is None:
        return f"the studio's program there stopped on {exception}; try again, and report it if it stays"
    code, reason, path = int(found["code"]), found["reason"], found["path"]
    where = f" ({path.strip(chr(39))})" if path else ""
    what = WHAT_TO_DO.get(code)
    return f"{reason}{where}; {what}" if what else f"{reason}{where}"
