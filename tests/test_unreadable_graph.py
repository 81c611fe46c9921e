"""An unreadable .rbln: resize says what inspect says (the file cannot be read), not that the real compiler wrote it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import cli_command, cli_env


def _held_to_permissions() -> bool:
    """Whether a user namespace is at hand: there even root is held to permission bits."""
    unshare = shutil.which("unshare")
    return unshare is not None and subprocess.run([unshare, "-U", "true"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not _held_to_permissions(), reason="needs `unshare -U` (a user namespace)")


def _run(*args: object) -> subprocess.CompletedProcess[str]:
    argv = ["unshare", "-U", *cli_command(), *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, env=cli_env(), timeout=120)


def test_resize_names_the_unreadable_file(cr13_artifact: Path, tmp_path: Path) -> None:
    (cr13_artifact / "prefill.rbln").chmod(0o200)  # writable, not readable
    said = _run("inspect", cr13_artifact)
    assert "prefill.rbln (cannot be read: Permission denied)" in said.stdout, said.stdout
    for extra in ([], ["--output-dir", tmp_path / "copy"]):
        done = _run("set-kvcache-num-blocks", cr13_artifact, "20", *extra)
        assert done.returncode == 1, done.stderr
        assert "prefill.rbln (cannot be read: Permission denied)" in done.stderr, done.stderr
        assert "real compiler" not in done.stderr and "optimum-rbln-cli" not in done.stderr
    assert not (tmp_path / "copy").exists()
