"""devices, place, plan --on and scan across servers at once, on a real sshd playing five servers: exact JSON and
text-table readings, one that hangs (bounded, named), one that prints garbage, and each context's drift."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from remote.conftest import control_dir  # noqa: F401 (fixture)
from remote.fleet_harness import ATOM, CR13, GIB, Fleet, default_setups, fleet  # noqa: F401 (fixture)

Run = Callable[..., subprocess.CompletedProcess[str]]
SERVERS = [f"ssh://{a}" for a in ("npu-a", "npu-b", "npu-c", "npu-hang", "npu-junk")]


@pytest.fixture
def cli(run_cli: Run, fleet: Fleet, control_dir: Path) -> Run:  # noqa: F811
    default_setups(fleet)

    def run(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env={**fleet.env(control_dir), **(env or {})}, timeout=90)

    return run


def test_five_servers_at_once_each_a_row_the_hung_and_the_garbage_named(cli: Run, fleet: Fleet) -> None:  # noqa: F811
    done = cli("devices", *SERVERS, "--json", "--timeout", "15")
    assert done.returncode == 1, done.stderr  # some servers failed: said by the exit status, rows for all
    rows = json.loads(done.stdout)
    assert [r["host"] for r in rows] == ["npu-a", "npu-b", "npu-c", "npu-hang", "npu-junk"]
    a, b, c, hang, junk = rows
    assert (a.get("tool"), a.get("form")) == ("rbln-stat", "json"), a
    assert [(d["memory_used"], d["memory_total"], d["memory_exact"]) for d in a["devices"]] == [
        (fleet.need + fleet.need // 4, CR13, True),
        (5 * GIB, CR13, True),
    ]
    assert b["form"] == "text" and b["devices"][0]["memory_total"] == CR13  # 140.0GiB read as the catalog's bytes
    assert not b["devices"][0]["memory_exact"]
    assert [d["memory_total"] for d in c["devices"]] == [ATOM, ATOM] and c["form"] == "text"
    # The fan-out's own words, or the transport's when it ends the call at the same limit (and says more).
    assert re.match(r"npu-hang did not (answer|finish) within 15 s", hang["error"]) and hang["devices"] == []
    # The longer limit named is the command's own (the ssh-wide RBLN_STUDIO_SSH_TIMEOUT is not what to set).
    assert hang["error"].endswith("longer limit: --timeout SECONDS or RBLN_STUDIO_SERVER_TIMEOUT=SECONDS.")
    assert "cannot be true" in junk["error"] and "line 1: not JSON" in junk["error"]
    assert fleet.hung_pid("npu-hang") is not None  # the fake did start, and hung


def test_each_context_against_what_its_artifact_predicts(cli: Run, fleet: Fleet) -> None:  # noqa: F811
    done = cli("devices", "ssh://npu-a", "ssh://npu-b", "--json")
    assert done.returncode == 0, done.stderr
    a, b = json.loads(done.stdout)
    served, anonymous = a["contexts"]
    assert served["pid"] == fleet.serving and served["artifact"] == f"ssh://npu-a{fleet.artifact}"
    assert (served["predicted"], served["memalloc"]) == (fleet.need, fleet.need + fleet.need // 4)
    assert served["difference"] == fleet.need // 4
    assert served["difference_percent"] == pytest.approx(25.0, abs=0.01) and served["flagged"] is True
    assert anonymous["pid"] == fleet.anonymous and anonymous["artifact"] is None
    assert anonymous["predicted"] is None and anonymous["difference"] is None and not anonymous["flagged"]
    assert anonymous["unknown"] == "its command line names no artifact folder"
    [relative] = b["contexts"]  # `vllm --model NAME` in the artifact's parent folder: found from its cwd
    assert relative["artifact"] == f"ssh://npu-b{fleet.artifact}" and relative["predicted"] == fleet.need
    assert abs(relative["difference"]) <= GIB // 20 and not relative["flagged"]  # the table's 0.1 GiB rounding

    text = cli("devices", "ssh://npu-a", "ssh://npu-hang", "--timeout", "15")
    assert text.returncode == 1
    assert f"pid {fleet.serving} vllm on NPU 0: serves ssh://npu-a{fleet.artifact} (node 0)" in text.stdout
    assert "(+25.0%)  <- past 10%" in text.stdout
    assert f"pid {fleet.anonymous} python3 on NPU 1: drift unknown (its command line names no artifact" in text.stdout
    assert re.search(r"npu-hang: FAILED: npu-hang did not (answer|finish) within 15 s", text.stdout)


def test_place_answers_per_artifact_across_servers(cli: Run, fleet: Fleet, tmp_path: Path) -> None:  # noqa: F811
    config = {"RBLN_STUDIO_CONFIG_DIR": str(tmp_path / "config")}  # the config folder (core/app_dirs)
    made = cli("set-server-group", "rack1", "ssh://npu-a", "npu-b", "npu-c", env=config)
    assert made.returncode == 0, made.stderr
    done = cli("place", str(fleet.artifact), "--on", "@rack1", "ssh://npu-junk", "--json", env=config)
    assert done.returncode == 0, done.stderr
    [p] = json.loads(done.stdout)["placements"]
    assert [o["host"] for o in p["options"]] == ["npu-a", "npu-b"]  # a: an NPU with 5 GiB used; b: one holding it
    best = p["options"][0]
    assert best["npus"][0]["npu"] == 1 and best["headroom"] == CR13 - 5 * GIB - fleet.need
    assert len(best["npus"][0]["chiplets"]) == 4
    blocked = {b["host"]: b for b in p["blocked"]}
    assert blocked["npu-c"]["block"] == "family" and "RBLN-CA12" in blocked["npu-c"]["reason"]
    assert blocked["npu-junk"]["block"] == "unreachable" and "cannot be true" in blocked["npu-junk"]["reason"]

    fleet.setup(
        "npu-b", {"form": "json", "devices": [{"name": "RBLN-CR13", "used": CR13 - fleet.need + GIB, "total": CR13}]}
    )
    text = cli("place", str(fleet.artifact), "--on", "ssh://npu-b", "ssh://npu-c")
    assert text.returncode == 1
    assert "fits nowhere now" in text.stdout
    assert "npu-b: too little free DRAM: NPU 0 has" in text.stdout and "resize a copy" in text.stdout
    assert "npu-c: another NPU family" in text.stdout


def test_plan_on_several_servers_and_the_old_single_form(cli: Run, fleet: Fleet) -> None:  # noqa: F811
    single = cli("plan", "--on", "ssh://npu-a", str(fleet.artifact), "--json")  # the form of one server, kept
    assert single.returncode == 0, single.stderr
    assert json.loads(single.stdout)["host"] == "npu-a"
    several = cli("plan", str(fleet.artifact), "--on", "ssh://npu-a", "ssh://npu-c", "ssh://npu-junk", "--json")
    assert several.returncode == 0, several.stderr  # fits on at least one of them
    verdicts = {r["host"]: r["verdict"] for r in json.loads(several.stdout)}
    assert verdicts["npu-a"] == "fit" and verdicts["npu-c"] == "does not fit" and verdicts["npu-junk"] == "unknown"


def test_scan_several_servers_a_failed_one_is_a_row(cli: Run, fleet: Fleet) -> None:  # noqa: F811
    done = cli("scan", str(fleet.artifact.parent), "--on", "ssh://npu-a", "ssh://npu-b", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert sorted(r["path"] for r in rows) == [f"ssh://{h}{fleet.artifact}" for h in ("npu-a", "npu-b")]
    missing = cli("scan", "ssh://npu-a/nonexistent/folder", f"ssh://npu-b{fleet.artifact.parent}", "--json")
    rows = json.loads(missing.stdout)
    assert [r["status"] for r in rows] == ["invalid", "ok"] and missing.returncode == 3
    assert "ssh://npu-a/nonexistent/folder" in rows[0]["problems"][0]


def test_a_python_that_exits_1_without_a_word_gets_a_reason(cli: Run, fleet: Fleet, tmp_path: Path) -> None:  # noqa: F811
    mute = tmp_path / "python3"
    mute.write_text("#!/bin/sh\nexit 1\n")
    mute.chmod(0o755)
    done = cli("inspect", f"ssh://npu-a{fleet.artifact}", env={"RBLN_STUDIO_REMOTE_PYTHON": str(mute)})
    assert done.returncode == 1
    assert "printed no reason" in done.stderr and "print(1)" in done.stderr
    assert "(status 1): \n" not in done.stderr


@pytest.mark.parametrize("python", ["no-such-python3", "mute"])
def test_a_server_whose_python_cannot_run_still_lists_its_npus(
    cli: Run,
    fleet: Fleet,  # noqa: F811
    tmp_path: Path,
    python: str,
) -> None:
    """The NPUs need only the server's shell; what their processes serve needs its Python, and says so."""
    if python == "mute":
        mute = tmp_path / "python3"
        mute.write_text("#!/bin/sh\nexit 1\n")
        mute.chmod(0o755)
        python = str(mute)
    done = cli("devices", "ssh://npu-a", "ssh://npu-c", "--json", env={"RBLN_STUDIO_REMOTE_PYTHON": python})
    assert done.returncode == 0, done.stderr
    a, c = json.loads(done.stdout)
    assert [d["memory_used"] for d in a["devices"]] == [fleet.need + fleet.need // 4, 5 * GIB]
    [note] = a["notes"]
    assert note.startswith("the processes could not be looked up: ")
    assert ("has no no-such-python3" if python == "no-such-python3" else "printed no reason") in note
    assert [ctx["unknown"] for ctx in a["contexts"]] == [note] * len(a["contexts"])
    assert c["error"] is None and c["devices"]
