"""Qt-free display data for the desktop app: the text, rows and chart segments its widgets only lay out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.display.kinds_report import kind_rows
from rbln_artifact_studio.core.model.blocks import full_sequences, usable_tokens
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact, pluralize

if TYPE_CHECKING:  # types only: the GUI imports this module before its window shows; the estimator and pydantic
    # load later, in the workers that read artifacts
    from rbln_artifact_studio.core.estimation.estimator import Breakdown, ChipletUsage
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.core.model.config_fields import ConfigFields

# Segment keys, bottom to top of a bar; the chart maps each to a colour and the legend to a label.
SEGMENT_LABELS = {
    "reserve": "System reserve",
    "weights": "Weights",
    "workspace": "Workspace / other",
    "kv": "KV cache",
    "free": "Free in budget",
    "outside": "Outside budget",
}


@dataclass(frozen=True)
class Segment:
    """One slice of a chiplet's DRAM bar."""

    key: str
    label: str
    nbytes: int

    @property
    def tooltip(self) -> str:
        return f"{self.label}: {format_bytes_exact(self.nbytes)}"


NO_BUDGET = "no memory_budget recorded: the whole NPU"
NO_BUDGET_LABELS = {**SEGMENT_LABELS, "free": "Free"}


def segment_labels(budget_set: bool) -> dict[str, str]:
    """Legend labels: without a budget there is only 'Free' (and never anything outside a budget)."""
    return SEGMENT_LABELS if budget_set else NO_BUDGET_LABELS


def usage_segments(u: ChipletUsage, budget_set: bool = True) -> list[Segment]:
    """Reserve, weights, workspace, KV, free inside the budget and DRAM outside it; zero-sized slices kept."""
    free = max(u.free_in_budget, 0)
    outside = max(u.available - max(u.budget, u.used), 0)
    values = {
        "reserve": u.reserve,
        "weights": u.weights,
        "workspace": u.workspace,
        "kv": u.kv,
        "free": free,
        "outside": outside,
    }
    labels = segment_labels(budget_set)
    return [Segment(key, labels[key], values[key]) for key in SEGMENT_LABELS]


def usage_tooltip(u: ChipletUsage, tightest: bool, budget_set: bool = True) -> str:
    """Every figure of one chiplet in exact bytes, for the chart's and the table's tooltips."""
    lines = [u.label + ("  (tightest)" if tightest else "")]
    lines += [s.tooltip for s in usage_segments(u, budget_set) if budget_set or s.key != "outside"]
    if budget_set:
        lines.append(f"Budget: {format_bytes_exact(u.budget)}")
    else:
        lines.append(f"{NO_BUDGET[0].upper()}{NO_BUDGET[1:]} ({format_bytes_exact(u.available)} per chiplet)")
    if u.free_in_budget < 0:
        lines.append(f"Over budget by {format_bytes_exact(-u.free_in_budget)}")
    for key, value in sorted(u.by_key.items()):
        lines.append(f"  {key}: {format_bytes_exact(value)}")
    return "\n".join(lines)


def bar_label(u: ChipletUsage, chiplets: int) -> str:
    """'NPU 0' on one-chiplet NPUs, 'NPU 0 · c2' per chiplet on Rebel100."""
    return f"NPU {u.node}" if chiplets == 1 else f"NPU {u.node} · c{u.chiplet}"


def breakdown_caption(b: Breakdown) -> str:
    t = b.tightest
    limit = "budget" if b.budget_set else "DRAM"
    verdict = "fits" if b.fits else f"does not fit: {t.label} is over its {limit} by {format_bytes(-t.free_in_budget)}"
    budget = f"budget {format_bytes(b.budget_per_npu)} per NPU" if b.budget_set else NO_BUDGET
    blocks = pluralize(b.num_blocks, "block")
    return f"{blocks}, {budget}: {verdict}; tightest {t.label} ({format_bytes(t.free_in_budget)} free)"


@dataclass(frozen=True)
class BlockFacts:
    """kvcache_num_blocks against the floor and full pool, and what the pool holds in tokens."""

    num_blocks: int
    floor: int
    full: int
    block_size: int
    tokens: int
    sequences: int
    per_block_bytes: int | None  # None as well when no tensor scales with the count
    fixed_bytes: int = 0  # KV bytes that keep their size (is_auto false, sliding windows)

    @property
    def headline(self) -> str:
        return f"kvcache_num_blocks {self.num_blocks} (floor {self.floor}, full pool {self.full})"

    @property
    def count_label(self) -> str:
        """'1 block', '21 blocks': the gauge's caption, painted on the GUI thread, which loads no humanfriendly."""
        return f"{self.num_blocks} block" if self.num_blocks == 1 else f"{self.num_blocks} blocks"

    @property
    def meaning(self) -> str:
        seq = "sequence" if self.sequences == 1 else "sequences"
        text = f"{self.tokens:,} tokens of {self.block_size:,}-token blocks: {self.sequences} full-length {seq} at once"
        if self.per_block_bytes is not None:
            text += f"; {format_bytes(self.per_block_bytes)} per block"
        if self.fixed_bytes:
            text += f"; {format_bytes(self.fixed_bytes)} of fixed size (not resized with the count)"
        return text


