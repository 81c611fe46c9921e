"""The co-location plan as text: the CLI's report and the planner view's verdict lines, titles, labels and tooltips."""

from __future__ import annotations

from rbln_artifact_studio.core.planning.planner import (
    ASSUMPTION,
    FamilyStack,
    Fix,
    Plan,
    Share,
    StackedChiplet,
    Verdict,
)
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact


def headroom_words(headroom: int) -> str:
    """'headroom 1,234 bytes (1.21 KiB)' or 'OVER by …', as the CLI's plan report says it."""
    if headroom >= 0:
        return f"headroom {headroom:,} bytes ({format_bytes(headroom)})"
    return f"OVER by {-headroom:,} bytes ({format_bytes(-headroom)})"


def headroom_short(headroom: int) -> str:
    """'+10.2 GiB free' or '−100 MiB over' (under a bar, in a table cell)."""
    return f"+{format_bytes(headroom)} free" if headroom >= 0 else f"−{format_bytes(-headroom)} over"


def plan_text(p: Plan, fixes: list[Fix]) -> str:
    """The report `rbln-studio-cli plan` prints: verdict first, then each family's chiplets, then the fixes."""
    lines = [f"{len(p.members)} artifacts: {p.verdict.value}"]
    lines += [f"  {r}" for r in p.reasons]
    lines.append(f"  Assumption: {ASSUMPTION}")
    for s in p.stacks:
        lines.append(family_title(s))
        lines += [f"  {n}" for n in s.notes]
        for m in (*s.members, *s.unknown):
            c = m.artifact.config
            lines.append(
                f"  {m.label}: {c.npu} x{c.num_devices}, kvcache_num_blocks {c.kvcache_num_blocks} "
                f"(floor {c.num_min_blocks}, full pool {c.num_full_blocks})"
                + (", allocations unknown" if m.unknown_reason else "")
            )
        for ch in s.chiplets:
            parts = " + ".join(f"{sh.label} {format_bytes(sh.used)}" for sh in ch.shares) or "nothing"
            mark = "  <- tightest" if ch is s.tightest else ""
            lines.append(f"  {ch.label}: {parts} of {format_bytes(ch.available)}: {headroom_words(ch.headroom)}{mark}")
    if fixes:
        lines.append("Fix (one artifact resized, the others unchanged):")
        for f in fixes:
            lines += [f"  {f.describe()}", *(f"    warning: {w}" for w in f.warnings)]
    return "\n".join(lines)


def family_state(s: FamilyStack) -> str:
    if not s.fits:
        return "does not fit"
    return "unknown (the known artifacts alone fit)" if s.unknown else "fit"


def family_title(s: FamilyStack) -> str:
    """'Rebel100 (RBLN-CR13), 1 NPU(s): fit' (the CLI's family line)."""
    return f"{s.family} ({', '.join(sorted(set(s.npus)))}), {s.num_npus} NPU(s): {family_state(s)}"


def family_summary(s: FamilyStack) -> str:
    """The tightest chiplet named with its headroom or overflow, and how many chiplets overflow."""
    t = s.tightest
    over = s.overflowing
    text = f"{s.family}: tightest {t.label}, {headroom_words(t.headroom)}"
    if over:
        text += f"; {len(over)} of {len(s.chiplets)} chiplet(s) over"
    return text


def verdict_lines(p: Plan) -> list[str]:
    """Headline ('2 artifacts: does not fit'), one summary per family, then the reasons."""
    lines = [f"{len(p.members)} artifacts: {p.verdict.value}"]
    lines += [family_summary(s) for s in p.stacks if s.members]
    lines += p.reasons
    return lines


def bar_label(ch: StackedChiplet, chiplets_per_npu: int) -> str:
    """'NPU 0' on one-chiplet NPUs, 'NPU 0 · c2' per chiplet on Rebel100."""
    return f"NPU {ch.node}" if chiplets_per_npu == 1 else f"NPU {ch.node} · c{ch.chiplet}"


def share_tooltip(share: Share) -> str:
    return (
        f"{share.label}: {format_bytes_exact(share.used)}\n"
        f"  weights {format_bytes_exact(share.weights)}\n"
        f"  workspace / other {format_bytes_exact(share.workspace)}\n"
        f"  KV cache {format_bytes_exact(share.kv)}"
    )


def chiplet_tooltip(ch: StackedChiplet, tightest: bool) -> str:
    """Every artifact's share of one (NPU, chiplet) in exact bytes, then the total against the available DRAM."""
    lines = [ch.label + ("  (tightest)" if tightest else "")]
    lines += [share_tooltip(s) for s in ch.shares]
    lines.append(f"Used: {format_bytes_exact(ch.used)} of {format_bytes_exact(ch.available)} available")
    lines.append(headroom_words(ch.headroom))
    return "\n".join(lines)


def fix_summary(fix: Fix) -> str:
    """The fix in words (the CLI's sentence), its warnings after it."""
    return "\n".join([fix.describe(), *(f"warning: {w}" for w in fix.warnings)])


def verdict_colour_key(p: Plan) -> str:
    """'ok', 'warning' or 'invalid' (the table's status colours) for the verdict."""
    return {Verdict.FIT: "ok", Verdict.DOES_NOT_FIT: "invalid"}.get(p.verdict, "warning")
