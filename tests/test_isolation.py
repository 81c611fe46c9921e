"""Process-wide state a run leaves behind is forgotten when asked, so tests pass in any order (pytest-randomly).

tests/conftest.py puts the environment, the servers' registry and the toolchain detection back after every test;
these check that what it calls really forgets.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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
