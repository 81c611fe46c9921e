"""A multimodal artifact over SSH: its DRAM per NPU stacks every compiled part, as the local inspect does."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from fakes.install import TINY_CA25, fake_compile
from kind_fixtures import simulated_llava, simulated_qwen_vl

from remote.conftest import Run, SshServer, url

PARTS = ("vision_tower/compiled_model.rbln", "compiled_model.rbln")  # the vision tower and the projector
# family -> (the simulated artifact, its other parts' graphs, their labels)
FAMILIES: dict[str, tuple[Callable[..., Path], tuple[str, ...], list[str]]] = {
    "llava": (simulated_llava, PARTS, ["(top level)", "vision_tower/"]),
    "qwen2_vl": (partial(simulated_qwen_vl, "qwen2_vl"), ("visual/compiled_model.rbln",), ["visual/"]),
}


def _same_keys(local: dict[str, Any], remote: dict[str, Any]) -> None:
    for key in ("status", "breakdown", "colocated_graphs", "colocated_unknown", "graphs", "problems"):
        assert remote[key] == local[key], key


def _chiplet_free(data: dict[str, Any]) -> int:
    [usage] = data["breakdown"]["chiplets"]
    return int(usage["free_in_budget"])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_parts_of_unknown_size_are_named_over_ssh(
    remote_cli: Run, server: SshServer, tmp_path: Path, family: str
) -> None:
    build, _, labels = FAMILIES[family]
    artifact = build(tmp_path / family, kvcache_num_blocks=5)
    local = json.loads(remote_cli("inspect", artifact, "--json").stdout)
    assert local["colocated_unknown"] == labels
    remote = remote_cli("inspect", url(artifact), "--json")
    assert remote.returncode == 0, remote.stderr
    _same_keys(local, json.loads(remote.stdout))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_known_parts_are_stacked_over_ssh(remote_cli: Run, server: SshServer, tmp_path: Path, family: str) -> None:
    build, parts, _ = FAMILIES[family]
    alone = json.loads(remote_cli("inspect", build(tmp_path / "a" / family), "--json").stdout)
    artifact = build(tmp_path / "b" / family)
    [prefill] = artifact.rglob("prefill.rbln")
    for part in parts:  # simulator graphs: their tables are known here and there
        shutil.copy(prefill, artifact / part)
    local = json.loads(remote_cli("inspect", artifact, "--json").stdout)
    assert local["colocated_unknown"] == [] and len(local["colocated_graphs"]) == len(parts)
    assert _chiplet_free(local) < _chiplet_free(alone)  # the parts' allocations are stacked on the NPU
    remote = remote_cli("inspect", url(artifact), "--json")
    assert remote.returncode == 0, remote.stderr
    _same_keys(local, json.loads(remote.stdout))


def test_real_compiler_parts_are_read_by_the_servers_rebel(
    remote_cli: Run, server: SshServer, tiny_model: Path, tmp_path: Path
) -> None:
    real = fake_compile(server.toolchain, tiny_model, tmp_path / "real", *TINY_CA25)
    llava = simulated_llava(tmp_path / "llava")
    [decoder] = real.glob("decoder_batch_*.rbln")
    shutil.copy(real / "prefill.rbln", llava / PARTS[0])  # two real graphs of different sizes, one name
    shutil.copy(decoder, llava / PARTS[1])
    with_rebel = {"PATH": f"{server.toolchain.path_dir}:/usr/bin:/bin"}
    local = json.loads(remote_cli("inspect", llava, "--json", env=with_rebel).stdout)
    assert local["colocated_unknown"] == [] and len(local["colocated_graphs"]) == 2
    remote = remote_cli("inspect", url(llava), "--json")
    assert remote.returncode == 0, remote.stderr
    _same_keys(local, json.loads(remote.stdout))


def _fake_real_graph(path: Path, weights: int) -> None:
    """A real-compiler graph (the fake rebel's format) holding `weights` bytes on its one chiplet."""
    header = {"alloc": {"weights": [[weights]]}, "dram_tensors": {}}
    path.write_bytes(b"FAKE-REBEL-COMPILED-MODEL\n" + json.dumps(header).encode() + b"\n")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_resize_over_ssh_is_checked_against_every_part(
    remote_cli: Run, server: SshServer, tmp_path: Path, family: str
) -> None:
    build, parts, _ = FAMILIES[family]
    llava = build(tmp_path / family, kvcache_num_blocks=8)
    free = _chiplet_free(json.loads(remote_cli("inspect", llava, "--json").stdout))
    _fake_real_graph(llava / parts[0], free - 2**20)  # the vision encoder leaves 1 MiB: no room to grow
    for part in parts[1:]:
        _fake_real_graph(llava / part, 0)
    with_rebel = {"PATH": f"{server.toolchain.path_dir}:/usr/bin:/bin"}
    local = json.loads(remote_cli("inspect", llava, "--json", env=with_rebel).stdout)
    assert _chiplet_free(local) == 2**20 and local["colocated_unknown"] == []
    remote = json.loads(remote_cli("inspect", url(llava), "--json").stdout)
    _same_keys(local, remote)
    before = (llava / "rbln_config.json").read_bytes()
    refused = remote_cli("set-kvcache-num-blocks", url(llava), "16")
    assert refused.returncode == 1
    assert "does not fit RBLN-CA25" in refused.stderr and "The largest count that fits is 8." in refused.stderr
    assert refused.stderr.rstrip().endswith("Nothing was changed.")  # the one closing sentence (issue 43)
    assert (llava / "rbln_config.json").read_bytes() == before


def test_one_parts_unreadable_graph_leaves_the_others_known(remote_cli: Run, server: SshServer, tmp_path: Path) -> None:
    llava = simulated_llava(tmp_path / "llava")
    _fake_real_graph(llava / PARTS[0], 2**20)  # the vision tower reads; the projector stays unreadable to rebel
    with_rebel = {"PATH": f"{server.toolchain.path_dir}:/usr/bin:/bin"}
    local = json.loads(remote_cli("inspect", llava, "--json", env=with_rebel).stdout)
    assert local["colocated_unknown"] == ["(top level)"] and local["colocated_graphs"] == [
        "vision_tower/ compiled_model"
    ]
    _same_keys(local, json.loads(remote_cli("inspect", url(llava), "--json").stdout))
