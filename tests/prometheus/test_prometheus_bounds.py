"""Prometheus read as Prometheus means it, and its figures held to an NPU's bounds: totals no NPU of the product has,
a peak that survives the exporter's switch of names inside the window, a partial answer's warnings, the server's
clock rather than this computer's, and an answer too large to parse (a gzip bomb) ended within --timeout, in
bounded memory, and by SIGTERM. Against a real Prometheus where it can say it, else the crafted-answer stand-in."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SRC, cli_command, cli_env

from prometheus.conftest import CR13, GIB, NODES, Monitoring
from prometheus.crafted_answers import crafted_prometheus, gauge, npu
from rbln_artifact_studio.remote.prometheus import read_fleet

Run = Callable[..., subprocess.CompletedProcess[str]]


def _rows(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return {r["host"]: r for r in json.loads(done.stdout)}


# ---- figures no NPU has --------------------------------------------------------------------------------------


def test_bounds_are_per_product() -> None:
    from rbln_artifact_studio.core.fleet.npu_status import figure_problem  # (here: the module runs on older code)

    atom_dram, rebel_dram = 16 * GIB, 144 * GIB
    assert figure_problem("RBLN-CA12", 0, 16_877_879_296) is None  # what an ATOM reports
    assert figure_problem("RBLN-CA25", 0, atom_dram) is None
    assert "more than any ATOM NPU has" in (figure_problem("RBLN-CA12", 0, atom_dram + GIB) or "")
    assert figure_problem("RBLN-CR13", 0, CR13) is None and figure_problem("RBLN-CR13", 0, rebel_dram) is None
    assert "more than any Rebel100 NPU has" in (figure_problem("RBLN-CR13", 0, rebel_dram + GIB) or "")
    assert figure_problem("RBLN-CR13", 1.5, CR13) == "memory used is 1.5 bytes, not a whole number"
    assert figure_problem("RBLN-CR13", -1, CR13) == "memory used is negative (-1 bytes)"
    assert figure_problem("RBLN-CR13", float("nan"), CR13) == "memory used is nan, not a number of bytes"
    assert figure_problem("RBLN-CR13", 0, float("inf")) == "memory total is inf, not a number of bytes"
    assert figure_problem("RBLN-CR13", CR13 + 1, CR13) is not None


def test_totals_no_npu_has_from_a_real_prometheus_are_failed_rows(
    run_cli: Run, monitoring: Monitoring, cr13_artifact: Path
) -> None:
    where = ("--prometheus", monitoring.url, "--match", 'hostname=~"atom-200g|vast-1|legacy-1"', "--timeout", "20")
    done = run_cli("devices", *where, "--json")
    assert done.returncode == 1, done.stderr
    rows = _rows(done)
    assert rows["legacy-1"]["error"] is None
    atom, vast = rows["atom-200g"]["error"], rows["vast-1"]["error"]
    assert f"rbln0's memory total {200 * GIB:,} bytes is more than any ATOM NPU has" in atom
    assert "rbln0's memory total 1e+31 bytes is more than any Rebel100 NPU has" in vast
    assert monitoring.url in atom and monitoring.url in vast  # the source named
    text = run_cli("devices", *where).stdout
    assert "2^100" not in text and "vast-1: FAILED" in text
    placed = run_cli("place", cr13_artifact, *where, "--json")
    [placement] = json.loads(placed.stdout)["placements"]
    assert [o["host"] for o in placement["options"]] == ["legacy-1"]  # a refused NPU is never a place to fit


def test_every_figure_no_npu_has_is_refused_naming_it(run_cli: Run, cr13_artifact: Path) -> None:
    with crafted_prometheus() as api:
        api.vector(
            npu("good-1", 0, str(10 * GIB))
            + npu("fraction-1", 0, "1073741824.5")
            + npu("nan-1", 0, "NaN")
            + npu("inf-1", 0, str(10 * GIB), "+Inf")
            + npu("negative-1", 0, "-1")
            + npu("above-1", 0, str(CR13 + GIB))
            + npu("atom-1", 0, str(GIB), str(200 * GIB), card="RBLN-CA02")
        )
        done = run_cli("devices", "--prometheus", api.url, "--json", "--timeout", "20")
        placed = run_cli("place", cr13_artifact, "--prometheus", api.url, "--json", "--timeout", "20")
    rows = _rows(done)
    assert rows["good-1"]["error"] is None and done.returncode == 1
    expected = {
        "fraction-1": "memory used is 1073741824.5 bytes, not a whole number",
        "nan-1": "memory used is nan, not a number of bytes",
        "inf-1": "memory total is inf, not a number of bytes",
        "negative-1": "memory used is negative (-1 bytes)",
        "above-1": f"memory used {CR13 + GIB:,} bytes is above its total {CR13:,}",
        "atom-1": "more than any ATOM NPU has",
    }
    for host, why in expected.items():
        assert why in rows[host]["error"], (host, rows[host]["error"])
    [placement] = json.loads(placed.stdout)["placements"]
    assert [o["host"] for o in placement["options"]] == ["good-1"]


# ---- a peak across the exporter's switch of names --------------------------------------------------------------


def test_a_peak_survives_a_switch_of_names_inside_the_window(monitoring: Monitoring) -> None:
    node = NODES["renamed-1"]
    high = 120 * GIB
    monitoring.set_node("renamed-1", {**node, "devices": [{**d, "used": high} for d in node["devices"]]})
    monitoring.prometheus.wait_for(
        'RBLN_DEVICE_STATUS:DRAM_USED{hostname="renamed-1",name="rbln0"}',
        lambda r: bool(r) and float(r[0]["value"][1]) == high,
        what="renamed-1's legacy rbln0 at 120 GiB",
    )
    monitoring.set_node("renamed-1", {**node, "family": "current"})  # PROMETHEUS_METRIC_NAMES changed
    monitoring.wait_used("renamed-1", GIB)
    # Prometheus' own answer: the higher of each family's max_over_time.
    own = max(
        float(s["value"][1])
        for name in ("RBLN_DEVICE_STATUS:DRAM_USED", "rbln_npu_memory_used")
        for s in monitoring.prometheus.instant(f'max_over_time({name}{{hostname="renamed-1",name="rbln0"}}[10m])')
    )
    assert own == high
    fleet = read_fleet(monitoring.url, match='hostname="renamed-1"', window="10m", timeout=20)
    [reading] = fleet.readings
    assert reading.status is not None
    rbln0 = reading.status.devices[0]
    assert (rbln0.used, rbln0.peak) == (GIB, own)


# ---- warnings and infos ----------------------------------------------------------------------------------------


def test_a_partial_answer_is_marked_partial(run_cli: Run, cr13_artifact: Path) -> None:
    warning = "partial response: store 10.0.0.3:10901 unreachable"
    with crafted_prometheus() as api:
        api.vector(npu("node-1", 0, str(GIB)), warnings=[warning], infos=["metric might not be a counter"])
        done = run_cli("devices", "--prometheus", api.url, "--json", "--timeout", "20")
        text = run_cli("devices", "--prometheus", api.url, "--timeout", "20")
        placed = run_cli("place", cr13_artifact, "--prometheus", api.url, "--json", "--timeout", "20")
    rows = _rows(done)
    assert done.returncode == 1  # part of the fleet may be missing: not a whole answer
    partial = rows[api.url]
    assert partial["partial"] is True and warning in partial["error"] and "answered in part" in partial["error"]
    assert rows["node-1"]["error"] is None and rows["node-1"]["devices"][0]["memory_used"] == GIB
    assert "Prometheus at " + api.url + " notes: metric might not be a counter" in rows["node-1"]["notes"]
    assert f"{api.url}: FAILED: Prometheus at {api.url} answered in part ({warning})" in text.stdout
    answer = json.loads(placed.stdout)
    assert [o["host"] for o in answer["placements"][0]["options"]] == ["node-1"]  # what was read still fits
    assert any(warning in (f.get("error") or "") for f in answer["placements"][0].get("unknown", [])) or (
        warning in placed.stdout
    )


# ---- the server's clock ----------------------------------------------------------------------------------------


def test_queries_are_evaluated_at_the_servers_time(monitoring: Monitoring, tmp_path: Path) -> None:
    with crafted_prometheus() as api:
        api.vector(npu("node-1", 0, str(GIB)))
        read_fleet(api.url, window="1h", timeout=20)
        assert [a for a in api.asked if "time" in a] == []  # instant queries: Prometheus' own now
    # This computer's clock ten minutes ahead: Prometheus' samples are still its newest.
    skew = tmp_path / "skew"
    skew.mkdir()
    (skew / "sitecustomize.py").write_text(
        "import time\n_real = time.time\ntime.time = lambda: _real() + 600\n"
        "time.time_ns = lambda: int(time.time() * 1e9)\n"
    )
    env = {**cli_env(), "PYTHONPATH": f"{skew}{os.pathsep}{SRC}"}
    argv = [*cli_command(), "devices", "--prometheus", monitoring.url, "--match", 'hostname="legacy-1"', "--json"]
    done = subprocess.run([*argv, "--timeout", "20"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    [row] = json.loads(done.stdout)
    assert row["devices"][0]["memory_used"] == NODES["legacy-1"]["devices"][0]["used"]


def test_history_ends_at_the_servers_time() -> None:
    from rbln_artifact_studio.remote.prometheus import memory_history

    with crafted_prometheus() as api:
        api.clock_offset = -3600.0  # the server's clock an hour behind this computer's
        api.raw(
            json.dumps(
                {
                    "status": "success",
                    "data": {
                        "resultType": "matrix",
                        "result": [
                            {"metric": gauge("rbln_npu_memory_used", "n", 0, "1")["metric"], "values": [[1.0, "5"]]}
                        ],
                    },
                }
            ).encode()
        )
        history = memory_history(api.url, duration="5m", timeout=20)
        [ranged] = [a for a in api.asked if a["path"].endswith("query_range")][:1]
    assert history[0].points == ((1.0, 5),)
    assert abs(float(ranged["end"]) - (time.time() - 3600)) < 120


# ---- an answer too large to parse --------------------------------------------------------------------------------


def _bomb(megabytes: int) -> bytes:
    """A gzip'd vector of `megabytes` MiB of JSON that compresses a thousandfold: distinct NPUs, few bytes each."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    series = json.dumps(npu("node-1", 0, str(GIB)), separators=(",", ":"))[1:-1].encode()
    block = b",".join([series] * ((1 << 20) // len(series)))
    parts = [packer.compress(b'{"status":"success","data":{"resultType":"vector","result":[' + block)]
    for _ in range(megabytes):
        parts.append(packer.compress(b"," + block))
    parts.append(packer.compress(b"]}}") + packer.flush())
    return b"".join(parts)


def _limited(argv: list[str]) -> list[str]:
    """argv under a 3 GiB address-space limit (the old parse needed more; never the machine's), set by util-linux's
    prlimit as it execs the command (the same process: a signal sent to it reaches the command)."""
    return ["prlimit", f"--as={3 << 30}", "--", *argv]


# Runs argv (its stdout dropped) under _limited's bound and prints its peak resident KiB. The command is forked from
# this small interpreter, not from the test process: a process forked from another counts that one's resident pages
# in its peak, and a whole suite's run makes the test process over a GiB.
MEASURED = """
import os, resource, sys
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_a_gzip_bomb_ends_within_the_timeout_in_bounded_memory(tmp_path: Path) -> None:
    body = _bomb(600)  # 600 MiB of JSON in about a MiB
    assert len(body) < 4 << 20
    with crafted_prometheus() as api:
        api.raw(body, zipped=True)
        argv = [*cli_command(), "devices", "--prometheus", api.url, "--json", "--timeout", "5"]
        done = subprocess.run(
            [sys.executable, "-c", MEASURED, *argv], capture_output=True, text=True, env=cli_env(), timeout=120
        )
        err, peak = done.stderr, int(done.stdout.split()[-1])
    assert done.returncode != 0
    assert "Traceback" not in err and "MemoryError" not in err, err
    assert "answered more than" in err or "did not answer within 5 s" in err, err
    # Bounded by outcome, not by the clock: the message says which bound ended it (before: 3 GB and 9 s for a
    # smaller bomb at --timeout 3, no error); the run's own timeout above is the hard stop.
    assert peak < 1 << 20, peak  # KiB: under a GiB (the CLI's own peak, which no machine's load inflates)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _until_busy(pid: int, seconds: float) -> None:
    start, end = _cpu_seconds(pid), time.monotonic() + 60
    while _cpu_seconds(pid) - start < seconds and time.monotonic() < end:
        time.sleep(0.02)


def test_sigterm_ends_a_long_parse(tmp_path: Path) -> None:
    body = _bomb(200)  # within the size bound: parsed to its end unless stopped
    with crafted_prometheus() as api:
        answer = api.raw(body, zipped=True)
        argv = [*cli_command(), "devices", "--prometheus", api.url, "--json", "--timeout", "300"]
        with (tmp_path / "err").open("wb") as stderr:
            child = subprocess.Popen(_limited(argv), stdout=subprocess.DEVNULL, stderr=stderr, env=cli_env())
        try:
            assert answer.served.wait(60), "the CLI never asked"
            _until_busy(child.pid, 1.0)  # deep in the answer: a second of its CPU after it arrived
            child.send_signal(signal.SIGTERM)
            child.wait(timeout=15)  # before: deaf to SIGTERM until the parse ended (minutes)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    assert child.returncode != 0
    assert "Traceback" not in (tmp_path / "err").read_text()


if sys.platform != "linux":  # RLIMIT_AS and wait4 are the measure here
    pytestmark = pytest.mark.skip("Linux only")
