"""Co-location planner: stack artifacts' DRAM per NPU and chiplet, say whether they fit, and size the fix."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.errors import InvalidArtifactError, StudioError
from rbln_artifact_studio.core.estimation.estimator import largest_fitting
from rbln_artifact_studio.core.fleet.artifact import Artifact, Status
from rbln_artifact_studio.core.fleet.targets import check_target
from rbln_artifact_studio.core.location import parse_location, same_place
from rbln_artifact_studio.core.model.npu import Npu, place_label
from rbln_artifact_studio.core.model.rbln_config import LoadedConfig, with_block_count
from rbln_artifact_studio.core.planning.explore import BudgetStep, min_budget
from rbln_artifact_studio.core.planning.serving import check_serving
from rbln_artifact_studio.core.sizes import format_bytes

ASSUMPTION = (
    "Node i of every artifact runs on NPU i: an artifact compiled for N devices occupies NPUs 0 to N-1, "
    "so NPU 0 carries every artifact of the family."
)


class Verdict(str, Enum):
    FIT = "fit"
    DOES_NOT_FIT = "does not fit"
    NOT_COMPARABLE = "not comparable"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Member:
    """One artifact of a plan; `label` is its folder name, numbered when the same name appears twice."""

    label: str
    artifact: Artifact
    unknown_reason: str | None = None

    @property
    def npu(self) -> Npu | None:
        return self.artifact.npu

    @property
    def family(self) -> str | None:
        return self.npu.family.name if self.npu else None

    def to_json(self) -> dict[str, Any]:
        c = self.artifact.config
        return {
            "label": self.label,
            "path": str(self.artifact.where),
            "npu": c.npu,
            "family": self.family,
            "num_devices": c.num_devices,
            "kvcache_num_blocks": c.kvcache_num_blocks,
            "num_min_blocks": c.num_min_blocks,
            "num_full_blocks": c.num_full_blocks,
            "allocations_unknown_reason": self.unknown_reason,
        }


@dataclass(frozen=True)
class Share:
    """What one artifact takes on one (NPU, chiplet)."""

    label: str
    weights: int
    workspace: int
    kv: int

    @property
    def used(self) -> int:
        return self.weights + self.workspace + self.kv


@dataclass(frozen=True)
class StackedChiplet:
    """One (NPU, chiplet) with every artifact's share, against the DRAM left after the system reserve."""

    node: int
    chiplet: int
    available: int
    shares: tuple[Share, ...]
    chiplets: int = 1  # per NPU: one (ATOM) is named by its NPU alone

    @property
    def used(self) -> int:
        return sum(s.used for s in self.shares)

    @property
    def headroom(self) -> int:
        """Bytes still free; negative is the overflow."""
        return self.available - self.used

    @property
    def label(self) -> str:
        return place_label(self.node, self.chiplet, self.chiplets)

    def used_without(self, label: str) -> int:
        return sum(s.used for s in self.shares if s.label != label)


@dataclass(frozen=True)
class FamilyStack:
    """The artifacts of one NPU family stacked on the same NPUs."""

    family: str
    npus: tuple[str, ...]
    members: tuple[Member, ...]
    unknown: tuple[Member, ...]
    chiplets: tuple[StackedChiplet, ...]

    @property
    def fits(self) -> bool:
        return all(c.headroom >= 0 for c in self.chiplets)

    @property
    def tightest(self) -> StackedChiplet:
        return min(self.chiplets, key=lambda c: (c.headroom, c.node, c.chiplet))

    @property
    def overflowing(self) -> list[StackedChiplet]:
        return [c for c in self.chiplets if c.headroom < 0]

    @property
    def num_npus(self) -> int:
        return max(c.node for c in self.chiplets) + 1

    @property
    def notes(self) -> list[str]:
        if len(set(self.npus)) > 1:
            return [
                f"Compiled for different {self.family} SKUs ({', '.join(sorted(set(self.npus)))}): stacked on one "
                "family's DRAM as asked, but each artifact runs only on the SKU it was compiled for."
            ]
        return []

    def to_json(self) -> dict[str, Any]:
        t = self.tightest
        return {
            "family": self.family,
            "npus": list(self.npus),
            "num_npus": self.num_npus,
            "artifacts": [m.label for m in self.members],
            "unknown": [m.label for m in self.unknown],
            "fits": self.fits,
            "tightest": {"node": t.node, "chiplet": t.chiplet, "headroom": t.headroom},
            "notes": self.notes,
            "chiplets": [
                {
                    "node": c.node,
                    "chiplet": c.chiplet,
                    "available": c.available,
                    "used": c.used,
                    "headroom": c.headroom,
                    "artifacts": {
                        s.label: {"weights": s.weights, "workspace": s.workspace, "kv_cache": s.kv, "used": s.used}
                        for s in c.shares
                    },
                }
                for c in self.chiplets
            ],
        }


