"""Resizing a real artifact through optimum-rbln-cli (the fake): validated first, in place or to a published copy."""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import cli_command, cli_env
from fakes.helpers import argv_runs, graph_header, leftovers, pids, running
from fakes.install import FakeToolchain

from rbln_artifact_studio.backends import settings
from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.backends.optimum import OptimumBackend
from rbln_artifact_studio.backends.registry import resize_artifact
from rbln_artifact_studio.cli.flags import FLAGS
from rbln_artifact_studio.core.errors import CancelledError, InsufficientMemoryError, ResizeError, StudioError
from rbln_artifact_studio.core.fleet.targets import check_target
from rbln_artifact_studio.core.location import LocalFolder
from rbln_artifact_studio.core.model.rbln_config import load_config
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.storage.fsutil import LOCK_NAME
from rbln_artifact_studio.core.storage.jsonfile import read_block_count

pytest_plugins = ["fakes.plugin"]


def _tool_runs(log: Path) -> list[list[str]]:
    """The resizes the fake was asked for (not the fixture's compile, not --version)."""
    return [argv for argv in argv_runs(log) if argv[0].startswith("--set-")]


def kv_sizes(graph: Path) -> dict[str, list[list[int]]]:
    return graph_header(graph)["dram_tensors"]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_resize_in_place_runs_the_tool_on_the_artifact(argv_log: Path, real_artifact: Path) -> None:
    before = kv_sizes(real_artifact / "prefill.rbln")["past_key_values_0"][0][0]
    log: list[str] = []
    result = resize_artifact(
        ResizeRequest(LocalFolder(real_artifact), target=12), log=log.append
    )  # auto: a real artifact goes to optimum
    assert (result.path, result.previous, result.target, result.warnings) == (real_artifact, 16, 12, [])
    # The tool writes into a staging folder beside the artifact, which is then swapped in (issue 16, point 9).
    ((*argv, flag, staging),) = _tool_runs(argv_log)
    assert argv == ["--set-kvcache-num-blocks", "12", "--model-id", str(real_artifact.resolve())]
    assert flag == "--output-dir" and Path(staging).parent == real_artifact.parent
    assert Path(staging).name.startswith(".tiny-ca25.partial-") and not Path(staging).exists()
    assert read_block_count(real_artifact) == 12
    assert kv_sizes(real_artifact / "prefill.rbln")["past_key_values_0"][0][0] == before // 16 * 12
    assert not (real_artifact / LOCK_NAME).exists()
    assert leftovers(real_artifact.parent) == []


def test_resize_to_a_copy_publishes_a_complete_copy_and_leaves_the_source(argv_log: Path, real_artifact: Path) -> None:
    source = snapshot(real_artifact)
    out = real_artifact.parent / "tiny-ca25-20"
    result = resize_artifact(ResizeRequest(LocalFolder(real_artifact), target=20, output=LocalFolder(out)))
    assert (result.path, result.previous, result.target) == (out, 16, 20)
    # Above the full pool; rebel (the fake) gives the allocation tables, so 20 is known to fit: no runtime warning.
    assert (
        len(result.warnings) == 1 and result.warnings == check_target(load_config(real_artifact).model, 20).warnings[1:]
    )
    (argv,) = _tool_runs(argv_log)
    staging = Path(argv[argv.index("--output-dir") + 1])
    assert argv[:4] == ["--set-kvcache-num-blocks", "20", "--model-id", str(real_artifact.resolve())]
    assert staging.parent == out.parent and staging.name.startswith(".tiny-ca25-20.partial-")
    assert snapshot(real_artifact) == source
    assert read_block_count(out) == 20
    assert sorted(p.name for p in out.iterdir()) == sorted(source)  # no lock file or marker carried over
    assert result.bytes_copied == sum(p.stat().st_size for p in out.iterdir())
    assert leftovers(out.parent) == []


