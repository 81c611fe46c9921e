"""Estimate against actual: the DRAM an artifact predicts per NPU against what the process serving it allocated."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.fleet.npu_status import DeviceStatus
from rbln_artifact_studio.core.planning.placement import node_need
from rbln_artifact_studio.core.sizes import format_bytes

DRIFT_THRESHOLD_PERCENT = 10.0  # past this the difference is flagged: more than allocation rounding and runtime slack
MODEL_FLAGS = ("--model", "--model-id", "--model_id", "--model-dir", "--model_dir")


def path_arguments(argv: Sequence[str]) -> list[str]:
    """The arguments of a serving command line that may name its artifact folder, most likely first:
    `--model X` / `--model=X`, the argument after `serve`, then every other argument (flags' values split at =)."""
    first: list[str] = []
    rest: list[str] = []
    args = list(argv[1:])
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if flag in MODEL_FLAGS:
            if eq:
                first.append(value)
            elif i + 1 < len(args):
                first.append(args[i + 1])
        elif arg == "serve" and i + 1 < len(args):
            first.append(args[i + 1])
        elif eq and flag.startswith("-"):
            rest.append(value)
        elif not arg.startswith("-"):
            rest.append(arg)
    return list(dict.fromkeys(a for a in first + rest if a))  # in order, each once


def choose_artifact(argv: Sequence[str], folders: Mapping[str, str]) -> str | None:
    """The artifact folder a process serves: the likeliest argument that names a folder holding an artifact
    (`folders` maps such arguments to their absolute paths on the server)."""
    for arg in path_arguments(argv):
        if arg in folders:
            return folders[arg]
    return None


@dataclass(frozen=True)
class ProcessArtifact:
    """What a process on the server serves: the artifact (or why it is not known), its path there."""

    pid: int
    path: str | None
    artifact: Artifact | None
    reason: str = ""  # why there is no artifact to compare with


@dataclass(frozen=True)
class ContextDrift:
    """One process's allocation on one NPU against what its artifact predicts for that NPU."""

    host: str
    npu: int
    pid: int
    process: str
    actual: int | None
    artifact: str | None
    node: int | None
    predicted: int | None
    reason: str  # why the comparison is unknown; empty when both figures are there
    threshold: float = DRIFT_THRESHOLD_PERCENT

    @property
    def difference(self) -> int | None:
        if self.actual is None or self.predicted is None:
            return None
        return self.actual - self.predicted

    @property
    def percent(self) -> float | None:
        if self.difference is None or not self.predicted:
            return None
        return 100.0 * self.difference / self.predicted

    @property
    def flagged(self) -> bool:
        return self.percent is not None and abs(self.percent) > self.threshold

    def to_json(self) -> dict[str, Any]:
        return {
            "npu": self.npu,
            "pid": self.pid,
            "process": self.process,
            "memalloc": self.actual,
            "artifact": self.artifact,
            "node": self.node,
            "predicted": self.predicted,
            "difference": self.difference,
            "difference_percent": None if self.percent is None else round(self.percent, 2),
            "flagged": self.flagged,
            "threshold_percent": self.threshold,
            "unknown": self.reason or None,
        }

    def text(self) -> str:
        who = f"pid {self.pid} {self.process} on NPU {self.npu}"
        if self.difference is None or self.percent is None or self.predicted is None or self.actual is None:
            return f"{who}: drift unknown ({self.reason})"
        flag = f"  <- past {self.threshold:g}%" if self.flagged else ""
        return (
            f"{who}: serves {self.artifact} (node {self.node}); allocated {format_bytes(self.actual)}, predicted "
            f"{format_bytes(self.predicted)}: {self.difference:+,} bytes ({self.percent:+.1f}%){flag}"
        )


def drifts(
    status: DeviceStatus, matches: Mapping[int, ProcessArtifact], threshold: float = DRIFT_THRESHOLD_PERCENT
) -> tuple[ContextDrift, ...]:
    """Per (process, NPU): its contexts' allocation against its artifact's need on the node loaded there.

    A process's NPUs, in index order, hold the artifact's nodes 0, 1, ... (tensor parallel places node i on the
    i-th device it is given); a count that differs from the artifact's makes the comparison unknown.
    """
    per_pid: dict[int, dict[int, list[int | None]]] = {}
    names: dict[int, str] = {}
    for ctx in status.contexts:
        per_pid.setdefault(ctx.pid, {}).setdefault(ctx.npu, []).append(ctx.memory)
        names.setdefault(ctx.pid, ctx.name)
    out = []
    for pid, by_npu in per_pid.items():
        match = matches.get(pid) or ProcessArtifact(pid, None, None, "the process was not looked up")
        npus = sorted(by_npu)
        for position, npu in enumerate(npus):
            allocs = by_npu[npu]
            actual = None if any(a is None for a in allocs) else sum(a for a in allocs if a is not None)
            predicted = node = None
            reason = match.reason
            artifact = match.artifact
            if artifact is not None:
                layout = artifact.layout()
                if layout is None:
                    reason = f"the artifact's DRAM is unknown ({artifact.unknown_reason or 'no allocation tables'})"
                elif len(npus) != layout.nodes:
                    reason = f"the artifact is compiled for {layout.nodes} NPU(s); the process holds {len(npus)}"
                else:
                    node = position
                    predicted = node_need(layout, node, artifact.config.kvcache_num_blocks)[0]
                    reason = ""
            if actual is None and not reason:
                reason = f"{status.tool} does not show the context's allocation"
            out.append(
                ContextDrift(status.host, npu, pid, names[pid], actual, match.path, node, predicted, reason, threshold)
            )
    return tuple(sorted(out, key=lambda d: (d.npu, d.pid)))
