"""Compile defaults that work: a partition length that divides max_seq_len and the fewest devices that hold the model."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.model.modelspec import ResolvedModel, resolve_model
from rbln_artifact_studio.core.model.npu import AttnImpl, default_attn_impl, fitting_partition, get_npu
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, resolve_shape
from rbln_artifact_studio.core.simulator.devices import DeviceFit, fewest_devices


@dataclass(frozen=True)
class CompileDefaults:
    """The request a first-time user gets for a model and an NPU, and why it has that many devices."""

    request: CompileRequest
    fewest: DeviceFit | None  # None when the shape itself is invalid (no partition fits max_seq_len)


def default_partition(
    model: ResolvedModel, npu: str, max_seq_len: int | None = None, attn_impl: str | None = None
) -> int | None:
    """The partition length to propose for this model's max_seq_len on the NPU (None: eager, or none fits)."""
    family = get_npu(npu).family
    seq = max_seq_len or model.spec.max_position_embeddings
    attn = AttnImpl(attn_impl) if attn_impl else default_attn_impl(family, seq, None)
    if attn is AttnImpl.EAGER:
        return None
    return fitting_partition(family, seq)


def compile_defaults(
    model: ResolvedModel, npu: str, batch_size: int = 1, max_seq_len: int | None = None, attn_impl: str | None = None
) -> CompileDefaults:
    """The model's own max_seq_len, a partition that divides it, and the fewest devices whose DRAM holds the
    weights, the workspace and the floor's KV cache (no memory_budget: the whole NPU)."""
    seq = max_seq_len or model.spec.max_position_embeddings
    request = CompileRequest(
        model_id=model.model_id,
        npu=npu,
        batch_size=batch_size,
        max_seq_len=seq,
        attn_impl=attn_impl,
        kvcache_partition_len=default_partition(model, npu, seq, attn_impl),
    )
    try:
        shape = resolve_shape(request, model)
    except StudioError:
        return CompileDefaults(request, None)
    fewest = fewest_devices(model.spec, shape)
    return CompileDefaults(replace(request, num_devices=fewest.num_devices), fewest)


def with_defaults(request: CompileRequest, devices_given: bool = True) -> CompileRequest:
    """The request with the wizard's defaults where the user gave none: the partition that divides max_seq_len and,
    unless a device count was given, the fewest devices that hold the model (`rbln-studio-cli compile` and the
    compile wizard start from the same compile_defaults). A model that cannot be read here stays as given: the
    compile then says why."""
    if request.kvcache_partition_len is not None and devices_given:
        return request
    try:
        model = resolve_model(request.model_id)
        defaults = compile_defaults(model, request.npu, request.batch_size, request.max_seq_len, request.attn_impl)
    except StudioError:
        return request
    if request.kvcache_partition_len is None:
        request = replace(request, kvcache_partition_len=defaults.request.kvcache_partition_len)
    if not devices_given and defaults.fewest is not None and defaults.fewest.fits:
        request = replace(request, num_devices=defaults.fewest.num_devices)
    return request
