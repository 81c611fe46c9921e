"""Two artifacts side by side: the settings that differ, and the difference in blocks, tokens, sequences and bytes."""

from __future__ import annotations

from dataclasses import dataclass

from rbln_artifact_studio.core.display.presentation import block_facts, settings_rows
from rbln_artifact_studio.core.estimation.estimator import Breakdown
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.sizes import format_bytes


@dataclass(frozen=True)
class SettingRow:
    """One setting of both artifacts, as the detail panel writes it."""

    name: str
    left: str
    right: str

    @property
    def differs(self) -> bool:
        return self.left != self.right


@dataclass(frozen=True)
class Difference:
    """One figure of both artifacts and right minus left (None where an artifact's figure is unknown)."""

    name: str
    left: int | None
    right: int | None
    unit: str  # "blocks", "tokens", "sequences" or "bytes"

    @property
    def delta(self) -> int | None:
        return None if self.left is None or self.right is None else self.right - self.left

    def text(self, value: int | None) -> str:
        if value is None:
            return "unknown"
        return format_bytes(value) if self.unit == "bytes" else f"{value:,}"

    def delta_text(self) -> str:
        d = self.delta
        if d is None:
            return "unknown"
        if d == 0:
            return "same"
        sign = "+" if d > 0 else "−"
        size = format_bytes(abs(d)) if self.unit == "bytes" else f"{abs(d):,} {self.unit}"
        return f"{sign}{size}"


@dataclass(frozen=True)
class Comparison:
    left: Artifact
    right: Artifact
    settings: list[SettingRow]
    differences: list[Difference]
    left_breakdown: Breakdown | None
    right_breakdown: Breakdown | None

    @property
    def scale_bytes(self) -> int:
        """One DRAM scale for both charts: the larger chiplet total, so equal bars mean equal bytes."""
        totals = [u.total for b in (self.left_breakdown, self.right_breakdown) if b is not None for u in b.usages]
        return max(totals, default=0)


def _kv_per_npu(artifact: Artifact, fit: Breakdown | None) -> int | None:
    """Aligned KV bytes on NPU 0 when the allocations are known, else rbln_config.json's figure."""
    if fit is not None:
        return sum(u.kv for u in fit.usages if u.node == 0)
    return artifact.kv_bytes_per_npu


def _used_per_npu(fit: Breakdown | None) -> int | None:
    if fit is None:
        return None
    per_npu: dict[int, int] = {}
    for u in fit.usages:
        per_npu[u.node] = per_npu.get(u.node, 0) + u.used
    return max(per_npu.values())


def compare(left: Artifact, right: Artifact) -> Comparison:
    """Settings in the detail panel's order (a setting only one artifact has is compared with '—')."""
    left_rows, right_rows = dict(settings_rows(left)), dict(settings_rows(right))
    names = list(left_rows) + [n for n in right_rows if n not in left_rows]
    lf, rf = block_facts(left.config), block_facts(right.config)
    head = [
        SettingRow("kvcache_num_blocks", str(lf.num_blocks), str(rf.num_blocks)),
        SettingRow("Floor / full pool", f"{lf.floor} / {lf.full}", f"{rf.floor} / {rf.full}"),
    ]
    settings = head + [SettingRow(n, left_rows.get(n, "—"), right_rows.get(n, "—")) for n in names]
    lb, rb = left.breakdown(), right.breakdown()
    differences = [
        Difference("KV blocks", lf.num_blocks, rf.num_blocks, "blocks"),
        Difference("Tokens the KV cache holds", lf.tokens, rf.tokens, "tokens"),
        Difference("Full-length sequences at once", lf.sequences, rf.sequences, "sequences"),
        Difference("KV cache per NPU", _kv_per_npu(left, lb), _kv_per_npu(right, rb), "bytes"),
        Difference("DRAM used per NPU (weights, workspace, KV)", _used_per_npu(lb), _used_per_npu(rb), "bytes"),
    ]
    return Comparison(left, right, settings, differences, lb, rb)
