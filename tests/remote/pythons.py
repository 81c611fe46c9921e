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
