"""The hosts an ssh_config names (its `Host` entries without wildcards), as Connect offers them; and which file."""

from __future__ import annotations

import glob
import os
import re
import shlex
from pathlib import Path

ENV_SSH_CONFIG = "RBLN_STUDIO_SSH_CONFIG"  # an ssh_config to use instead of ~/.ssh/config (like ssh -F)
MAX_INCLUDES = 16  # ssh's own limit on Include depth
PATTERN_CHARS = frozenset("*?!")
_LINE = re.compile(r"^\s*(?P<key>[A-Za-z]+)\s*(?:=\s*|\s+)(?P<rest>.*)$")


def user_config() -> Path:
    return Path.home() / ".ssh" / "config"


def chosen_config(setting: str = "") -> Path | None:
    """The ssh_config the studio uses: RBLN_STUDIO_SSH_CONFIG (as the CLI), else the one set in Preferences, else
    None (ssh's own ~/.ssh/config)."""
    text = os.environ.get(ENV_SSH_CONFIG, "").strip() or setting.strip()
    return Path(text).expanduser() if text else None


def _words(line: str) -> tuple[str, list[str]]:
    """A line's keyword (lower case) and its values: `Host a b`, `Host=a`, quoted values kept whole."""
    found = _LINE.match(line)
    if found is None:
        return "", []
    try:
        values = shlex.split(found["rest"], comments=True)
    except ValueError:  # an unbalanced quote: ssh would refuse the file; offer its words anyway
        values = found["rest"].split()
    return found["key"].lower(), values


def _hosts(path: Path, seen: set[Path], depth: int) -> list[str]:
    if depth > MAX_INCLUDES or path in seen:
        return []
    seen.add(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []  # an Include that names nothing, an unreadable file: ssh skips it too
    out: list[str] = []
    for line in text.splitlines():
        key, values = _words(line)
        if key == "host":
            out += [v for v in values if not PATTERN_CHARS & set(v)]
        elif key == "include":
            for value in values:
                # A relative Include is relative to ~/.ssh for a user's config (ssh_config(5)).
                pattern = os.path.expanduser(value)
                if not os.path.isabs(pattern):
                    pattern = str(Path.home() / ".ssh" / pattern)
                for name in sorted(glob.glob(pattern)):
                    out += _hosts(Path(name), seen, depth + 1)
    return out


def config_hosts(path: Path | None = None) -> list[str]:
    """The hosts named by `Host` lines of the ssh_config (and the files it includes), in order, each once; patterns
    (`*`, `?`, `!`) left out; [] when there is no such file."""
    return list(dict.fromkeys(_hosts(path or user_config(), set(), 0)))
