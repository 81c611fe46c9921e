"""`devices` and `place` read through the Fleet Console's reader (places/fleet_sources): a server that a Prometheus
also scrapes is judged at Prometheus' peak with --window whether or not it is named with --on, and one node behind
two real Prometheus servers (scraping one exporter stand-in) is one row and one place."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from remote.conftest import HOST_ALIAS, SshServer, control_dir, server, ssh_server  # noqa: F401 (fixtures)

from prometheus.conftest import CR13, GIB, Monitoring
from prometheus.promserver import PASSWORD, USER, Prometheus, running_exporter, running_prometheus

Run = Callable[..., subprocess.CompletedProcess[str]]
# The SSH server as two RBLN-CR13 (the fake rbln-smi's table: rbln0, rbln1), nearly idle now.
IDLE_CR13 = [{"name": "RBLN-CR13", "used": "1.0GiB", "total": "140.0GiB", "processes": []} for _ in range(2)]


def _cr13_node(used: int) -> dict[str, object]:
    return {"family": "current", "devices": [{"card": "RBLN-CR13", "used": used, "total": CR13} for _ in range(2)]}


def test_a_server_is_judged_at_prometheus_peak_with_or_without_on(
    run_cli: Run,
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    cr13_artifact: Path,
    tmp_path: Path,
) -> None:
    """npu-test, read over SSH, is also scraped by a Prometheus whose last hour holds a peak that leaves 10 GiB:
    place --window says it does not fit, named with --on or not; without --window it fits (the tool's figure)."""
    env = {"RBLN_STUDIO_SSH_CONFIG": str(server.client_config), "XDG_RUNTIME_DIR": str(control_dir)}
    server.devices.write_text(json.dumps(IDLE_CR13))
    state = tmp_path / "exporter.json"
    high = CR13 - 10 * GIB
    state.write_text(json.dumps({"nodes": {HOST_ALIAS: _cr13_node(high)}}))
    with running_exporter(state) as gateway, running_prometheus(tmp_path / "p", gateway, [HOST_ALIAS]) as prom:
        monitoring = Monitoring(prom, gateway, state)
        monitoring.wait_used(HOST_ALIAS, high)
        monitoring.set_node(HOST_ALIAS, _cr13_node(GIB))
        monitoring.wait_used(HOST_ALIAS, GIB)
        where = ("--prometheus", prom.url, "--timeout", "30")

        answers = {}
        for name, args in {
            "on": ("--on", f"ssh://{HOST_ALIAS}", *where, "--window", "1h"),
            "alone": (*where, "--window", "1h"),
            "now": ("--on", f"ssh://{HOST_ALIAS}", *where),
        }.items():
            done = run_cli("place", cr13_artifact, *args, "--json", env=env)
            answers[name] = (done.returncode, json.loads(done.stdout or "{}"))
            assert done.returncode in (0, 1), done.stderr

        for name in ("on", "alone"):  # the same answer whether the server is named or only scraped
            code, answer = answers[name]
            assert code == 1, (name, answer)
            [placement] = answer["placements"]
            [blocked] = placement["blocked"]
            assert (blocked["block"], blocked["npus"][0]["memory_free"]) == ("free_dram", 10 * GIB), name
        assert answers["on"][1]["servers"] == [HOST_ALIAS]  # one node, the server's name
        code, answer = answers["now"]
        assert code == 0 and [o["host"] for o in answer["placements"][0]["options"]] == [HOST_ALIAS]

        devices = run_cli("devices", f"ssh://{HOST_ALIAS}", *where, "--window", "1h", "--json", env=env)
        [row] = json.loads(devices.stdout)
        assert (row["host"], row["form"], row["window"]) == (HOST_ALIAS, "text", "1h")  # the tool's reading
        assert [(d["memory_used"], d["memory_peak"]) for d in row["devices"]] == [(GIB, high), (GIB, high)]


def test_one_node_behind_two_prometheus_is_one_row_and_one_place(
    run_cli: Run, monitoring: Monitoring, guarded: Prometheus, cr13_artifact: Path, tmp_path: Path
) -> None:
    """legacy-1 is scraped by the session's Prometheus and by the one behind basic auth (an HA pair): one row
    naming the second, one place where the artifact fits."""
    config = tmp_path / "http.yml"  # the guarded server's credentials; the open one ignores them
    config.write_text(f"basic_auth:\n  username: {USER}\n  password: {PASSWORD}\n")
    where = (
        "--prometheus", monitoring.url, "--prometheus", guarded.url, "--prometheus-http-config", config,
        "--match", 'hostname="legacy-1"', "--timeout", "20",
    )  # fmt: skip
    done = run_cli("devices", *where, "--json")
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert (row["host"], row["source"]) == ("legacy-1", monitoring.url)
    assert [d["memory_used"] for d in row["devices"]] == [40 * GIB, 0]
    assert row["notes"] == [f"also scraped by Prometheus at {guarded.url}; shown once"]
    text = run_cli("devices", *where).stdout
    assert text.count("legacy-1: 2 NPU(s)") == 1 and PASSWORD not in text

    placed = run_cli("place", cr13_artifact, *where, "--window", "1h", "--json")
    assert placed.returncode == 0, placed.stderr
    answer = json.loads(placed.stdout)
    assert answer["servers"] == ["legacy-1"]
    [placement] = answer["placements"]
    assert [o["host"] for o in placement["options"]] == ["legacy-1"]
