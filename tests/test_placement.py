"""Where an artifact fits now across servers (best first, what blocks the rest), estimate against actual, and the
named server groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact, open_artifact
from rbln_artifact_studio.core.fleet.host_groups import expand, load_groups, save_group
from rbln_artifact_studio.core.fleet.npu_status import Device, DeviceStatus, NpuProcess, ReadForm
from rbln_artifact_studio.core.planning.drift import ProcessArtifact, choose_artifact, drifts, path_arguments
from rbln_artifact_studio.core.planning.placement import Block, place, placement_text

CR13 = 150_323_855_360
ATOM = 16_877_879_296


def _need(artifact: Artifact, blocks: int | None = None) -> int:
    """Node 0's DRAM from the artifact's own breakdown (weights + workspace + KV on each chiplet)."""
    fit = artifact.breakdown(num_blocks=blocks)
    assert fit is not None
    return sum(u.used for u in fit.usages if u.node == 0)


def _server(host: str, *devices: tuple[str, int, int], contexts: tuple[NpuProcess, ...] = ()) -> DeviceStatus:
    out = tuple(
        Device(i, name, f"rbln{i}", used, total, "0", tuple(c for c in contexts if c.npu == i), exact=True)
        for i, (name, used, total) in enumerate(devices)
    )
    return DeviceStatus(host, "rbln-stat", out, ReadForm.JSON)


@pytest.fixture
def cr13(cr13_artifact: Path) -> Artifact:
    return open_artifact(cr13_artifact)


def test_servers_that_can_hold_it_come_best_first_with_the_headroom_left(cr13: Artifact) -> None:
    need = _need(cr13)
    roomy = _server("roomy", ("RBLN-CR13", CR13 - need - 50 * 2**30, CR13), ("RBLN-CR13", 0, CR13))
    snug = _server("snug", ("RBLN-CR13", CR13 - need - 2**30, CR13))
    p = place(cr13, [snug, roomy])
    assert [o.host for o in p.options] == ["roomy", "snug"]
    assert p.options[0].npus[0].device.index == 1  # the emptier NPU of roomy
    assert p.options[0].headroom == CR13 - need
    assert p.options[1].headroom == 2**30
    assert [len(n.chiplets) for n in p.options[0].npus] == [4]  # Rebel100: per chiplet
    assert sum(c.need for c in p.options[0].npus[0].chiplets) == need
    assert "1. roomy: NPU 1" in placement_text(p)


def test_what_blocks_the_others_is_named(cr13: Artifact) -> None:
    need = _need(cr13)
    full = _server("full", ("RBLN-CR13", CR13 - need + 2**30, CR13))
    atom = _server("atom", ("RBLN-CA12", 0, ATOM))
    p = place(cr13, [full, atom], failures={"gone": "gone did not answer within 5 s."})
    assert not p.fits
    by_host = {b.host: b for b in p.blocked}
    assert by_host["full"].block is Block.FREE_DRAM
    assert "short by 1 GiB" in by_host["full"].reason
    smaller = by_host["full"].fits_blocks
    assert smaller is not None and smaller < cr13.config.kvcache_num_blocks
    free = full.devices[0].free  # the count offered is the largest that fits there, by the artifact's breakdown
    assert _need(cr13, smaller) <= free < _need(cr13, smaller + 1)
    assert by_host["atom"].block is Block.FAMILY and "Rebel100" in by_host["atom"].reason
    assert by_host["gone"].block is Block.UNREACHABLE and "did not answer" in by_host["gone"].reason
    assert json.loads(json.dumps(p.to_json()))["blocked"][0]["fits_kvcache_num_blocks"] == smaller


def test_another_sku_of_the_family_and_too_few_npus(ca25_artifact: Path) -> None:
    ca25x4 = open_artifact(ca25_artifact)
    other_sku = _server("ca12s", *[("RBLN-CA12", 0, ATOM)] * 4)
    two = _server("two", *[("RBLN-CA25", 0, ATOM)] * 2)
    four = _server("four", *[("RBLN-CA25", 0, ATOM)] * 4)
    p = place(ca25x4, [other_sku, two, four])
    assert [o.host for o in p.options] == ["four"] and len(p.options[0].npus) == 4
    blocks = {b.host: b.block for b in p.blocked}
    assert blocks == {"ca12s": Block.SKU, "two": Block.TOO_FEW_NPUS}


def test_serving_command_lines_name_their_artifact() -> None:
    assert path_arguments(["python3", "/usr/bin/vllm", "serve", "/srv/a/qwen", "--port", "8000"])[:1] == ["/srv/a/qwen"]
    assert path_arguments(["python", "-m", "vllm.entrypoints.openai.api_server", "--model=/srv/q"])[0] == "/srv/q"
    assert path_arguments(["vllm", "--port", "1", "--model", "q8"])[0] == "q8"
    folders = {"/usr/bin/vllm": "/usr/bin/vllm", "q8": "/srv/run/q8"}
    assert choose_artifact(["vllm", "/usr/bin/vllm", "--model", "q8"], folders) == "/srv/run/q8"
    assert choose_artifact(["sleep", "100"], {}) is None


def test_drift_per_context_against_the_artifact(cr13: Artifact) -> None:
    need = _need(cr13)
    contexts = (
        NpuProcess(0, 11, "vllm", need + need // 4),
        NpuProcess(1, 12, "vllm", need + 2**20),
        NpuProcess(2, 13, "python3", 5 * 2**30),
    )
    status = _server("npu1", *[("RBLN-CR13", 0, CR13)] * 3, contexts=contexts)
    matches = {
        11: ProcessArtifact(11, "ssh://npu1/srv/q", cr13),
        12: ProcessArtifact(12, "ssh://npu1/srv/q", cr13),
        13: ProcessArtifact(13, None, None, "its command line names no artifact folder"),
    }
    over, close, unknown = drifts(status, matches)
    assert (over.predicted, over.actual, over.difference) == (need, need + need // 4, need // 4)
    assert over.percent == pytest.approx(25.0, abs=0.01) and over.flagged
    assert close.difference == 2**20 and not close.flagged
    assert unknown.predicted is None and unknown.difference is None and not unknown.flagged
    assert unknown.to_json()["unknown"] == "its command line names no artifact folder"
    assert "drift unknown (its command line names no artifact folder)" in unknown.text()
    assert "+25.0%" in over.text() and "<- past 10%" in over.text()


def test_a_process_on_more_npus_than_its_artifact_has_nodes_is_unknown(cr13: Artifact) -> None:
    contexts = (NpuProcess(0, 11, "vllm", 2**30), NpuProcess(1, 11, "vllm", 2**30))
    status = _server("npu1", *[("RBLN-CR13", 0, CR13)] * 2, contexts=contexts)
    first, _ = drifts(status, {11: ProcessArtifact(11, "ssh://npu1/srv/q", cr13)})
    assert first.predicted is None and "compiled for 1 NPU(s); the process holds 2" in first.reason


def test_server_groups_are_kept_and_expanded(tmp_path: Path) -> None:
    groups = tmp_path / "config" / "host_groups.json"
    assert load_groups(groups).groups == {}
    save_group("rack1", ["ssh://npu1", "npu2", "ssh://npu1"], groups)
    save_group("rack2", ["npu3"], groups)
    assert expand(["@rack1", "npu4", "@rack2", "npu2"], groups) == ["ssh://npu1", "npu2", "npu4", "npu3"]
    with pytest.raises(StudioError, match=r"no server group @rack9 \(groups: @rack1, @rack2\)"):
        expand(["@rack9"], groups)
    save_group("rack2", [], groups)
    assert set(load_groups(groups).groups) == {"rack1"}
    groups.write_text('{"version": 1, "groups": {"bad name": ["x"]}}')
    with pytest.raises(StudioError, match="is not a server group file"):
        load_groups(groups)
