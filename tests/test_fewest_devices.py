"""The fewest NPUs a compile needs (the wizard's and the CLI's default device count), found by doubling and bisecting,
is the count that counting up from one finds, on every preset and NPU family."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rbln_artifact_studio.core.model.modelspec import preset_ids, resolve_model
from rbln_artifact_studio.core.simulator.compile_defaults import default_partition
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, resolve_shape
from rbln_artifact_studio.core.simulator.devices import DeviceFit, device_fit, fewest_devices
from rbln_artifact_studio.core.simulator.memory_model import CompileShape


def counted_up(model_id: str, shape: CompileShape, max_devices: int) -> DeviceFit:
    spec = resolve_model(model_id).spec
    for n in range(1, max_devices + 1):
        fit = device_fit(spec, replace(shape, num_devices=n))
        if fit.fits:
            return fit
    return fit


def shape_of(model_id: str, npu: str, batch: int, seq: int) -> CompileShape:
    model = resolve_model(model_id)
    partition = default_partition(model, npu, seq, None)
    request = CompileRequest(
        model_id=model_id, npu=npu, batch_size=batch, max_seq_len=seq, kvcache_partition_len=partition
    )
    return resolve_shape(request, model)


@pytest.mark.parametrize(
    ("model_id", "npu", "batch", "seq", "max_devices"),
    [
        ("Qwen/Qwen3-0.6B", "RBLN-CA25", 1, 4096, 64),  # one NPU holds it
        ("Qwen/Qwen3-8B", "RBLN-CA25", 4, 8192, 64),
        ("meta-llama/Llama-3.3-70B-Instruct", "RBLN-CA25", 1, 8192, 64),  # many NPUs
        ("meta-llama/Llama-3.3-70B-Instruct", "RBLN-CR13", 16, 131072, 64),
        ("Qwen/Qwen2.5-14B-Instruct", "RBLN-CA25", 256, 32768, 12),  # none fits below the bound
    ],
)
def test_the_search_finds_the_count_that_counting_up_finds(
    model_id: str, npu: str, batch: int, seq: int, max_devices: int
) -> None:
    shape = shape_of(model_id, npu, batch, seq)
    found = fewest_devices(resolve_model(model_id).spec, shape, max_devices)
    expected = counted_up(model_id, shape, max_devices)
    assert (found.num_devices, found.fits) == (expected.num_devices, expected.fits)
    assert found == expected


@pytest.mark.parametrize("model_id", preset_ids())
def test_a_count_that_fits_keeps_fitting_with_more_devices(model_id: str) -> None:
    """What the search relies on, for every preset on each NPU family at a long and a wide shape."""
    spec = resolve_model(model_id).spec
    for npu, batch, seq in (("RBLN-CA25", 1, 32768), ("RBLN-CR13", 32, 8192)):
        shape = shape_of(model_id, npu, batch, seq)
        fits = [device_fit(spec, replace(shape, num_devices=n)).fits for n in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)]
        assert fits == sorted(fits), (npu, batch, seq, fits)  # False… then True…


def test_within_a_budget_the_search_finds_the_fewest_whose_floor_fits_it() -> None:
    """An impossible memory_budget for one NPU: the count the compile's fix offers holds the floor within it."""
    spec = resolve_model("Qwen/Qwen3-8B").spec
    shape = shape_of("Qwen/Qwen3-8B", "RBLN-CR13", 8, 40960)
    budget = int(shape.npu.available_per_npu * 0.15)
    found = fewest_devices(spec, shape, budget_per_npu=budget)
    counted = next(n for n in range(1, 65) if device_fit(spec, replace(shape, num_devices=n)).needed_per_npu <= budget)
    assert found.num_devices == counted == 2 and found.needed_per_npu <= budget
    assert fewest_devices(spec, shape).num_devices == 1  # the whole NPU: one holds it
