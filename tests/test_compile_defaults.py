"""Compile defaults that work for every bundled preset and NPU, and errors that carry the fixes they list."""

from __future__ import annotations

import pytest

from rbln_artifact_studio.core.errors import InsufficientMemoryError, ShapeError, StudioError
from rbln_artifact_studio.core.model.modelspec import preset_ids, resolve_model
from rbln_artifact_studio.core.model.npu import SKUS
from rbln_artifact_studio.core.simulator.compile_defaults import compile_defaults
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile
from rbln_artifact_studio.core.simulator.devices import MAX_DEVICES


@pytest.mark.parametrize("npu", list(SKUS))
@pytest.mark.parametrize("model_id", preset_ids())
def test_the_defaults_compile_with_the_fewest_devices(model_id: str, npu: str) -> None:
    model = resolve_model(model_id)
    defaults = compile_defaults(model, npu)
    assert defaults.fewest is not None and defaults.fewest.fits
    plan = plan_compile(defaults.request, model)  # raises when the defaults do not work
    assert plan.num_blocks >= plan.floor
    n = defaults.request.num_devices
    assert not any("fail to allocate" in w for w in plan.warnings)
    if n > 1:  # one device fewer does not hold weights, workspace and the floor: refused, or warned (eager)
        fewer = CompileRequest(**{**defaults.request.__dict__, "num_devices": n - 1})
        try:
            warnings = plan_compile(fewer, model).warnings
        except StudioError:
            warnings = ["refused"]
        assert any(w == "refused" or "fail to allocate" in w for w in warnings)
    assert n <= MAX_DEVICES


def test_qwen3_8b_on_atom_max_gets_partition_8192_and_two_devices() -> None:
    defaults = compile_defaults(resolve_model("Qwen/Qwen3-8B"), "RBLN-CA25")
    r = defaults.request
    assert (r.max_seq_len, r.kvcache_partition_len, r.num_devices, r.batch_size) == (40_960, 8192, 2, 1)


def test_the_partition_error_carries_each_length_that_fits() -> None:
    with pytest.raises(ShapeError) as err:
        plan_compile(CompileRequest("Qwen/Qwen3-8B", npu="RBLN-CR13", kvcache_partition_len=16_384))
    assert [dict(f.changes)["kvcache_partition_len"] for f in err.value.fixes] == [1024, 2048, 4096, 8192]


@pytest.mark.parametrize(("budget", "shown"), [("1", "1 byte"), ("0.01", "1.4 GiB (1,503,238,553 B)")])
def test_a_budget_below_the_weights_says_the_weights_do_not_fit(budget: str, shown: str) -> None:
    request = CompileRequest(
        "Qwen/Qwen3-8B", npu="RBLN-CR13", batch_size=8, max_seq_len=40_960, kvcache_partition_len=8192,
        memory_budget=budget,
    )  # fmt: skip
    with pytest.raises(InsufficientMemoryError) as err:
        plan_compile(request)
    assert err.value.message == (
        "Insufficient memory for the required KV cache: the weights alone, 15.27 GiB (16,391,340,032 B) per NPU, "
        f"exceed the memory_budget of {shown} per NPU, so no KV cache block can be allocated; at least 9 blocks "
        "are required."
    )
    assert "0 blocks fit" in (err.value.hint or "")
    assert [f.label for f in err.value.fixes] == ["memory_budget 0.1995"]


def test_too_few_devices_carries_the_fewest_that_fit() -> None:
    with pytest.raises(InsufficientMemoryError) as err:
        plan_compile(CompileRequest("Qwen/Qwen3-8B", npu="RBLN-CA25", kvcache_partition_len=8192))
    assert [f.changes for f in err.value.fixes] == [(("num_devices", 2),)]