def block_facts(config: ConfigFields, num_blocks: int | None = None) -> BlockFacts:
    n = max(config.kvcache_num_blocks if num_blocks is None else num_blocks, 0)
    return BlockFacts(
        num_blocks=n,
        floor=config.num_min_blocks,
        full=config.num_full_blocks,
        block_size=config.block_size,
        tokens=usable_tokens(n, config.max_seq_len, config.block_size, config.batch_size),
        sequences=full_sequences(n, config.max_seq_len, config.block_size, config.batch_size),
        per_block_bytes=config.kv_bytes_per_block if config.resizable_names else None,
        fixed_bytes=config.kv_fixed_bytes,
    )


def settings_rows(artifact: Artifact) -> list[tuple[str, str]]:
    """The settings an ops engineer checks first, as (label, value) rows."""
    c = artifact.config
    npu = artifact.npu
    kv = artifact.kv_bytes_per_npu
    rows = [
        *kind_rows(artifact),
        ("Model class", c.cls_name or "unknown"),
        ("NPU", f"{npu.label if npu else (c.npu or 'unknown')} x{c.num_devices}"),
        ("Batch size", str(c.batch_size)),
        ("max_seq_len", f"{c.max_seq_len:,}"),
        ("Attention", c.attn.value),
        ("KV block size", f"{c.block_size:,}"),
        ("Partition length", f"{c.kvcache_partition_len:,}" if c.kvcache_partition_len else "—"),
        ("Prefill chunk", f"{c.prefill_chunk_size:,}" if c.prefill_chunk_size else "—"),
        ("dtype", c.dtype or "—"),
        (
            "KV cache per NPU",
            format_bytes(kv) if kv is not None else f"unknown: {c.kv_unknown_reason or 'no cache_metas'}",
        ),
        ("Compiled by", "built-in simulator" if artifact.is_simulated else "optimum-rbln (real compiler)"),
    ]
    compiled = artifact.compiled_blocks
    if compiled is not None and compiled != c.kvcache_num_blocks:
        rows.append(("Compiler resolved", f"{compiled} block" + ("" if compiled == 1 else "s")))
    return rows


def file_rows(artifact: Artifact) -> list[tuple[str, int]]:
    """Every file of the artifact with its size, compiled graphs first."""
    return [(f"{g.name}.rbln", g.size) for g in artifact.graph_files] + list(artifact.other_files)


# The chart's legend, the desktop's table and the CLI's table name the same parts, in the same order.
BREAKDOWN_HEADERS = ("NPU", "System reserve", "Weights", "Workspace / other", "KV cache", "Free in budget", "Budget")
NO_BUDGET_HEADERS = (*BREAKDOWN_HEADERS[:5], "Free")  # no budget recorded: no budget column
TIGHTEST_MARK = "  ◀ tightest"


@dataclass(frozen=True)
class BreakdownRows:
    """The per-(NPU, chiplet) table of a breakdown as text, in exact bytes: the details' table and `inspect`."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    values: tuple[tuple[int, ...], ...]  # each row's byte counts (the cells after the first)
    tightest: int  # the tightest row's index


def breakdown_rows(breakdown: Breakdown, chiplets: int) -> BreakdownRows:
    """The table's headers and rows: the first column names "NPU 0", or "NPU 0 · c2" per chiplet on Rebel100."""
    headers = BREAKDOWN_HEADERS if breakdown.budget_set else NO_BUDGET_HEADERS
    headers = ("NPU" if chiplets == 1 else "NPU · chiplet", *headers[1:])
    rows, values = [], []
    tightest = 0
    for i, u in enumerate(breakdown.usages):
        is_tight = u is breakdown.tightest
        tightest = i if is_tight else tightest
        figures = (u.reserve, u.weights, u.workspace, u.kv, u.free_in_budget, u.budget)[: len(headers) - 1]
        name = bar_label(u, chiplets) + (TIGHTEST_MARK if is_tight else "")
        rows.append((name, *(f"{v:,} B" for v in figures)))
        values.append(figures)
    return BreakdownRows(headers, tuple(rows), tuple(values), tightest)


def rows_text(table: BreakdownRows) -> str:
    """The table as aligned text for a terminal: names left, bytes right, as the desktop shows them."""
    cells = [table.headers, *table.rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(table.headers))]
    return "\n".join(
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in cells
    )
