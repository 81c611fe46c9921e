"""Process-wide state a run leaves behind is forgotten when asked, so tests pass in any order (pytest-randomly).

tests/conftest.py puts the environment, the servers' registry and the toolchain detection back after every test;
these check that what it calls really forgets.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import restore_environment

from rbln_artifact_studio.backends.toolchain import clear_cache
from rbln_artifact_studio.core.model import upstream
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.transport import SshConnection, SshOptions


def test_detecting_again_forgets_the_version_the_last_detection_found() -> None:
    """A fake toolchain's version, noted by one test's detection, no longer judges the next test's artifacts."""
    newer = {"optimum_rbln_version": upstream.UPSTREAM_VERSION}
    upstream.note_installed_version("0.11.2")
    assert upstream.version_warning(newer) is not None
    clear_cache()
    assert upstream.version_warning(newer) is None


def test_a_forgotten_registry_reads_the_environment_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A test that configured the registry for its own sshd leaves nothing for the next: the environment decides."""
    registry.configure(SshOptions(config_file=tmp_path / "that-tests-config"), python="python3.9")
    monkeypatch.setenv(registry.ENV_SSH_CONFIG, str(tmp_path / "ssh_config"))
    monkeypatch.setenv("RBLN_STUDIO_REMOTE_PYTHON", "/opt/python3.12/bin/python3")
    registry.forget()
    server = registry.server("npu-7")
    assert isinstance(server.transport, SshConnection)
    assert server.transport.options.config_file == tmp_path / "ssh_config"
    assert server.python == "/opt/python3.12/bin/python3"


def test_the_environment_put_back_is_written_only_where_a_test_changed_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rewriting C's environment while a Qt thread starts (each reads QT_NO_GLIB there) crashed the whole run: a
    test that changed nothing gets nothing written; one changed and one left behind are one write each."""
    monkeypatch.setenv("RBLN_STUDIO_ISOLATION_KEPT", "before")
    saved = dict(os.environ)
    written: list[str] = []
    put, unset = os.putenv, os.unsetenv

    def putenv(name: bytes, value: bytes) -> None:
        written.append(f"set {os.fsdecode(name)}")
        put(name, value)

    def unsetenv(name: bytes) -> None:
        written.append(f"unset {os.fsdecode(name)}")
        unset(name)

    monkeypatch.setattr(os, "putenv", putenv)  # what os.environ calls, by these names
    monkeypatch.setattr(os, "unsetenv", unsetenv)
    os.environ["PYTEST_CURRENT_TEST"] = f"{os.environ['PYTEST_CURRENT_TEST']} (another phase)"  # pytest's, always new
    written.clear()
    restore_environment(saved)
    assert written == []
    os.environ["RBLN_STUDIO_ISOLATION_KEPT"] = "changed"
    os.environ["RBLN_STUDIO_ISOLATION_LEFT"] = "1"
    written.clear()
    restore_environment(saved)
    assert sorted(written) == ["set RBLN_STUDIO_ISOLATION_KEPT", "unset RBLN_STUDIO_ISOLATION_LEFT"]
    assert os.environ["RBLN_STUDIO_ISOLATION_KEPT"] == "before"
    assert "RBLN_STUDIO_ISOLATION_LEFT" not in os.environ
