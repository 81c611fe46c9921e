"""How many NPUs a compile needs: the fewest devices of a SKU whose DRAM holds the weights and the floor's KV cache."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rbln_artifact_studio.core.estimation.estimator import MemoryLayout, SequenceShape, min_budget_per_npu
from rbln_artifact_studio.core.model.modelspec import ModelSpec
from rbln_artifact_studio.core.model.npu import Npu
from rbln_artifact_studio.core.simulator.memory_model import CompileShape, resizable_names, simulate_graphs
from rbln_artifact_studio.core.sizes import format_bytes

MAX_DEVICES = 64  # what the compile wizard offers; the search stops there


@dataclass(frozen=True)
class DeviceFit:
    """One device count of a SKU and what each of its NPUs would hold at the floor."""

    npu: Npu
    num_devices: int
    floor: int
    weights_per_npu: int
    other_per_npu: int  # workspace, I/O and kernels
    floor_kv_per_npu: int
    needed_per_npu: int  # what estimation needs per NPU for the floor (2 MiB alignment and the tightest chiplet)

    @property
    def fits(self) -> bool:
        return self.needed_per_npu <= self.npu.available_per_npu

    def breakdown_text(self) -> str:
        return (
            f"{format_bytes(self.weights_per_npu)} of weights + {format_bytes(self.other_per_npu)} workspace + "
            f"{format_bytes(self.floor_kv_per_npu)} of KV cache at the floor ({self.floor} blocks) = "
            f"{format_bytes(self.needed_per_npu)} of {format_bytes(self.npu.available_per_npu)} per NPU"
        )


def device_fit(spec: ModelSpec, shape: CompileShape) -> DeviceFit:
    """What each NPU of this shape holds at the floor."""
    layout = MemoryLayout.from_graphs(simulate_graphs(spec, shape), resizable_names(spec), 1)
    sequence = SequenceShape(shape.batch_size, shape.max_seq_len, shape.block_size, shape.attn)
    floor = sequence.floor
    weights, non_kv = layout.weights_per_npu(), layout.non_kv_per_npu()
    kv = max(layout.kv_bytes_per_npu(floor))
    return DeviceFit(
        shape.npu, shape.num_devices, floor, weights, non_kv - weights, kv, min_budget_per_npu(layout, shape.npu, floor)
    )


def fewest_devices(
    spec: ModelSpec, shape: CompileShape, max_devices: int = MAX_DEVICES, budget_per_npu: int | None = None
) -> DeviceFit:
    """The smallest num_devices (1 to max_devices) whose NPUs hold weights, workspace and the floor; the largest
    count tried when none does (its `fits` is then False).

    A count that fits stays fitting with more devices (each NPU holds a smaller share of the weights and of the
    KV cache; true of every preset, NPU and shape in tests/test_fewest_devices.py), so the search doubles the
    count until it fits and then bisects: at most 12 fits where counting up computed 64 when nothing fits, each a
    graph simulation, and the compile wizard asks on every key typed into its shape fields.

    With budget_per_npu, the fewest whose floor fits within that memory_budget instead of the whole NPU (a
    fraction or a byte budget is the same per NPU whatever the count, and each NPU holds less with more of them).
    """
    fits: dict[int, DeviceFit] = {}
    limit = shape.npu.available_per_npu if budget_per_npu is None else min(budget_per_npu, shape.npu.available_per_npu)

    def fit(n: int) -> DeviceFit:
        if n not in fits:
            fits[n] = device_fit(spec, replace(shape, num_devices=n))
        return fits[n]

    def fits_limit(n: int) -> bool:
        return fit(n).needed_per_npu <= limit

    low, high = 0, 1  # low: the largest count known not to fit (0: none tried); high: the next to try
    while not fits_limit(high):
        if high >= max_devices:
            return fit(high)
        low, high = high, min(2 * high, max_devices)
    while high - low > 1:  # high fits, low does not: the fewest lies in (low, high]
        middle = (low + high) // 2
        if fits_limit(middle):
            high = middle
        else:
            low = middle
    return fit(high)


def sizing_text(model_id: str, chosen: DeviceFit, fewest: DeviceFit, below: DeviceFit | None = None) -> str:
    """What the wizard's Target page says about the chosen count, with the numbers, and the fewest that fit
    (below: the count one under the fewest, to say why it falls short)."""
    name = chosen.npu.name
    if not fewest.fits:
        return (
            f"{model_id} does not fit even {fewest.num_devices} {name}: {fewest.breakdown_text()}. "
            "Choose a larger NPU or a shorter shape."
        )
    count = f"One {name}" if chosen.num_devices == 1 else f"{chosen.num_devices} x {name}"
    if not chosen.fits:
        return (
            f"{count} cannot hold {model_id}: {chosen.breakdown_text()}. "
            f"The fewest that do: {fewest.num_devices} ({fewest.breakdown_text()})."
        )
    verb = "holds" if chosen.num_devices == 1 else "hold"
    text = f"{count} {verb} {model_id}: {chosen.breakdown_text()}."
    if fewest.num_devices < chosen.num_devices:
        text += f" {fewest.num_devices} would do."
    elif below is not None:
        fewer = f"One {name}" if below.num_devices == 1 else f"{below.num_devices} x {name}"
        text += f" {fewer} would need {format_bytes(below.needed_per_npu)} per NPU: {chosen.num_devices} is the fewest."
    return text
