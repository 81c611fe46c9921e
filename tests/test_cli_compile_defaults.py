"""`rbln-studio-cli compile` starts from the compile wizard's defaults (issue #23 item 9): one function for both."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from rbln_artifact_studio.core.model.modelspec import resolve_model
from rbln_artifact_studio.core.simulator.compile_defaults import compile_defaults, with_defaults
from rbln_artifact_studio.core.simulator.compiler import CompileRequest

Run = Callable[..., CompletedProcess[str]]


def test_the_issues_command_compiles_with_the_wizards_partition(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "qwen3-0.6b"
    result = run_cli("compile", "--model-id", "Qwen/Qwen3-0.6B", "-o", out, "--npu", "RBLN-CA25", "--json")
    assert result.returncode == 0, result.stderr  # it said: partition 16,384 does not divide max_seq_len 40,960
    wizard = compile_defaults(resolve_model("Qwen/Qwen3-0.6B"), "RBLN-CA25").request
    written = json.loads((out / "rbln_config.json").read_text())
    assert written["kvcache_partition_len"] == wizard.kvcache_partition_len
    assert json.loads(result.stdout)["num_devices"] == wizard.num_devices


@pytest.mark.parametrize("model_id", ["Qwen/Qwen3-0.6B", "Qwen/Qwen3-8B"])
def test_what_the_user_gave_is_kept(model_id: str) -> None:
    given = CompileRequest(model_id=model_id, npu="RBLN-CA25", num_devices=2, kvcache_partition_len=4096)
    assert with_defaults(given, devices_given=True) == given
    filled = with_defaults(CompileRequest(model_id=model_id, npu="RBLN-CA25"), devices_given=False)
    wizard = compile_defaults(resolve_model(model_id), "RBLN-CA25").request
    assert (filled.kvcache_partition_len, filled.num_devices) == (wizard.kvcache_partition_len, wizard.num_devices)


def test_a_model_it_cannot_read_stays_as_given() -> None:
    request = CompileRequest(model_id="/no/such/model")
    assert with_defaults(request, devices_given=False) == request
