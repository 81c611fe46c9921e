"""Stand-in server interpreters: a python3 that reports an old version, and one on a slow disk."""

from __future__ import annotations

import sys
from pathlib import Path

# Runs like `python3 -c CODE ARGS...` with something changed before CODE starts.
WRAPPER = """#!{python}
import os, sys, time
{change}
code = sys.argv[2]
sys.argv = ["-c"] + sys.argv[3:]
exec(compile(code, "<string>", "exec"), {{"__name__": "__main__"}})
"""

OLD = "sys.version_info = (3, 5, 2, 'final', 0); sys.version = '3.5.2 (fake)'"
# Every folder listing takes 0.2 s: a scan of 20 folders runs for seconds, long enough to cut it off.
SLOW = "_scandir = os.scandir\nos.scandir = lambda *a: (time.sleep(0.2), _scandir(*a))[1]"


def make_python(folder: Path, name: str, change: str) -> Path:
    path = folder / name
    path.write_text(WRAPPER.format(python=sys.executable, change=change))
    path.chmod(0o755)
    return path


def can_hide_trees() -> bool:
    """Whether this machine lets a process have its own mount namespace (root, or unprivileged namespaces)."""
    import shutil
    import subprocess

    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run([unshare, "-m", "true"], capture_output=True)
    return probe.returncode == 0


def server_only_python(folder: Path, real: Path, seen_as: Path, unprivileged: bool = False) -> Path:
    """A server python3 that sees `real` at `seen_as` (a bind mount in a mount namespace of its own), where
    this process sees an empty folder: a remote scan that read a file here, not through the server, fails.

    unprivileged: it runs in a user namespace of its own too, where even root is held to permission bits."""
    import shlex
    import shutil

    seen_as.mkdir(parents=True, exist_ok=True)
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    run = f"unshare -U {python}" if unprivileged else python
    path = folder / "server-only-python3"
    path.write_text(
        "#!/bin/sh\n"
        f'exec unshare -m sh -c \'mount --bind "$0" "$1" && shift && exec {run} "$@"\' '
        f'{shlex.quote(str(real))} {shlex.quote(str(seen_as))} "$@"\n'
    )
    path.chmod(0o755)
    return path