def test_a_target_below_the_floor_is_refused_before_the_tool_runs(argv_log: Path, real_artifact: Path) -> None:
    with pytest.raises(ResizeError) as refused:
        resize_artifact(ResizeRequest(LocalFolder(real_artifact), target=5))
    assert refused.value.message == check_target(load_config(real_artifact).model, 5).error
    assert _tool_runs(argv_log) == []


def test_fit_to_budget_uses_the_tool_and_agrees_with_the_studios_estimate(argv_log: Path, mid_artifact: Path) -> None:
    result = resize_artifact(
        ResizeRequest(LocalFolder(mid_artifact), budget_text="160MB", output=LocalFolder(mid_artifact.parent / "fit"))
    )
    assert (result.target, result.warnings) == (12, [])  # the tool and the studio's estimate agree: no note
    assert _tool_runs(argv_log)[0][:2] == ["--set-memory-budget", "160MB"]


def test_a_budget_below_the_floor_fails_with_the_numbers_before_the_tool_runs(
    argv_log: Path, real_artifact: Path
) -> None:
    with pytest.raises(InsufficientMemoryError) as failed:
        resize_artifact(ResizeRequest(LocalFolder(real_artifact), budget_text="40MB"))
    assert failed.value.message.startswith("Insufficient memory for the required KV cache: the weights and workspace")
    assert "exceed the memory_budget of 40 MiB (41,943,040 B) per NPU" in failed.value.message
    assert "a memory_budget of at least" in (failed.value.hint or "")
    assert _tool_runs(argv_log) == [] and read_block_count(real_artifact) == 16


