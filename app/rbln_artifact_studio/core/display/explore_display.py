"""Qt-free display data for the budget explorer: the header lines and what a picked budget resolves to."""

from __future__ import annotations

from rbln_artifact_studio.core.display.presentation import breakdown_rows, rows_text
from rbln_artifact_studio.core.planning.explore import ClickTarget, Exploration, WhatIf, exploration_text
from rbln_artifact_studio.core.sizes import format_bytes


def summary_lines(e: Exploration) -> list[str]:
    """The CLI's header: the NPU and the counts, then the budget the floor and the full pool are reached from."""
    return [line.strip() for line in exploration_text(e).splitlines()[:3]]


def pick_text(click: ClickTarget) -> str:
    """What 'fit to budget' writes at the picked budget, or why it cannot."""
    at = f"At {click.fraction:.4f} ({click.budget_bytes:,} bytes, {format_bytes(click.budget_bytes)}) per NPU"
    if click.blocks is None:
        return f"{at}: {click.error}"
    return f"{at} fit to budget resolves to {click.blocks} blocks."


def what_if_text(result: WhatIf, chiplets: int) -> str:
    """`inspect --what-if`: the sentence and the table the details show under that budget."""
    return f"{result.summary()}\n{rows_text(breakdown_rows(result.breakdown, chiplets))}"
