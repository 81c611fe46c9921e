"""How the desktop asks for servers to be reached, kept until remote/ loads: its registry reads it on first use.

Light on purpose (nothing of remote/ is imported): the window records its ssh_config at start-up, before the first
connection loads the SSH layer, so a server reached any other way first (a resize into a copy on a server, an artifact
opened by its URL) uses the user's choice too, not ~/.ssh/config.
"""

from __future__ import annotations

from pathlib import Path

_chosen: tuple[Path | None, str | None] | None = None


def choose(ssh_config: Path | None, python: str | None) -> None:
    """The ssh_config to use instead of ~/.ssh/config (None: ssh's own) and the servers' Python (None: as the CLI)."""
    global _chosen
    _chosen = (ssh_config, python)


def chosen() -> tuple[Path | None, str | None] | None:
    """What the app chose, or None when nothing did (the CLI: the environment decides)."""
    return _chosen


def forget() -> None:
    """Nothing chosen (tests)."""
    global _chosen
    _chosen = None
