"""`plan --on ssh://HOST` gives plan's verdict and exit code where plan can judge (an idle server of the SKU):
chiplet by chiplet from the artifacts' breakdowns, per NPU against what rbln-smi reports free."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.install import fake_compile

from remote.conftest import HOST_ALIAS, Run, SshServer, url

GIB = 1 << 30
TINY_CR13 = ("--npu", "RBLN-CR13", "--batch_size", "2", "--max_seq_len", "8192", "--kvcache_partition_len", "1024")
IDLE_CR13 = [{"name": "RBLN-CR13", "used": "0.0B", "total": "140.0GiB", "processes": []}] * 2
REBEL_MAGIC = b"FAKE-REBEL-COMPILED-MODEL\n"  # the fake rebel's file format: magic, JSON header line, payload


def weights_on_chiplet_zero(artifact: Path, size: int) -> None:
    """Make prefill.rbln's weights sit on chiplet 0 only, as a real compile may spread them unevenly."""
    graph = artifact / "prefill.rbln"
    header, _, payload = graph.read_bytes()[len(REBEL_MAGIC) :].partition(b"\n")
    data = json.loads(header)
    data["alloc"]["Weight"] = [[size, 0, 0, 0] for _ in data["alloc"]["Weight"]]
    graph.write_bytes(REBEL_MAGIC + json.dumps(data).encode() + b"\n" + payload)


@pytest.fixture
def pair(server: SshServer, tiny_model: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two real-compiler artifacts for one Rebel100 NPU on the server; an idle server with two of them."""
    server.devices.write_text(json.dumps(IDLE_CR13))
    return tuple(  # type: ignore[return-value]
        fake_compile(server.toolchain, tiny_model, tmp_path / "srv" / name, *TINY_CR13, "--memory-budget", "0.2")
        for name in ("a", "b")
    )


def both_plans(remote_cli: Run, *artifacts: Path) -> tuple[tuple[str, int], tuple[str, int], dict]:
    """(verdict, exit code) of plan and of plan --on, and plan --on's JSON."""
    urls = [url(a) for a in artifacts]
    here = remote_cli("plan", *urls, "--json")
    there = remote_cli("plan", "--on", f"ssh://{HOST_ALIAS}", *urls, "--json")
    assert here.stdout and there.stdout, here.stderr + there.stderr
    on = json.loads(there.stdout)
    return (json.loads(here.stdout)["verdict"], here.returncode), (on["verdict"], there.returncode), on


def test_artifacts_that_fit_fit_on_an_idle_server(remote_cli: Run, pair: tuple[Path, Path]) -> None:
    plan, on, data = both_plans(remote_cli, *pair)
    assert plan == on == ("fit", 0)
    [npu] = data["npus"]
    assert [c["chiplet"] for c in npu["chiplets"]] == [0, 1, 2, 3]
    assert sum(c["need"] for c in npu["chiplets"]) == npu["need"]
    assert {c["available"] for c in npu["chiplets"]} == {35 * GIB}  # DESIGN section 2: a Rebel100 chiplet


def test_a_full_chiplet_does_not_fit_though_its_npu_has_room(remote_cli: Run, pair: tuple[Path, Path]) -> None:
    for artifact in pair:
        weights_on_chiplet_zero(artifact, 20 * GIB)  # 40 GiB on chiplet 0 of the 35; 40 of the NPU's 140
    plan, on, data = both_plans(remote_cli, *pair)
    assert plan == on == ("does not fit", 1)
    [npu] = data["npus"]
    assert npu["headroom"] > 0, "the NPU as a whole has room: only the chiplet check finds the overflow"
    assert npu["chiplets"][0]["headroom"] < 0 and all(c["headroom"] > 0 for c in npu["chiplets"][1:])
    text = remote_cli("plan", "--on", f"ssh://{HOST_ALIAS}", *map(url, pair)).stdout
    assert "chiplet 0: needs" in text and "OVER by" in text
    assert "not per chiplet" in text  # rbln-smi's memory is per NPU: said so


def test_an_invalid_artifact_stops_both_plans(remote_cli: Run, pair: tuple[Path, Path]) -> None:
    (pair[1] / "decoder_batch_2.rbln").unlink()
    urls = [url(a) for a in pair]
    here = remote_cli("plan", *urls)
    there = remote_cli("plan", "--on", f"ssh://{HOST_ALIAS}", *urls)
    assert here.returncode == there.returncode == 3  # EXIT_INVALID (docs/cli.md)
    assert "is invalid" in there.stderr and "Traceback" not in there.stderr
