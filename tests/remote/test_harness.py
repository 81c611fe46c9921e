"""The test server itself: plain `ssh -F` reaches it, and its PATH has the fake rbln-smi and toolchain."""

from __future__ import annotations

import subprocess

from remote.conftest import HOST_ALIAS, SshServer


def test_plain_ssh_reaches_the_fake_npu_server(server: SshServer) -> None:
    done = subprocess.run(
        [
            "ssh",
            "-F",
            str(server.client_config),
            "-o",
            "BatchMode=yes",
            HOST_ALIAS,
            "rbln-smi; command -v optimum-rbln-cli",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert "| 0   | RBLN-CA12 | rbln0  | 0000:51:00.0 | 38C  | 43.9W  | P2   | 2.4GiB / 15.7GiB" in done.stdout
    assert "Context Information" in done.stdout and "vllm-serve" in done.stdout
    assert done.stdout.strip().endswith(str(server.toolchain.path_dir / "optimum-rbln-cli"))
