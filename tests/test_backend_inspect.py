"""Inspecting real .rbln files through rebel (the fake) in the toolchain's Python; failures degrade with a reason."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from fakes.helpers import graph_header, running
from fakes.install import FakeToolchain, fake_compile

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.backends.rebel_inspect import RebelInspector, allocations_from_json
from rbln_artifact_studio.backends.registry import inspector_for
from rbln_artifact_studio.core.errors import CancelledError, StudioError
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.sizes import align_2mib

pytest_plugins = ["fakes.plugin"]


@pytest.fixture
def cr13_real(toolchain: FakeToolchain, tiny_model: Path, tmp_path: Path) -> Path:
    """A real-compiler artifact on two RBLN-CR13 (4 chiplets each), 10 blocks."""
    options = ["--npu", "RBLN-CR13", "--num_devices", "2", "--batch_size", "2", "--max_seq_len", "8192"]
    options += ["--kvcache_partition_len", "2048", "--kvcache_num_blocks", "10"]
    return fake_compile(toolchain, tiny_model, tmp_path / "tiny-cr13x2", *options)


def test_rebel_inspection_gives_the_real_graphs_and_breakdown(fake_optimum: FakeToolchain, cr13_real: Path) -> None:
    inspector = inspector_for()
    assert isinstance(inspector, RebelInspector) and inspector.python == fake_optimum.python
    artifact = open_artifact(cr13_real, inspector)
    assert artifact.unknown_reason is None and not artifact.is_simulated
    assert artifact.allocations is not None and set(artifact.allocations) == {"prefill", "decoder_batch_2"}
    prefill = graph_header(cr13_real / "prefill.rbln")
    assert artifact.allocations["prefill"].dram_tensor_sizes == prefill["dram_tensors"]
    assert artifact.allocations["prefill"].alloc_per_chiplet_by_key["Weight"] == prefill["alloc"]["Weight"]
    fit = artifact.breakdown()
    assert fit is not None and fit.fits
    assert [(u.node, u.chiplet) for u in fit.usages] == [(n, c) for n in range(2) for c in range(4)]
    # KV on a chiplet: each tensor's recorded size (at 10 blocks) aligned to 2 MiB, summed.
    expected_kv = sum(align_2mib(grid[0][0]) for grid in prefill["dram_tensors"].values())
    assert fit.usages[0].kv == expected_kv
    weights = prefill["alloc"]["Weight"][0][0]
    assert fit.usages[0].weights == weights
    # At 15 blocks the breakdown follows the per-block size the buffers imply.
    grown = artifact.breakdown(num_blocks=15)
    assert grown is not None
    assert grown.usages[0].kv == sum(align_2mib(g[0][0] // 10 * 15) for g in prefill["dram_tensors"].values())


def test_cli_inspect_json_and_fit_to_budget_on_a_real_artifact(
    fake_optimum: FakeToolchain, run_cli, mid_artifact: Path
) -> None:
    out = run_cli("inspect", mid_artifact, "--json", "--memory-budget", "160MB")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["simulated"] is False and data["allocations_unknown_reason"] is None
    assert set(data["graphs"]) == {"prefill", "decoder_batch_2"}
    (chiplet,) = data["breakdown"]["chiplets"]
    assert (chiplet["kv_cache"], chiplet["budget"]) == (128 << 20, 160 << 20)
    assert data["breakdown"]["fits"] is False  # 16 blocks do not fit 160 MiB ...
    fitted = run_cli("set-memory-budget", mid_artifact, "160MB", "--json")  # ... so fitting to it shrinks the cache
    assert fitted.returncode == 0, fitted.stderr
    result = json.loads(fitted.stdout)
    assert (result["previous_kvcache_num_blocks"], result["kvcache_num_blocks"], result["warnings"]) == (16, 12, [])
    again = json.loads(run_cli("inspect", mid_artifact, "--json", "--memory-budget", "160MB").stdout)
    assert again["breakdown"]["fits"] and again["breakdown"]["chiplets"][0]["kv_cache"] == 96 << 20


def test_a_hanging_helper_times_out_and_the_artifact_shows_why(
    fake_optimum: FakeToolchain, real_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_REBEL_HANG", "1")
    artifact = open_artifact(real_artifact, RebelInspector(fake_optimum.python, timeout=0.5))
    assert artifact.allocations is None and artifact.breakdown() is None
    assert artifact.unknown_reason is not None
    assert "rebel inspection helper did not finish within 0.5 s" in artifact.unknown_reason
    assert artifact.config.kvcache_num_blocks == 16  # the config-only view still works


def test_a_cancelled_read_stops_a_hanging_helper_at_once(
    fake_optimum: FakeToolchain, real_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_REBEL_HANG", "1")
    cancel = CancelToken()
    threading.Timer(0.3, cancel.cancel).start()  # e.g. the window closing while the detail panel loads
    # 600 s, twice pytest-timeout's 300: a read that waited for the helper's timeout instead of stopping it fails.
    with pytest.raises(CancelledError):
        open_artifact(real_artifact, RebelInspector(fake_optimum.python, timeout=600, cancel=cancel))


def test_the_probe_timeout_setting_reaches_the_cli(fake_optimum: FakeToolchain, run_cli, real_artifact: Path) -> None:
    out = run_cli("inspect", real_artifact, "--json", env={"FAKE_REBEL_HANG": "1", "RBLN_STUDIO_PROBE_TIMEOUT": "0.5"})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["breakdown"] is None and "did not finish within 0.5 s" in data["allocations_unknown_reason"]
    assert data["kvcache_num_blocks"] == 16


def test_the_hung_helper_process_is_gone_after_the_timeout(
    fake_optimum: FakeToolchain, real_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The helper writes nothing we could read its pid from, so find it by its command line.
    monkeypatch.setenv("FAKE_REBEL_HANG", "1")
    with pytest.raises(StudioError, match="did not finish"):
        RebelInspector(fake_optimum.python, timeout=0.3)(real_artifact, [real_artifact / "prefill.rbln"])
    helpers = []
    for stat in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmdline = stat.read_bytes()
        except OSError:
            continue
        if b"rebel_probe.py" in cmdline and str(real_artifact).encode() in cmdline:
            helpers.append(int(stat.parent.name))
    assert [pid for pid in helpers if running(pid)] == []


def test_a_failing_rebel_load_becomes_the_reason(
    fake_optimum: FakeToolchain, real_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_REBEL_FAIL", "device firmware mismatch")
    artifact = open_artifact(real_artifact, inspector_for())
    assert artifact.unknown_reason is not None
    assert artifact.unknown_reason.endswith(".rbln: RuntimeError: device firmware mismatch")


def test_without_rebel_in_the_toolchain_the_reason_says_so(
    no_toolchain: None,
    toolchain_without_rebel: FakeToolchain,
    real_artifact: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RBLN_STUDIO_OPTIMUM_CLI", str(toolchain_without_rebel.cli))
    artifact = open_artifact(real_artifact, inspector_for())
    assert artifact.unknown_reason is not None
    assert "import rebel failed" in artifact.unknown_reason and "No module named 'rebel'" in artifact.unknown_reason


def test_without_a_toolchain_there_is_no_inspector(no_toolchain: None, real_artifact: Path) -> None:
    assert inspector_for() is None and inspector_for(BackendChoice.SIM) is None
    artifact = open_artifact(real_artifact, inspector_for())
    assert artifact.unknown_reason is not None and "need the rebel package" in artifact.unknown_reason


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"error": "boom"}, "boom"),
        ({"graphs": {}}, "reported no graphs"),
        ({"graphs": {"prefill": {"alloc_per_chiplet_by_key": {"Weight": [1]}, "dram_tensor_sizes": {}}}}, "per-node"),
        ({"graphs": {"prefill": {"alloc_per_chiplet_by_key": {"W": [[-1]]}, "dram_tensor_sizes": {}}}}, "byte count"),
        ({"graphs": {"prefill": {"alloc_per_chiplet_by_key": {}}}}, "not an object"),
    ],
)
def test_malformed_helper_output_is_refused(data: dict, message: str) -> None:
    with pytest.raises(StudioError, match=message):
        allocations_from_json(data)
