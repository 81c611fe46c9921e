"""`devices --prometheus` and `place --prometheus` against a real Prometheus: the fleet as one table or one JSON,
with utilization, temperature and pods; a past peak inside --window changes place's answer; Prometheus and SSH
servers together in one answer; credentials never printed."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from remote.conftest import HOST_ALIAS, SshServer, control_dir, server, ssh_server  # noqa: F401 (fixtures)

from prometheus.conftest import CR13, GIB, NODES, Monitoring
from prometheus.promserver import PASSWORD, USER, Prometheus, running_exporter, running_prometheus
from prometheus.test_prometheus_reader import silent  # noqa: F401 (fixture)

Run = Callable[..., subprocess.CompletedProcess[str]]
# down-1's `up` has no hostname label: it is matched by its instance's host, as its exporter's series would be.
SOME = 'hostname=~"legacy-1|pods-1|down-1"'


def test_devices_of_the_fleet_as_one_table(run_cli: Run, monitoring: Monitoring) -> None:
    done = run_cli("devices", "--prometheus", monitoring.url, "--match", SOME, "--timeout", "20")
    assert done.returncode == 1, done.stderr  # a node could not be read: said by the exit status, a row for it
    out = done.stdout
    assert f"legacy-1: 2 NPU(s) (rbln-metrics-exporter via {monitoring.url}, bytes)" in out
    assert "NPU 0 RBLN-CR13  rbln0   used     40 GiB of    140 GiB, free    100 GiB  util  55.5%    47C" in out
    assert "      pod team-a/llm-0 (vllm)" in out
    assert "down-1:50051: FAILED: Prometheus" in out and "(up == 0, job rbln)" in out
    assert out.index("down-1:50051") < out.index("legacy-1") < out.index("pods-1")


def test_devices_json_rows_for_every_node(run_cli: Run, monitoring: Monitoring) -> None:
    done = run_cli("devices", "--prometheus", monitoring.url, "--match", SOME, "--json", "--timeout", "20")
    rows = {r["host"]: r for r in json.loads(done.stdout)}
    assert set(rows) == {"legacy-1", "pods-1", "down-1:50051"}
    legacy = rows["legacy-1"]
    assert (legacy["tool"], legacy["form"], legacy["source"], legacy["error"]) == (
        "rbln-metrics-exporter",
        "prometheus",
        monitoring.url,
        None,
    )
    first = legacy["devices"][0]
    assert (first["memory_used"], first["memory_total"], first["util"], first["temperature"]) == (
        40 * GIB,
        CR13,
        "55.5",
        47.0,
    )
    assert rows["pods-1"]["devices"][0]["processes"][0]["pod"] == "llm-0"
    assert rows["down-1:50051"]["devices"] == [] and "up == 0" in rows["down-1:50051"]["error"]


def test_a_past_peak_inside_the_window_changes_where_it_fits(
    run_cli: Run, monitoring: Monitoring, cr13_artifact: Path
) -> None:
    high = CR13 - 10 * GIB  # a neighbour's KV cache grew back to this, then shrank
    calm = NODES["peak-1"]
    monitoring.set_node("peak-1", {**calm, "devices": [{**d, "used": high} for d in calm["devices"]]})
    monitoring.wait_used("peak-1", high)
    monitoring.set_node("peak-1", calm)
    monitoring.wait_used("peak-1", GIB)
    where = ("--prometheus", monitoring.url, "--match", 'hostname="peak-1"', "--timeout", "20")

    now = run_cli("place", cr13_artifact, *where, "--json")
    assert now.returncode == 0, now.stdout + now.stderr
    [fits] = json.loads(now.stdout)["placements"]
    assert [o["host"] for o in fits["options"]] == ["peak-1"]

    peak = run_cli("place", cr13_artifact, *where, "--window", "10m", "--json")
    assert peak.returncode == 1, peak.stdout + peak.stderr
    answer = json.loads(peak.stdout)
    assert answer["window"] == "10m" and answer["prometheus"] == [monitoring.url]
    [blocked] = answer["placements"][0]["blocked"]
    assert (blocked["host"], blocked["block"]) == ("peak-1", "free_dram")
    assert blocked["npus"][0]["memory_free"] == 10 * GIB
    text = run_cli("place", cr13_artifact, *where, "--window", "10m")
    assert "judged at each NPU's peak over the last 10m" in text.stdout
    assert "x  peak-1: too little free DRAM: NPU 0 has 10 GiB free" in text.stdout

    devices = run_cli("devices", *where, "--window", "10m", "--json")
    [row] = json.loads(devices.stdout)
    assert row["window"] == "10m"
    assert [(d["memory_used"], d["memory_peak"]) for d in row["devices"]] == [(GIB, high), (GIB, high)]


def test_prometheus_and_ssh_servers_in_one_answer(
    run_cli: Run,
    monitoring: Monitoring,
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    cr13_artifact: Path,
) -> None:
    env = {"RBLN_STUDIO_SSH_CONFIG": str(server.client_config), "XDG_RUNTIME_DIR": str(control_dir)}
    where = ("--prometheus", monitoring.url, "--match", 'hostname="legacy-1"', "--timeout", "30")
    done = run_cli("devices", f"ssh://{HOST_ALIAS}", *where, "--json", env=env)
    assert done.returncode == 0, done.stderr
    ssh, prom = json.loads(done.stdout)
    assert (ssh["host"], ssh["devices"][0]["name"]) == (HOST_ALIAS, "RBLN-CA12")
    assert (prom["host"], prom["form"], prom["devices"][0]["memory_used"]) == ("legacy-1", "prometheus", 40 * GIB)

    placed = run_cli("place", cr13_artifact, "--on", f"ssh://{HOST_ALIAS}", *where, "--json", env=env)
    assert placed.returncode == 0, placed.stderr
    answer = json.loads(placed.stdout)
    assert answer["servers"] == [HOST_ALIAS, "legacy-1"]
    [p] = answer["placements"]
    assert [o["host"] for o in p["options"]] == ["legacy-1"]
    assert [(b["host"], b["block"]) for b in p["blocked"]] == [(HOST_ALIAS, "family")]


def test_a_node_seen_over_ssh_and_by_prometheus_is_one_row(
    run_cli: Run,
    server: SshServer,  # noqa: F811
    control_dir: Path,  # noqa: F811
    cr13_artifact: Path,
    tmp_path: Path,
) -> None:
    """The SSH server npu-test is also a node of a Prometheus (its exporter's hostname npu-test): devices lists it
    once, the tool's figures noting the Prometheus, and place counts it once; when the server cannot be read,
    Prometheus' reading stands in its row."""
    env = {"RBLN_STUDIO_SSH_CONFIG": str(server.client_config), "XDG_RUNTIME_DIR": str(control_dir)}
    devices = [{"card": "RBLN-CA12", "used": 2 * GIB, "total": 16 * GIB, "util": 12.5} for _ in range(2)]
    state = tmp_path / "exporter.json"
    state.write_text(json.dumps({"nodes": {HOST_ALIAS: {"family": "legacy", "devices": devices}}}))
    with running_exporter(state) as gateway, running_prometheus(tmp_path / "p", gateway, [HOST_ALIAS]) as prom:
        where = (f"ssh://{HOST_ALIAS}", "--prometheus", prom.url, "--timeout", "30")
        done = run_cli("devices", *where, "--json", env=env)
        assert done.returncode == 0, done.stderr
        [row] = json.loads(done.stdout)
        assert (row["host"], row["devices"][0]["name"]) == (HOST_ALIAS, "RBLN-CA12")  # the tool's reading
        assert row["devices"][0]["processes"][0]["name"] == "vllm-serve"
        assert row["notes"] == [f"also scraped by Prometheus at {prom.url}; shown once"]
        text = run_cli("devices", *where, env=env).stdout
        assert text.count(f"{HOST_ALIAS}:") == 1 and "note: also scraped by Prometheus" in text

        placed = run_cli("place", cr13_artifact, "--on", *where, "--json", env=env)
        assert json.loads(placed.stdout)["servers"] == [HOST_ALIAS], placed.stderr

        server.devices.write_text("not a device table")  # the NPU tool now fails on the server
        down = run_cli("devices", *where, "--json", env=env)
        [row] = json.loads(down.stdout)
        assert (row["form"], row["error"]) == ("prometheus", None)
        assert row["devices"][0]["memory_used"] == 2 * GIB
        assert row["notes"][0].startswith(f"{HOST_ALIAS} could not be read over SSH (")
        assert row["notes"][0].endswith(f"Prometheus at {prom.url} shown instead")


def test_credentials_are_used_and_never_printed(run_cli: Run, guarded: Prometheus, tmp_path: Path) -> None:
    address = guarded.url.removeprefix("http://")
    denied = run_cli("devices", "--prometheus", f"http://{USER}:wrong-secret@{address}", "--timeout", "20")
    assert denied.returncode == 1 and "wrong-secret" not in denied.stdout + denied.stderr
    assert f"error: Prometheus at {guarded.url} refused the credentials given (401 Unauthorized)" in denied.stderr
    config = tmp_path / "http.yml"
    config.write_text(f"basic_auth:\n  username: {USER}\n  password: {PASSWORD}\n")
    done = run_cli("devices", "--prometheus", guarded.url, "--prometheus-http-config", config, "--json")
    assert done.returncode == 0, done.stderr
    assert [r["host"] for r in json.loads(done.stdout)] == ["legacy-1"]
    assert PASSWORD not in done.stdout


def test_a_prometheus_that_never_answers_is_a_row_within_the_timeout(
    run_cli: Run,
    silent: str,  # noqa: F811
    monitoring: Monitoring,
) -> None:
    alone = run_cli("devices", "--prometheus", silent, "--timeout", "1")
    assert alone.returncode == 1
    assert f"error: Prometheus at {silent} did not answer within 1 s" in alone.stderr
    both = run_cli(
        "devices", "--prometheus", silent, "--prometheus", monitoring.url, "--match", 'hostname="legacy-1"',
        "--timeout", "2", "--json",
    )  # fmt: skip
    rows = json.loads(both.stdout)
    assert [r["host"] for r in rows] == [silent, "legacy-1"] and both.returncode == 1
    assert rows[0]["error"].startswith(f"Prometheus at {silent} did not answer within 2 s")


def test_flags_that_need_prometheus_or_are_wrong_are_said(run_cli: Run) -> None:
    alone = run_cli("devices", "ssh://npu-x", "--window", "1h")
    assert alone.returncode == 1
    assert "--window is for the nodes Prometheus knows: give --prometheus URL with it" in alone.stderr
    bad = run_cli("devices", "--prometheus", "http://127.0.0.1:9", "--window", "an hour")
    assert "--window 'an hour' is not a duration" in bad.stderr and bad.returncode == 1
    nothing = run_cli("devices")
    assert nothing.returncode == 2 and "give --prometheus URL" in nothing.stderr