@dataclass(frozen=True)
class Plan:
    """Two or more artifacts checked for sharing NPUs; only artifacts of one family are ever summed."""

    members: tuple[Member, ...]
    stacks: tuple[FamilyStack, ...]
    unplaced: tuple[Member, ...]  # NPU not named or not known: no family to stack on

    @property
    def verdict(self) -> Verdict:
        if len(self.stacks) > 1:
            return Verdict.NOT_COMPARABLE
        # More artifacts only add bytes, so an overflow among the known ones is certain.
        if any(not s.fits for s in self.stacks):
            return Verdict.DOES_NOT_FIT
        if self.unplaced or any(s.unknown for s in self.stacks) or not self.stacks:
            return Verdict.UNKNOWN
        return Verdict.FIT

    @property
    def fits(self) -> bool:
        return self.verdict is Verdict.FIT

    def member(self, label: str) -> Member:
        for m in self.members:
            if m.label == label:
                return m
        raise StudioError(f"{label} is not one of the planned artifacts ({', '.join(m.label for m in self.members)}).")

    def label_for(self, path: str | Path) -> str:
        """The label of the planned artifact in this folder (the first, when it is planned twice)."""
        wanted = parse_location(path)
        for m in self.members:
            if same_place(m.artifact.where, wanted):
                return m.label
        raise StudioError(f"{path} is not one of the planned folders; name one of them.")

    def stack_of(self, member: Member) -> FamilyStack | None:
        return next((s for s in self.stacks if member in s.members or member in s.unknown), None)

    @property
    def reasons(self) -> list[str]:
        """Why the verdict is not a plain fit / does not fit: families that differ, allocations not known."""
        out = []
        if self.verdict is Verdict.NOT_COMPARABLE:
            families = "; ".join(
                f"{s.family}: {', '.join(m.label for m in (*s.members, *s.unknown))}" for s in self.stacks
            )
            out.append(
                f"Not comparable: the artifacts target different NPU families ({families}). Artifacts of different "
                "families never share an NPU's DRAM, so they are not summed; each family is planned on its own."
            )
        for m in self.unplaced:
            out.append(f"The plan cannot be computed for {m.label}: {m.unknown_reason}")
        for s in self.stacks:
            out += [f"The plan cannot be computed for {m.label}: {m.unknown_reason}" for m in s.unknown]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "fits": self.fits,
            "assumption": ASSUMPTION,
            "reasons": self.reasons,
            "artifacts": [m.to_json() for m in self.members],
            "families": [s.to_json() for s in self.stacks],
        }


def _labels(artifacts: list[Artifact]) -> list[str]:
    counts = Counter(a.name for a in artifacts)
    seen: Counter[str] = Counter()
    labels = []
    for a in artifacts:
        seen[a.name] += 1
        labels.append(a.name if counts[a.name] == 1 else f"{a.name}#{seen[a.name]}")
    return labels


def _unknown_reason(artifact: Artifact) -> str | None:
    npu = artifact.npu
    if npu is None:
        return f"its NPU ({artifact.config.npu or 'not named in rbln_config.json'}) is unknown."
    layout = artifact.layout()
    if layout is None:
        return artifact.unknown_reason or "its allocations are unknown."
    if layout.chiplets != npu.chiplets:
        return f"its allocation tables report {layout.chiplets} chiplet(s) per NPU, but {npu.name} has {npu.chiplets}."
    return None


def _stack(family: str, members: list[Member], unknown: list[Member]) -> FamilyStack:
    shares: dict[tuple[int, int], list[Share]] = {}
    available = chiplets = 0
    for m in members:
        npu, fit = m.npu, m.artifact.breakdown()
        assert npu is not None and fit is not None
        available, chiplets = npu.available_per_chiplet, npu.chiplets
        for u in fit.usages:
            shares.setdefault((u.node, u.chiplet), []).append(Share(m.label, u.weights, u.workspace, u.kv))
    if not members:
        npu = unknown[0].npu
        assert npu is not None
        available, chiplets = npu.available_per_chiplet, npu.chiplets
    nodes = max((m.artifact.config.num_devices for m in (*members, *unknown)), default=1)
    stacked = tuple(
        StackedChiplet(n, c, available, tuple(shares.get((n, c), ())), chiplets)
        for n in range(nodes)
        for c in range(chiplets)
    )
    npus = tuple(m.artifact.config.npu or "" for m in (*members, *unknown))
    return FamilyStack(family, npus, tuple(members), tuple(unknown), stacked)


def plan(artifacts: list[Artifact]) -> Plan:
    """Stack two or more opened artifacts per NPU family (see ASSUMPTION for how devices map onto NPUs)."""
    if len(artifacts) < 2:
        raise StudioError("A co-location plan needs two or more artifacts.")
    members = [Member(label, a, _unknown_reason(a)) for label, a in zip(_labels(artifacts), artifacts, strict=True)]
    families: dict[str, tuple[list[Member], list[Member]]] = {}
    unplaced = []
    for m in members:
        if m.family is None:
            unplaced.append(m)
            continue
        known, unknown = families.setdefault(m.family, ([], []))
        (unknown if m.unknown_reason else known).append(m)
    stacks = tuple(_stack(name, known, unknown) for name, (known, unknown) in families.items())
    return Plan(tuple(members), stacks, tuple(unplaced))


