"""Every folder the studio keeps its own files in: settings, data, cache, control sockets, the demo workspace.

The one module that names them (the GUI, the CLI and the scan worker all ask here). platformdirs gives the
platform's answer, so on Linux they are where they always were: ~/.config/rbln-studio, ~/.local/share/rbln-studio,
~/.cache/rbln-studio, the log in ~/.local/state/rbln-studio/log (XDG_CONFIG_HOME, XDG_DATA_HOME,
XDG_CACHE_HOME, XDG_STATE_HOME respected). RBLN_STUDIO_CONFIG_DIR, RBLN_STUDIO_DATA_DIR, RBLN_STUDIO_CACHE_DIR and
RBLN_STUDIO_LOG_DIR name a folder outright (tests and benchmarks point them at a
throwaway one, so a run never touches the user's own).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import platformdirs

APP_DIR = "rbln-studio"
"""The folder name under each platform location; also the settings file's stem and the X11 window class."""

SETTINGS_FILE = f"{APP_DIR}.conf"
DEMO_FOLDER = "demo-workspace"
LEGACY_SETTINGS_FOLDER = "RBLN Artifact Studio"  # 0.1.0 set an organization name: settings went one folder deeper

CONFIG_ENV = "RBLN_STUDIO_CONFIG_DIR"
DATA_ENV = "RBLN_STUDIO_DATA_DIR"
CACHE_ENV = "RBLN_STUDIO_CACHE_DIR"
LOG_ENV = "RBLN_STUDIO_LOG_DIR"


def _dirs() -> platformdirs.PlatformDirs:
    # Made per call: XDG_* variables are read when asked, as Qt and ssh read them (a test may set them).
    # A folder named by its variable (a scan's cache, RBLN_STUDIO_CACHE_DIR) never needs it, and a scan must not
    # load it (tests/test_config_reader.py).
    # deferred: platformdirs (~10 ms), a third-party library only the platform's default folders need
    import platformdirs

    return platformdirs.PlatformDirs(APP_DIR, appauthor=False)


def _explicit(variable: str) -> Path | None:
    value = os.environ.get(variable)
    return Path(value) if value else None


def config_dir() -> Path:
    """Settings (and other small files the user would back up): ~/.config/rbln-studio on Linux."""
    return _explicit(CONFIG_ENV) or Path(_dirs().user_config_dir)


def settings_file() -> Path:
    """The settings file: ~/.config/rbln-studio/rbln-studio.conf on Linux (an INI file QSettings reads)."""
    return config_dir() / SETTINGS_FILE


def legacy_settings_file() -> Path:
    """Where 0.1.0 kept the settings: ~/.config/RBLN Artifact Studio/rbln-studio.conf."""
    return config_dir().parent / LEGACY_SETTINGS_FOLDER / SETTINGS_FILE


def data_dir() -> Path:
    """What the studio makes for the user to keep: ~/.local/share/rbln-studio on Linux."""
    return _explicit(DATA_ENV) or Path(_dirs().user_data_dir)


def demo_dir() -> Path:
    """Where `rbln-studio --demo` builds its workspace."""
    return data_dir() / DEMO_FOLDER


def cache_dir() -> Path:
    """What can be rebuilt at any time (scan caches): ~/.cache/rbln-studio on Linux."""
    return _explicit(CACHE_ENV) or Path(_dirs().user_cache_dir)


def log_dir() -> Path:
    """The desktop's log files: ~/.local/state/rbln-studio/log on Linux."""
    return _explicit(LOG_ENV) or Path(_dirs().user_log_dir)


def control_socket_dir() -> Path:
    """The folder for ssh's shared-connection sockets: $XDG_RUNTIME_DIR/rbln-studio-ssh-UID, else the temp folder's.

    Not platformdirs' user_runtime_dir: without XDG_RUNTIME_DIR it falls back to /tmp/runtime-UID, a folder
    another user could have made first, and warns; a socket path must also stay short (about 100 bytes).
    The caller makes the folder and checks that it is private (remote/transport.py).
    """
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base) / f"{APP_DIR}-ssh-{os.getuid()}"
