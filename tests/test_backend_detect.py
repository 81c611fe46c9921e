"""Detection of the real toolchain: the simulator always, optimum-rbln-cli and rebel only where they work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import cli_env
from fakes.helpers import argv_runs
from fakes.install import FakeToolchain

from rbln_artifact_studio.backends import settings
from rbln_artifact_studio.backends.base import BackendInfo
from rbln_artifact_studio.backends.registry import detect_backends
from rbln_artifact_studio.backends.toolchain import interpreter_of, locate, optimum_status
from rbln_artifact_studio.core.errors import CancelledError
from rbln_artifact_studio.core.progress import CancelToken

pytest_plugins = ["fakes.plugin"]


def _by_name(infos: list[BackendInfo]) -> dict[str, BackendInfo]:
    return {info.name: info for info in infos}


def test_without_any_toolchain_only_the_simulator(no_toolchain: None) -> None:
    found = _by_name(detect_backends())
    assert list(found) == ["sim", "optimum", "rebel"]
    assert found["sim"].available
    assert not found["optimum"].available and "not found on PATH" in found["optimum"].detail
    assert "RBLN_STUDIO_OPTIMUM_CLI" in found["optimum"].detail
    assert not found["rebel"].available and "RBLN_STUDIO_TOOLCHAIN_PYTHON" in found["rebel"].detail


def test_the_tool_on_path_is_found_with_its_version_and_rebel_in_its_python(fake_optimum: FakeToolchain) -> None:
    found = _by_name(detect_backends())
    assert found["optimum"].available, found["optimum"].detail
    assert (found["optimum"].version, found["optimum"].path) == (
        "0.12.0",
        str(fake_optimum.path_dir / "optimum-rbln-cli"),
    )
    assert found["rebel"].available, found["rebel"].detail
    # rebel does not import in the studio's own Python; it does in the one the CLI's shebang names.
    assert (found["rebel"].version, found["rebel"].path) == ("0.9.2+fake", str(fake_optimum.python))


def test_a_broken_install_without_rebel_is_reported_as_such(
    no_toolchain: None, toolchain_without_rebel: FakeToolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{toolchain_without_rebel.path_dir}:{Path(sys.executable).parent}")
    found = _by_name(detect_backends())
    assert not found["optimum"].available
    assert "--version failed: ModuleNotFoundError: No module named 'rebel'" in found["optimum"].detail
    assert not found["rebel"].available and "import rebel failed" in found["rebel"].detail


def test_a_python_environment_named_by_the_env_var_finds_both(
    no_toolchain: None, toolchain: FakeToolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(settings.ENV_TOOLCHAIN_PYTHON, str(toolchain.root))  # the environment folder itself
    found = _by_name(detect_backends())
    assert found["optimum"].available and found["optimum"].path == str(toolchain.cli)
    assert "beside the configured Python" in found["optimum"].detail
    assert found["rebel"].available and found["rebel"].path == str(toolchain.python)


def test_the_env_var_wins_over_the_configured_settings(
    no_toolchain: None,
    toolchain: FakeToolchain,
    toolchain_without_rebel: FakeToolchain,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configured = settings.ToolchainSettings(toolchain_python=str(toolchain_without_rebel.python))
    assert locate(configured).python == toolchain_without_rebel.python
    assert not _by_name(detect_backends(toolchain=configured))["rebel"].available
    assert locate().python != toolchain_without_rebel.python  # configured for one call, not for the process
    monkeypatch.setenv(settings.ENV_TOOLCHAIN_PYTHON, str(toolchain.python))
    assert locate(configured).python == toolchain.python
    assert _by_name(detect_backends(toolchain=configured))["rebel"].available  # a new configuration is a new detection


def test_a_configured_cli_that_does_not_exist_says_so(
    no_toolchain: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(settings.ENV_OPTIMUM_CLI, str(tmp_path / "nowhere" / "optimum-rbln-cli"))
    optimum = _by_name(detect_backends())["optimum"]
    assert not optimum.available and "is not an executable file" in optimum.detail


def test_a_cli_that_hangs_on_version_is_not_available(
    no_toolchain: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = tmp_path / "optimum-rbln-cli"
    cli.write_text("#!/bin/sh\nexec sleep 60\n")
    cli.chmod(0o755)
    monkeypatch.setenv(settings.ENV_OPTIMUM_CLI, str(cli))
    monkeypatch.setenv(settings.ENV_CHECK_TIMEOUT, "0.3")
    optimum = _by_name(detect_backends())["optimum"]
    assert not optimum.available and "did not answer --version within 0.3 s" in optimum.detail


def test_a_cancelled_check_stops_the_tool_and_leaves_no_answer_behind(
    no_toolchain: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hang = tmp_path / "hang"
    hang.touch()
    cli = tmp_path / "optimum-rbln-cli"
    cli.write_text(f'#!/bin/sh\n[ -e "{hang}" ] && exec sleep 600\necho "optimum-rbln-cli 0.9.0"\n')
    cli.chmod(0o755)
    monkeypatch.setenv(settings.ENV_OPTIMUM_CLI, str(cli))
    # Twice pytest-timeout's 300 s: a detection that waited for the check's timeout instead of stopping it fails.
    monkeypatch.setenv(settings.ENV_CHECK_TIMEOUT, "600")
    cancel = CancelToken()
    threading.Timer(0.3, cancel.cancel).start()  # e.g. the window closing while detection runs
    with pytest.raises(CancelledError):
        detect_backends(cancel=cancel)
    hang.unlink()
    assert _by_name(detect_backends())["optimum"].available  # asked again, not "did not answer" from the cache


def test_a_cancelled_detection_does_not_wait_for_the_same_check_in_another_thread(
    no_toolchain: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started_marker = tmp_path / "started"
    cli = tmp_path / "optimum-rbln-cli"
    cli.write_text(f'#!/bin/sh\necho $$ > "{started_marker}"\nexec sleep 600\n')
    cli.chmod(0o755)
    monkeypatch.setenv(settings.ENV_OPTIMUM_CLI, str(cli))
    # Twice pytest-timeout's 300 s: the other thread's check ends only when killed below, so a cancelled detection
    # that waited for it never returns and fails the test.
    monkeypatch.setenv(settings.ENV_CHECK_TIMEOUT, "600")
    other = threading.Thread(target=optimum_status)  # e.g. a compile job asking whether the tool is there
    other.start()
    deadline = time.monotonic() + 10
    while not started_marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    cancel = CancelToken()
    threading.Timer(0.3, cancel.cancel).start()
    with pytest.raises(CancelledError):
        detect_backends(cancel=cancel)
    still_checking = other.is_alive()
    os.kill(int(started_marker.read_text()), signal.SIGKILL)  # the other thread's check ends now: nothing left
    other.join()
    assert still_checking, "the cancelled detection waited for the other thread's check"


def test_detection_is_cached_per_process_and_refreshable(
    fake_optimum: FakeToolchain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "argv.jsonl"
    monkeypatch.setenv("FAKE_OPTIMUM_ARGV_LOG", str(log))
    detect_backends()
    detect_backends()
    assert argv_runs(log) == [["--version"]]
    detect_backends(refresh=True)
    assert argv_runs(log) == [["--version"], ["--version"]]


def test_importing_the_backends_runs_nothing(fake_optimum: FakeToolchain, tmp_path: Path) -> None:
    log = tmp_path / "argv.jsonl"
    code = "import rbln_artifact_studio.cli.main, rbln_artifact_studio.backends.registry, rbln_artifact_studio.backends.optimum, rbln_artifact_studio.backends.toolchain"
    env = {**cli_env(), "FAKE_OPTIMUM_ARGV_LOG": str(log)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert not log.exists()


def _script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "optimum-rbln-cli"
    path.write_text(text)
    return path


def test_interpreter_from_each_kind_of_console_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert interpreter_of(_script(tmp_path, "#!/opt/venv/bin/python3.11\nimport sys\n")) == Path(
        "/opt/venv/bin/python3.11"
    )
    # pip's form for interpreter paths too long for a shebang line
    pip_sh = "#!/bin/sh\n'''exec' /very/long/path/venv/bin/python \"$0\" \"$@\"\n' '''\n"
    assert interpreter_of(_script(tmp_path, pip_sh)) == Path("/very/long/path/venv/bin/python")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(bindir))
    assert interpreter_of(_script(tmp_path, "#!/usr/bin/env -S python3 -u\n")) == bindir / "python3"
    assert interpreter_of(_script(tmp_path, "#!/usr/bin/env bash\nexec pyenv exec ...\n")) is None  # a shim
    assert interpreter_of(_script(tmp_path, "\x7fELF binary")) is None


def test_cli_backends_text_and_json(fake_optimum: FakeToolchain, run_cli) -> None:
    out = run_cli("backends")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:2] == ["sim", "available"]
    assert lines[1].split()[:3] == ["optimum", "available", "0.12.0"]
    assert lines[2].split()[:3] == ["rebel", "available", "0.9.2+fake"]
    data = json.loads(run_cli("backends", "--json").stdout)
    assert [(b["name"], b["available"]) for b in data] == [("sim", True), ("optimum", True), ("rebel", True)]
    assert data[2]["path"] == str(fake_optimum.python)


def test_cli_backends_without_the_toolchain(no_toolchain: None, run_cli) -> None:
    data = json.loads(run_cli("backends", "--json").stdout)
    assert [(b["name"], b["available"]) for b in data] == [("sim", True), ("optimum", False), ("rebel", False)]