@dataclass(frozen=True)
class Fix:
    """The largest block count for one artifact that makes its family's stack fit, others unchanged."""

    label: str
    path: str
    current: int
    floor: int
    full: int
    target: int | None = None
    budget: BudgetStep | None = None
    headroom_after: int | None = None  # the tightest chiplet's headroom with the target applied
    concurrency_after: int | None = None  # full-length requests vLLM serves at once with the target
    reason: str | None = None  # why there is no target
    warnings: list[str] = field(default_factory=list)

    @property
    def changes(self) -> bool:
        return self.target is not None and self.target != self.current

    def describe(self) -> str:
        if self.target is None:
            return f"{self.label}: no fix. {self.reason}"
        verb = "shrink to" if self.target < self.current else "grow to" if self.target > self.current else "keep"
        budget = ""
        if self.budget is not None:
            frac = f"{self.budget.fraction:g} or " if self.budget.fraction is not None else ""
            budget = f" (memory_budget {frac}{self.budget.low:,} bytes resolves to it)"
        return (
            f"{self.label}: {verb} kvcache_num_blocks={self.target} (now {self.current}, floor {self.floor}, "
            f"full pool {self.full}){budget}; the tightest chiplet then has {self.headroom_after:,} bytes free "
            f"and vLLM serves {self.concurrency_after} full-length request(s) at once."
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "artifact": self.label,
            "path": self.path,
            "kvcache_num_blocks": self.current,
            "num_min_blocks": self.floor,
            "num_full_blocks": self.full,
            "target": self.target,
            "memory_budget": None if self.budget is None else self.budget.to_json(),
            "headroom_after": self.headroom_after,
            "concurrency_after": self.concurrency_after,
            "reason": self.reason,
            "warnings": self.warnings,
        }


def _concurrency(artifact: Artifact, blocks: int) -> int:
    loaded = artifact.loaded
    model = loaded.model.model_copy(update={"kvcache_num_blocks": blocks})
    return check_serving(LoadedConfig(loaded.path, with_block_count(loaded.raw, blocks), model)).concurrency


def fix_for(p: Plan, label: str) -> Fix:
    """For one artifact, the largest count (up to its full pool, never below its floor) that makes the set fit."""
    m = p.member(label)
    c = m.artifact.config
    floor, full = c.num_min_blocks, c.num_full_blocks
    fix = partial(Fix, m.label, str(m.artifact.where), c.kvcache_num_blocks, floor, full)
    stack = p.stack_of(m)
    if m.unknown_reason or stack is None:
        return fix(reason=f"Its own allocations are unknown: {m.unknown_reason}")
    if stack.unknown:
        names = ", ".join(u.label for u in stack.unknown)
        return fix(reason=f"The allocations of {names} are unknown, so no count can be shown to fit.")
    layout, npu = m.artifact.layout(), m.npu
    assert layout is not None and npu is not None
    mine = set(layout.positions)
    rooms: dict[tuple[int, int], int] = {}
    for ch in stack.chiplets:
        free = ch.available - ch.used_without(m.label)
        if (ch.node, ch.chiplet) in mine:
            rooms[(ch.node, ch.chiplet)] = free - layout.non_kv(ch.node, ch.chiplet)
        elif free < 0:
            return fix(
                reason=f"{ch.label} is over by {-free:,} bytes without {m.label} on it; resizing {m.label} cannot help.",
            )

    def room_left(n: int) -> int:
        return min(room - layout.kv_bytes(node, chiplet, n) for (node, chiplet), room in rooms.items())

    best = largest_fitting(lambda n: room_left(n) >= 0, 1, full, otherwise=0)
    if best < floor:
        return fix(
            reason=f"Even its floor ({floor} blocks) does not fit: the tightest chiplet would still be over by "
            f"{-room_left(floor):,} bytes ({format_bytes(-room_left(floor))}). Shrink another artifact too, "
            "or compile with a smaller batch_size or max_seq_len.",
        )
    return fix(
        target=best,
        budget=step if (step := min_budget(layout, npu, full, best)) and step.blocks == best else None,
        headroom_after=room_left(best),
        concurrency_after=_concurrency(m.artifact, best),
        warnings=check_target(c, best, m.artifact).warnings,
    )


def require_valid(artifacts: list[Artifact]) -> None:
    """A plan counts on every artifact loading: an invalid one (the verdict scan and inspect give) stops it."""
    invalid = [a for a in artifacts if a.status is Status.INVALID]
    if invalid:
        reasons = "; ".join(
            f"{a.where} is invalid: " + "; ".join(p.message for p in a.problems if p.severity is Status.INVALID)
            for a in invalid
        )
        raise InvalidArtifactError(f"{reasons}. Fix or recompile it, then plan again.")


def fixes(p: Plan, label: str | None = None) -> list[Fix]:
    """The fix for the chosen artifact; without a choice, one per artifact of each family that does not fit."""
    if label is not None:
        return [fix_for(p, label)]
    return [fix_for(p, m.label) for s in p.stacks if not s.fits for m in s.members]
