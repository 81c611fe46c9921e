"""Qt-free display data for the budget explorer: the header lines and what a picked budget resolves to."""

from __future__ import annotations

from app.core.explore import BudgetStep, ClickTarget, Exploration
from app.core.sizes import format_bytes


def budget_words(step: BudgetStep) -> str:
    """'memory_budget 0.1995 or 27,992,784,896 bytes (26.07 GiB)' (the byte count alone without a 4-digit fraction)."""
    frac = f"{step.fraction:g} or " if step.fraction is not None else ""
    return f"memory_budget {frac}{step.low:,} bytes ({format_bytes(step.low)})"


def summary_lines(e: Exploration) -> list[str]:
    """The NPU and the counts, then from which budget the floor and the full pool are reached."""
    lines = [
        f"{e.npu.label}: {format_bytes(e.available)} available per NPU ({e.available:,} bytes). "
        f"kvcache_num_blocks {e.current} (floor {e.floor}, full pool {e.full})."
    ]
    for name, n, step in (("Floor", e.floor, e.floor_budget), ("Full pool", e.full, e.full_budget)):
        if step is None:
            lines.append(f"{name} ({n} blocks): not reachable within the NPU's DRAM.")
        else:
            lands = f", which resolves to {step.blocks}" if step.blocks != n else ""
            lines.append(f"{name} ({n} blocks) from {budget_words(step)}{lands}.")
    return lines


def pick_text(click: ClickTarget) -> str:
    """What 'fit to budget' writes at the picked budget, or why it cannot."""
    at = f"At {click.fraction:.4f} ({click.budget_bytes:,} bytes, {format_bytes(click.budget_bytes)}) per NPU"
    if click.blocks is None:
        return f"{at}: {click.error}"
    return f"{at} fit to budget resolves to {click.blocks} blocks."
