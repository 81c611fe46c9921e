"""The app's own folders come from one module (core/app_dirs.py), where they always were on Linux."""

from __future__ import annotations

from pathlib import Path

import pytest

from rbln_artifact_studio.core import app_dirs
from rbln_artifact_studio.core.fleet.scan_cache import ScanCache
from rbln_artifact_studio.remote.transport import default_control_dir


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A user with no XDG variables and none of the studio's overrides: the platform defaults apply."""
    for variable in (
        "RBLN_STUDIO_CONFIG_DIR",
        "RBLN_STUDIO_DATA_DIR",
        "RBLN_STUDIO_CACHE_DIR",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
    ):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_linux_users_keep_the_folders_they_had(home: Path) -> None:
    assert app_dirs.settings_file() == home / ".config" / "rbln-studio" / "rbln-studio.conf"
    assert app_dirs.legacy_settings_file() == home / ".config" / "RBLN Artifact Studio" / "rbln-studio.conf"
    assert app_dirs.demo_dir() == home / ".local" / "share" / "rbln-studio" / "demo-workspace"
    assert app_dirs.cache_dir() == home / ".cache" / "rbln-studio"
    assert ScanCache(home).path.parent == home / ".cache" / "rbln-studio"


def test_xdg_variables_and_the_studio_overrides_are_followed(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xc"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xd"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "xk"))
    assert app_dirs.config_dir() == home / "xc" / "rbln-studio"
    assert app_dirs.data_dir() == home / "xd" / "rbln-studio"
    assert app_dirs.cache_dir() == home / "xk" / "rbln-studio"
    monkeypatch.setenv("RBLN_STUDIO_CACHE_DIR", str(home / "scans"))
    monkeypatch.setenv("RBLN_STUDIO_CONFIG_DIR", str(home / "conf"))
    monkeypatch.setenv("RBLN_STUDIO_DATA_DIR", str(home / "data"))
    assert ScanCache(home).path.parent == home / "scans"
    assert app_dirs.settings_file() == home / "conf" / "rbln-studio.conf"
    assert app_dirs.demo_dir() == home / "data" / "demo-workspace"


def test_control_sockets_live_in_a_private_runtime_folder(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = home / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    folder = default_control_dir()
    assert folder == app_dirs.control_socket_dir() and folder.parent == runtime
    assert folder.stat().st_mode & 0o777 == 0o700
