"""rbln-studio-cli with ssh://HOST/PATH: scan, inspect, get, serving, devices, plan --on, against a real sshd."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from conftest import compile_artifact
from fakes.install import TINY_CA25, fake_compile

from remote.conftest import HOST_ALIAS, Run, SshServer, url
from remote.test_remote_scan import HOSTILE_NAME, tree_state

CA12_AVAILABLE = 16_877_879_296


def _without_path(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "path"}


def test_scan_over_ssh_matches_the_local_scan(remote_cli: Run, cr13_artifact: Path, ca25_artifact: Path) -> None:
    root = cr13_artifact.parent / "fleet"
    root.mkdir()
    shutil.move(cr13_artifact, root / "qwen3-8b-cr13")
    (root / "sub dir").mkdir()
    shutil.move(ca25_artifact, root / "sub dir" / HOSTILE_NAME)
    local = remote_cli("scan", root, "--json", "--no-cache")
    before = tree_state(root)
    remote = remote_cli("scan", url(root), "--json")
    assert remote.returncode == 0, remote.stderr
    local_rows, remote_rows = json.loads(local.stdout), json.loads(remote.stdout)
    assert len(remote_rows) == 2
    assert [r["path"] for r in remote_rows] == [url(r["path"]) for r in local_rows]
    assert [r["status"] for r in local_rows] == ["ok", "ok"]  # the full check's verdict, here and there
    assert [_without_path(r) for r in remote_rows] == [_without_path(r) for r in local_rows]
    assert tree_state(root) == before
    one = url(root / "qwen3-8b-cr13")
    text = remote_cli("scan", one)
    assert "qwen3-8b-cr13" in text.stdout and f"1 artifact(s) under {one}" in text.stderr


def test_inspect_get_serving_explore_over_ssh(remote_cli: Run, cr13_artifact: Path) -> None:
    before = tree_state(cr13_artifact)
    local = json.loads(remote_cli("inspect", cr13_artifact, "--json").stdout)
    remote = remote_cli("inspect", url(cr13_artifact), "--json")
    assert remote.returncode == 0, remote.stderr
    data = json.loads(remote.stdout)
    assert data["path"] == url(cr13_artifact)
    assert _without_path(data) == _without_path(local)
    assert data["kvcache_num_blocks"] == 21 and data["breakdown"] is not None
    text = remote_cli("inspect", url(cr13_artifact))
    assert text.stdout.startswith(f"{url(cr13_artifact)}  [ok]")
    assert remote_cli("get-kvcache-num-blocks", url(cr13_artifact)).stdout == "21\n"
    serving = json.loads(remote_cli("serving", url(cr13_artifact), "--json").stdout)
    assert serving["path"] == url(cr13_artifact)
    assert _without_path(serving) == _without_path(json.loads(remote_cli("serving", cr13_artifact, "--json").stdout))
    explore = json.loads(remote_cli("explore", url(cr13_artifact), "--json").stdout)
    assert _without_path(explore) == _without_path(json.loads(remote_cli("explore", cr13_artifact, "--json").stdout))
    assert tree_state(cr13_artifact) == before


def test_real_artifact_dram_comes_from_the_servers_rebel(
    remote_cli: Run, server: SshServer, tiny_model: Path, tmp_path: Path
) -> None:
    artifact = fake_compile(server.toolchain, tiny_model, tmp_path / "real art", *TINY_CA25, "--memory-budget", "0.5")
    here = json.loads(remote_cli("inspect", artifact, "--json", "--backend", "sim").stdout)
    assert here["breakdown"] is None, "without rebel here, the breakdown is unknown"
    remote = remote_cli("inspect", url(artifact), "--json")
    assert remote.returncode == 0, remote.stderr
    data = json.loads(remote.stdout)
    assert data["allocations_unknown_reason"] is None
    local_with_rebel = remote_cli(
        "inspect", artifact, "--json", env={"PATH": f"{server.toolchain.path_dir}:/usr/bin:/bin"}
    )
    assert data["breakdown"] == json.loads(local_with_rebel.stdout)["breakdown"] is not None
    assert data["graphs"] == json.loads(local_with_rebel.stdout)["graphs"]


def test_inspect_of_a_missing_artifact_is_one_clear_line(remote_cli: Run, tmp_path: Path) -> None:
    done = remote_cli("inspect", url(tmp_path / "nope"))
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: Cannot list {url(tmp_path / 'nope')}: No such file or directory."


def test_devices(remote_cli: Run, server: SshServer) -> None:
    done = remote_cli("devices", f"ssh://{HOST_ALIAS}", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["tool"] == "rbln-smi"
    assert [(d["npu"], d["name"], d["memory_total"]) for d in data["devices"]] == [
        (0, "RBLN-CA12", CA12_AVAILABLE),
        (1, "RBLN-CA12", CA12_AVAILABLE),
    ]
    assert data["devices"][0]["memory_used"] == int(2.4 * 2**30)
    assert data["devices"][0]["processes"] == [{"pid": 4242, "name": "vllm-serve", "memory": int(2.4 * 2**30)}]
    text = remote_cli("devices", f"ssh://{HOST_ALIAS}")
    assert "NPU 0 RBLN-CA12" in text.stdout and "pid 4242 vllm-serve" in text.stdout


def test_devices_falls_back_to_rbln_stat(remote_cli: Run, server: SshServer) -> None:
    (server.bin / "rbln-smi").rename(server.bin / "rbln-stat")
    try:
        data = json.loads(remote_cli("devices", f"ssh://{HOST_ALIAS}", "--json").stdout)
        assert data["tool"] == "rbln-stat" and len(data["devices"]) == 2
        (server.bin / "rbln-stat").rename(server.bin / "rbln-stat.off")
        done = remote_cli("devices", f"ssh://{HOST_ALIAS}")
        assert done.returncode == 1
        assert "has neither rbln-smi nor rbln-stat on its PATH" in done.stderr
    finally:
        for name in ("rbln-stat", "rbln-stat.off"):
            if (server.bin / name).exists():
                (server.bin / name).rename(server.bin / "rbln-smi")


def test_plan_on_server_uses_the_memory_free_now(
    remote_cli: Run, server: SshServer, tmp_path: Path, cr13_artifact: Path
) -> None:
    small = compile_artifact(
        tmp_path / "small ca12",
        model_id="Qwen/Qwen3-0.6B",
        npu="RBLN-CA12",
        batch_size=1,
        max_seq_len=8192,
        kvcache_partition_len=None,
        memory_budget=0.5,
    )
    need = sum(u["weights"] + u["workspace_and_other"] + u["kv_cache"] for u in _usages(remote_cli, small))
    fits = remote_cli("plan", "--on", f"ssh://{HOST_ALIAS}", url(small), "--json")
    assert fits.returncode == 0, fits.stdout + fits.stderr
    data = json.loads(fits.stdout)
    assert data["verdict"] == "fit"
    [npu] = data["npus"]
    assert npu["npu"] == 1, "the NPU with the most free memory"
    assert npu["need"] == need and npu["headroom"] == CA12_AVAILABLE - need

    busy = [{"name": "RBLN-CA12", "used": "14.5GiB", "total": "15.7GiB", "processes": []}] * 2
    server.devices.write_text(json.dumps(busy))
    full = remote_cli("plan", "--on", f"ssh://{HOST_ALIAS}", url(small))
    assert full.returncode == 1
    assert full.stdout.startswith(f"1 artifact(s) on {HOST_ALIAS} now: does not fit")
    assert "OVER by" in full.stdout

    other = remote_cli("plan", "--on", f"ssh://{HOST_ALIAS}", cr13_artifact, "--json")  # a local artifact
    assert other.returncode == 1
    assert json.loads(other.stdout)["problems"] == [f"qwen3-8b-cr13 needs 1 RBLN-CR13 NPU(s); {HOST_ALIAS} has none."]


def _usages(run: Run, artifact: Path) -> list[dict[str, int]]:
    data = json.loads(run("inspect", artifact, "--json").stdout)
    return list(data["breakdown"]["chiplets"])


def test_unknown_host_key_then_trust_host_with_its_fingerprint(
    remote_cli: Run, server: SshServer, cr13_artifact: Path, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    config = tmp_path / "ssh_config"
    config.write_text(server.client_config.read_text().replace(str(server.known_hosts), str(known)))
    env = {"RBLN_STUDIO_SSH_CONFIG": str(config)}
    refused = remote_cli("inspect", url(cr13_artifact), env=env)
    assert refused.returncode == 1 and "is not in" in refused.stderr and "trust-host" in refused.stderr
    fingerprint = subprocess.run(
        ["ssh-keygen", "-l", "-f", str(server.host_key_pub)], capture_output=True, text=True
    ).stdout.split()[1]
    assert fingerprint in refused.stderr
    wrong = remote_cli("trust-host", f"ssh://{HOST_ALIAS}", "--fingerprint", "SHA256:not-it", env=env)
    assert wrong.returncode == 1 and "Nothing was changed." in wrong.stderr and known.read_text() == ""
    no_tty = remote_cli("trust-host", f"ssh://{HOST_ALIAS}", env=env)
    assert no_tty.returncode == 1 and known.read_text() == ""
    trusted = remote_cli("trust-host", f"ssh://{HOST_ALIAS}", "--fingerprint", fingerprint, env=env)
    assert trusted.returncode == 0, trusted.stderr
    assert remote_cli("get-kvcache-num-blocks", url(cr13_artifact), env=env).stdout == "21\n"


def test_a_path_below_the_login_folder(remote_cli: Run, ca25_artifact: Path) -> None:
    import os
    import pwd
    import shutil
    import uuid

    name = f"rbln-studio-test-{uuid.uuid4().hex[:8]}"
    # The server is this machine: its login folder is this user's home as sshd finds it (the password database,
    # not $HOME, which a test run may point elsewhere).
    home = Path(pwd.getpwuid(os.getuid()).pw_dir) / name
    shutil.copytree(ca25_artifact, home / "art")
    try:
        scanned = remote_cli("scan", f"ssh://{HOST_ALIAS}/~/{name}", "--json")
        assert scanned.returncode == 0, scanned.stderr
        assert [r["path"] for r in json.loads(scanned.stdout)] == [url(home / "art")]  # its full path
        shown = remote_cli("inspect", f"ssh://{HOST_ALIAS}/~/{name}/art", "--json")
        assert shown.returncode == 0 and json.loads(shown.stdout)["status"] == "ok", shown.stderr
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_text_scan_of_several_servers_names_the_host_and_counts_no_failure_as_an_artifact(
    remote_cli: Run, cr13_artifact: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "no such folder"
    done = remote_cli("scan", url(cr13_artifact.parent), url(missing))
    assert done.returncode == 3, done.stderr  # the failed server's row is invalid, as documented
    title, row = done.stdout.splitlines()[:2]
    assert title.split()[:2] == ["Name", "Host"]
    assert row.split()[:2] == ["qwen3-8b-cr13", HOST_ALIAS]
    assert f"Cannot scan {url(missing)}" in done.stdout
    assert done.stderr.splitlines()[-1] == (
        f"1 artifact(s) under {url(cr13_artifact.parent)}, {url(missing)}; 1 could not be read"
    )
