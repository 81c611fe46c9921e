"""Compiling through optimum-rbln-cli (the fake): the exact command, streamed log, failures and cancel leave nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import cli_command, cli_env
from fakes.helpers import argv_runs, leftovers, pids, running, wait_for
from fakes.install import FakeToolchain

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.backends.registry import compile_model
from rbln_artifact_studio.core.errors import CancelledError, InsufficientMemoryError, StudioError
from rbln_artifact_studio.core.model.rbln_config import load_config
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile

pytest_plugins = ["fakes.plugin"]

# The tiny model on one ATOM-Max with flash attention: block 1,024, 8 blocks per sequence; batch 2 gives
# full pool 16 and floor 9.
SHAPE = {"npu": "RBLN-CA25", "batch_size": 2, "max_seq_len": 8192, "kvcache_partition_len": 1024}
INSUFFICIENT = (
    "Insufficient memory for the required KV cache: only 3 blocks can be allocated, but at least 9 blocks are "
    "required. Consider reducing `max_seq_len` or `batch_size` (currently 2) to lower the memory requirement."
)


def _compile_runs(log: Path) -> list[list[str]]:
    return [argv for argv in argv_runs(log) if argv != ["--version"]]


def test_compile_streams_the_log_and_publishes_the_artifact(
    argv_log: Path, tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake waits for a gate file after its first lines; the log callback opens it when it sees them,
    # so this compile only finishes if lines reach us while the tool is still running.
    gate = tmp_path / "gate"
    monkeypatch.setenv("FAKE_OPTIMUM_GATE", str(gate))
    log: list[str] = []
    progress: list[tuple[int, int, str]] = []

    def on_line(line: str) -> None:
        log.append(line)
        if line.startswith("rbln_config:"):
            gate.touch()

    out = tmp_path / "out" / "tiny-ca25"
    request = CompileRequest(model_id=str(tiny_model), memory_budget=0.5, **SHAPE)  # type: ignore[arg-type]
    result = compile_model(
        request, out, backend=BackendChoice.OPTIMUM, progress=lambda *a: progress.append(a), log=on_line
    )

    assert (result.backend, result.path, result.num_blocks) == ("optimum", out, 16)
    assert (result.num_min_blocks, result.num_full_blocks, result.npu, result.num_devices) == (9, 16, "RBLN-CA25", 1)
    assert log[0].startswith("$ ") and "🚀 Starting compilation" in log
    assert log[-1].startswith("Saved to: ")
    assert all(total == 0 for _, total, _ in progress) and progress[-1][2] == log[-1]
    # The exact command line, with the output written to a hidden staging folder beside the target.
    (argv,) = _compile_runs(argv_log)
    staging = Path(argv[argv.index("--output-dir") + 1])
    assert staging.parent == out.parent and staging.name.startswith(".tiny-ca25.partial-")
    assert argv[argv.index("--model-id") + 1] == str(tiny_model.resolve())
    expected = ["--npu", "RBLN-CA25", "--num_devices", "1", "--batch_size", "2", "--max_seq_len", "8192"]
    expected += ["--kvcache_partition_len", "1024", "--memory-budget", "0.5"]
    assert argv[4:] == expected
    config = load_config(out)
    assert config.model.kvcache_num_blocks == 16 and "npu" not in config.raw  # the optimum layout
    assert sorted(p.name for p in out.iterdir()) == [
        "config.json",
        "decoder_batch_2.rbln",
        "prefill.rbln",
        "rbln_config.json",
    ]
    assert leftovers(out.parent) == []


def test_explicit_count_eager_and_chunk_options_reach_the_tool(
    argv_log: Path, tiny_model: Path, tmp_path: Path
) -> None:
    request = CompileRequest(
        model_id=str(tiny_model),
        npu="RBLN-CR13",
        num_devices=2,
        batch_size=4,
        max_seq_len=4096,
        attn_impl="eager",
        prefill_chunk_size=256,
        kvcache_num_blocks=6,
    )
    result = compile_model(request, tmp_path / "eager", backend=BackendChoice.OPTIMUM)
    (argv,) = _compile_runs(argv_log)
    assert argv[4:] == [
        "--npu",
        "RBLN-CR13",
        "--num_devices",
        "2",
        "--batch_size",
        "4",
        "--max_seq_len",
        "4096",
        "--attn_impl",
        "eager",
        "--prefill_chunk_size",
        "256",
        "--kvcache_num_blocks",
        "6",
    ]
    assert (result.num_blocks, result.num_min_blocks, result.num_full_blocks, result.num_devices) == (6, 4, 4, 2)
    assert any("above the full pool" in w for w in result.warnings)


def test_auto_uses_optimum_when_installed_and_the_simulator_otherwise(
    request: pytest.FixtureRequest, tiny_model: Path, tmp_path: Path
) -> None:
    compile_request = CompileRequest(model_id=str(tiny_model), memory_budget=0.5, **SHAPE)  # type: ignore[arg-type]
    request.getfixturevalue("no_toolchain")
    assert compile_model(compile_request, tmp_path / "a").backend == "sim"
    request.getfixturevalue("fake_optimum")
    assert compile_model(compile_request, tmp_path / "b").backend == "optimum"


def test_optimum_backend_unavailable_is_a_clear_error(no_toolchain: None, tiny_model: Path, tmp_path: Path) -> None:
    with pytest.raises(StudioError, match="optimum backend is not available: optimum-rbln-cli not found on PATH"):
        compile_model(CompileRequest(model_id=str(tiny_model)), tmp_path / "x", backend=BackendChoice.OPTIMUM)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "options",
    [
        {"kvcache_partition_len": 1000},  # outside the family's partition range
        {"memory_budget": 1.5},  # fraction above 1
        {"memory_budget": "20GB"},  # more bytes than the NPU has
        {"memory_budget": 0.5, "kvcache_num_blocks": 12},  # mutually exclusive
        {"kvcache_num_blocks": 5},  # below the floor of 9
        {"npu": "RBLN-XX9"},  # unknown NPU
    ],
)
def test_bad_requests_fail_with_the_simulators_message_before_the_tool_runs(
    argv_log: Path, tiny_model: Path, tmp_path: Path, options: dict[str, object]
) -> None:
    request = CompileRequest(model_id=str(tiny_model), **{**SHAPE, **options})  # type: ignore[arg-type]
    with pytest.raises(StudioError) as simulated:
        plan_compile(request)
    with pytest.raises(StudioError) as real:
        compile_model(request, tmp_path / "out", backend=BackendChoice.OPTIMUM)
    assert real.value.message == simulated.value.message
    assert _compile_runs(argv_log) == []
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("how", ["budget-too-small", "told-to-fail"])
def test_insufficient_memory_is_reported_and_leaves_nothing(
    argv_log: Path, tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    budget: object = "40MB"  # weights and workspace leave room for one block only
    if how == "told-to-fail":
        monkeypatch.setenv("FAKE_OPTIMUM_FAIL", INSUFFICIENT)
        budget = 0.5
    log: list[str] = []
    out = tmp_path / "work" / "out"
    request = CompileRequest(model_id=str(tiny_model), memory_budget=budget, **SHAPE)  # type: ignore[arg-type]
    with pytest.raises(InsufficientMemoryError) as failed:
        compile_model(request, out, backend=BackendChoice.OPTIMUM, log=log.append)
    expected = INSUFFICIENT if how == "told-to-fail" else INSUFFICIENT.replace("only 3 blocks", "only 1 blocks")
    assert failed.value.message == expected
    assert "exited with status 1;" in (hint := failed.value.hint or "") and hint.endswith("Nothing was changed.")
    assert any(line.startswith("Compiled prefill") for line in log)  # the tool had written part of it
    assert list((tmp_path / "work").iterdir()) == []  # no output, no staging folder


def test_cancel_mid_compile_ends_the_process_group_and_leaves_nothing(
    argv_log: Path, tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("FAKE_OPTIMUM_HANG", "1")
    monkeypatch.setenv("FAKE_OPTIMUM_IGNORE_TERM", "1")  # only SIGKILL after the grace period ends them
    monkeypatch.setenv("FAKE_OPTIMUM_PIDFILE", str(pidfile))
    cancel = CancelToken()

    def on_line(line: str) -> None:
        if line.startswith("compiler workers started"):
            cancel.cancel()

    from rbln_artifact_studio.backends.optimum import OptimumBackend

    out = tmp_path / "work" / "out"
    request = CompileRequest(model_id=str(tiny_model), memory_budget=0.5, **SHAPE)  # type: ignore[arg-type]
    with pytest.raises(CancelledError, match=r"was stopped before it wrote .*Nothing was changed\."):
        OptimumBackend(grace=0.3).compile(request, out, log=on_line, cancel=cancel)
    leader, worker = pids(pidfile)
    assert not running(leader) and not running(worker)
    assert list((tmp_path / "work").iterdir()) == []


def test_cli_compile_through_optimum_prints_the_result(
    fake_optimum: FakeToolchain, run_cli, tiny_model: Path, tmp_path: Path
) -> None:
    out = run_cli(
        "--model-id", tiny_model, "--output-dir", tmp_path / "c", "--npu", "RBLN-CA25", "--batch_size", "2",
        "--max_seq_len", "8192", "--kvcache_partition_len", "1024", "--memory-budget", "50%", "--json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert (result["backend"], result["kvcache_num_blocks"]) == ("optimum", 16)
    assert "✅ Model compilation completed successfully" in out.stderr  # the tool's log, streamed to stderr


def test_cli_reports_the_tools_error_in_one_line(
    fake_optimum: FakeToolchain, run_cli, tiny_model: Path, tmp_path: Path
) -> None:
    out = run_cli(
        "compile", "--model-id", tiny_model, "-o", tmp_path / "c", "--batch_size", "2", "--max_seq_len", "8192",
        "--kvcache_partition_len", "1024", "--memory-budget", "40MB", "--backend", "optimum",
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.splitlines()[-1].startswith("error: Insufficient memory for the required KV cache: only 1 blocks")
    assert not (tmp_path / "c").exists()


def test_ctrl_c_in_the_cli_ends_the_tools_process_group(
    fake_optimum: FakeToolchain, tiny_model: Path, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    env = {**cli_env(), "FAKE_OPTIMUM_HANG": "1", "FAKE_OPTIMUM_PIDFILE": str(pidfile)}
    argv = [*cli_command(), "compile", "--model-id", str(tiny_model), "-o", str(tmp_path / "work" / "out")]
    argv += ["--batch_size", "2", "--max_seq_len", "8192", "--kvcache_partition_len", "1024", "--backend", "optimum"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(pidfile.exists, what="the fake compile to start its worker")
        os.kill(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # its pipes closed and its status read here, not in the next test's collector
    assert proc.returncode == 130, stderr
    assert "cancelled: Nothing was changed." in stderr
    leader, worker = pids(pidfile)
    assert not running(leader) and not running(worker)
    assert list((tmp_path / "work").iterdir()) == []
