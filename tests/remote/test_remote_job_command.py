"""A remote job's log shows its command shell-quoted: pasted into a shell, it runs that command and nothing else."""

from __future__ import annotations

import shlex
from pathlib import Path

from fakes.install import TINY_CA25, fake_compile

from remote.conftest import Run, SshServer, url


def test_the_echoed_command_is_quoted_for_a_shell(
    remote_cli: Run, server: SshServer, tiny_model: Path, tmp_path: Path
) -> None:
    plain = fake_compile(server.toolchain, tiny_model, tmp_path / "srv" / "real", *TINY_CA25, "--memory-budget", "0.5")
    hostile = plain.rename(plain.parent / "sp ace $(touch x)")
    done = remote_cli("set-kvcache-num-blocks", url(hostile), "12")
    assert done.returncode == 0, done.stderr
    [echoed] = [line for line in done.stderr.splitlines() if line.lstrip().startswith("$ ")]
    argv = shlex.split(echoed.lstrip()[2:])
    assert any(arg.startswith(str(hostile.parent / "sp ace $(touch x)")) for arg in argv), echoed