def test_a_failing_tool_in_place_says_what_state_the_artifact_is_in(
    argv_log: Path, real_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OPTIMUM_FAIL", "rescaling is not supported by this rebel-compiler")
    with pytest.raises(StudioError) as failed:
        resize_artifact(ResizeRequest(LocalFolder(real_artifact), target=12))
    assert failed.value.message == "rescaling is not supported by this rebel-compiler"
    assert "tiny-ca25 still records kvcache_num_blocks=16" in (failed.value.hint or "")


def test_cancel_during_a_copy_ends_the_tool_and_writes_nothing(
    argv_log: Path, real_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("FAKE_OPTIMUM_HANG", "1")
    monkeypatch.setenv("FAKE_OPTIMUM_PIDFILE", str(pidfile))
    cancel = CancelToken()

    def on_line(line: str) -> None:
        if line.startswith("compiler workers started"):
            cancel.cancel()

    source = snapshot(real_artifact)
    out = real_artifact.parent / "copy"
    with pytest.raises(CancelledError):
        resize_artifact(
            ResizeRequest(LocalFolder(real_artifact), target=12, output=LocalFolder(out)), log=on_line, cancel=cancel
        )
    assert all(not running(pid) for pid in pids(pidfile))
    assert not out.exists() and leftovers(out.parent) == []
    assert snapshot(real_artifact) == source


def test_cancel_during_an_in_place_resize_stops_the_tool_and_keeps_the_old_artifact(
    argv_log: Path, real_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Staged, the in-place resize can be cancelled: the tool stops, the staging folder goes, nothing changed."""
    gate = tmp_path / "gate"
    monkeypatch.setenv("FAKE_OPTIMUM_GATE", str(gate))
    before = snapshot(real_artifact)
    cancel = CancelToken()

    def on_line(line: str) -> None:
        if line.startswith("Loaded"):
            cancel.cancel()

    with pytest.raises(CancelledError):
        OptimumBackend(grace=0.3).resize(ResizeRequest(LocalFolder(real_artifact), 12), log=on_line, cancel=cancel)
    assert snapshot(real_artifact) == before and leftovers(real_artifact.parent) == []


def test_an_in_place_resize_without_room_for_the_staged_copy_says_so_with_the_numbers(
    argv_log: Path, real_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rbln_artifact_studio.core.storage import swap

    monkeypatch.setattr(swap, "free_bytes", lambda _folder: 1000)
    before = snapshot(real_artifact)
    with pytest.raises(ResizeError) as err:
        resize_artifact(ResizeRequest(LocalFolder(real_artifact), target=12))
    needed = sum(len(b) for b in before.values())
    assert f"({needed:,} B (" in err.value.message and "has 1,000 B (" in err.value.message
    assert (
        "--output-dir" in err.value.one_line(FLAGS) and _tool_runs(argv_log) == [] and snapshot(real_artifact) == before
    )


def test_auto_without_optimum_refuses_a_real_artifact_clearly(
    real_artifact: Path, request: pytest.FixtureRequest
) -> None:
    request.getfixturevalue("no_toolchain")
    with pytest.raises(StudioError, match="compiled by the real compiler; resizing it needs optimum-rbln-cli") as err:
        resize_artifact(ResizeRequest(LocalFolder(real_artifact), target=12))
    assert "not found on PATH" in err.value.message
    assert read_block_count(real_artifact) == 16


def test_simulator_artifacts_stay_with_the_simulator(argv_log: Path, cr13_artifact: Path) -> None:
    result = resize_artifact(ResizeRequest(LocalFolder(cr13_artifact), target=12))  # auto
    assert result.target == 12 and _tool_runs(argv_log) == []
    with pytest.raises(ResizeError, match="written by the built-in simulator"):
        resize_artifact(ResizeRequest(LocalFolder(cr13_artifact), target=10, backend=BackendChoice.OPTIMUM))
    assert argv_runs(argv_log) == []  # refused before the toolchain is asked: not even its --version was run


def test_cli_resizes_a_real_artifact_through_the_tool(
    fake_optimum: FakeToolchain, run_cli, real_artifact: Path
) -> None:
    out = run_cli(
        "--set-kvcache-num-blocks", "10", "--model-id", real_artifact, "--output-dir", real_artifact.parent / "c"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(f"Set kvcache_num_blocks to 10 for artifact at {real_artifact.parent / 'c'}")
    assert read_block_count(real_artifact.parent / "c") == 10
    assert run_cli("set-kvcache-num-blocks", real_artifact, "3").stderr.startswith(
        "error: kvcache_num_blocks=3 is below"
    )


def test_ctrl_c_during_an_in_place_resize_in_the_cli_stops_it_and_keeps_the_old_artifact(
    fake_optimum: FakeToolchain, real_artifact: Path, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    env = {**cli_env(), "FAKE_OPTIMUM_GATE": str(gate)}
    before = snapshot(real_artifact)
    argv = [*cli_command(), "set-kvcache-num-blocks", str(real_artifact), "12"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("Loaded"):
                proc.send_signal(signal.SIGINT)
                break
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # its pipes closed and its status read here, not in the next test's collector
    assert proc.returncode == 130
    assert snapshot(real_artifact) == before and leftovers(real_artifact.parent) == []


def test_cancelling_a_resize_stops_a_hanging_inspection_at_once(
    fake_optimum: FakeToolchain, real_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_REBEL_HANG", "1")  # the artifact is read through rebel before the resize
    # Twice pytest-timeout's 300 s: a resize that waited for the helper's timeout instead of stopping it fails.
    monkeypatch.setenv(settings.ENV_PROBE_TIMEOUT, "600")
    cancel = CancelToken()
    threading.Timer(0.3, cancel.cancel).start()  # the window closing: "Cancel them and quit?"
    with pytest.raises(CancelledError):
        resize_artifact(
            ResizeRequest(LocalFolder(real_artifact), target=12, output=LocalFolder(real_artifact.parent / "copy")),
            cancel=cancel,
        )
    assert not (real_artifact.parent / "copy").exists() and read_block_count(real_artifact) == 16


def test_a_simulator_artifact_is_resized_without_looking_for_a_toolchain(
    cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The toolchain is consulted only for artifacts that need it: a broken one never fails a simulator resize."""
    from rbln_artifact_studio.backends import registry

    def no_toolchain(*args: object, **kwargs: object) -> None:
        raise AssertionError("the toolchain was looked for")

    monkeypatch.setattr(registry, "locate", no_toolchain)
    resize_artifact(ResizeRequest(LocalFolder(cr13_artifact), target=12))
    assert read_block_count(cr13_artifact) == 12
