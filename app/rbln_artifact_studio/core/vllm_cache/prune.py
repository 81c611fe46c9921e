"""Which entries of vllm-rbln's cache a prune removes, and a line for each one kept and why; removes nothing itself."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.vllm_cache.entries import IN_USE, INCOMPLETE, STALE, CacheEntry
from rbln_artifact_studio.core.vllm_cache.key import COMPILED_MODELS, split_name

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float:
    """Seconds of '30d', '12h', '2w', '90m', '45s'."""
    match = _DURATION.match(text.lower())
    if not match:
        raise StudioError(f"--older-than takes a duration such as 30d, 12h or 2w, got {text!r}.")
    return float(match.group(1)) * _SECONDS[match.group(2)]


def _age(seconds: float) -> str:
    """'3 days', '5 hours', '12 minutes', '40 seconds': the largest whole unit."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{int(seconds)} seconds"


@dataclass
class PrunePlan:
    """The entries to remove and those kept, each with why."""

    remove: list[tuple[CacheEntry, str]] = field(default_factory=list)
    keep: list[tuple[CacheEntry, str]] = field(default_factory=list)

    @property
    def freed(self) -> int:
        return sum(e.size for e, _ in self.remove)


def plan_prune(
    entries: list[CacheEntry],
    now: float,
    stale: bool = False,
    incomplete: bool = False,
    older_than: float | None = None,
    keep_last: int | None = None,
) -> PrunePlan:
    """An entry is removed when a given rule selects it (stale, incomplete, unused for longer than older_than
    seconds, beyond the keep_last most recently used of its model); never one in use. No rule: nothing is removed."""
    plan = PrunePlan()
    recent: set[str] = set()
    if keep_last is not None:
        by_model: dict[str, list[CacheEntry]] = {}
        for e in entries:  # by the model part of the name: an entry whose key is not recovered has no hub id
            model = (split_name(e.name) or (e.model or e.name,))[0] if e.area == COMPILED_MODELS else e.model
            by_model.setdefault(f"{e.area}/{model}", []).append(e)
        for group in by_model.values():
            group.sort(key=lambda e: e.used or e.modified or 0, reverse=True)
            recent.update(e.key for e in group[:keep_last])
    for e in entries:
        why: list[str] = []
        if stale and e.status == STALE:
            why.append("stale")
        if incomplete and e.status == INCOMPLETE:
            why.append("incomplete")
        last = e.used or e.modified
        if older_than is not None and last is not None and now - last > older_than:
            why.append(f"unused for {_age(now - last)}")
        if keep_last is not None and e.key not in recent:
            why.append(f"older than the {keep_last} most recently used of {e.model}")
        if e.is_link:
            plan.keep.append((e, "a link to a folder elsewhere: prune never follows a link out of the cache"))
        elif e.status == IN_USE:
            plan.keep.append((e, "in use: " + "; ".join(e.reasons[: max(1, len(e.holders))])))
        elif why:
            plan.remove.append((e, ", ".join(why)))
        else:
            plan.keep.append((e, f"{e.status}: no rule given selects it"))
    return plan
