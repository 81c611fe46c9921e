"""One scan row (ArtifactSummary): its fields, how it is stored and checked, and the names it shows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cached_property
from operator import attrgetter
from typing import Any

from rbln_artifact_studio.core.location import Location, parse_location
from rbln_artifact_studio.core.status import Status


@dataclass(frozen=True, init=False)
class ArtifactSummary:
    """One row of the artifact table / fleet report; fields are None where the config could not be read."""

    path: str
    name: str
    status: Status
    problems: list[str] = field(default_factory=list)
    model: str | None = None
    npu: str | None = None
    num_devices: int | None = None
    batch_size: int | None = None
    max_seq_len: int | None = None
    block_size: int | None = None
    attn_impl: str | None = None
    kvcache_num_blocks: int | None = None
    num_min_blocks: int | None = None
    num_full_blocks: int | None = None
    kv_bytes_per_npu: int | None = None
    size_on_disk: int = 0
    link_target: str | None = None  # set when the artifact folder is a symlink (to a folder outside the root)
    kind: str | None = None  # decoder-only, multimodal, encoder-decoder, encoder-only, diffusers pipeline, other
    kv_note: str | None = None  # why there is no resizable KV cache (or why its figures are unknown), in words
    modified: int | None = None  # when its newest file was written or changed (compiled, resized), Unix seconds

    def __init__(
        self,
        path: str,
        name: str,
        status: Status,
        problems: list[str] | None = None,
        model: str | None = None,
        npu: str | None = None,
        num_devices: int | None = None,
        batch_size: int | None = None,
        max_seq_len: int | None = None,
        block_size: int | None = None,
        attn_impl: str | None = None,
        kvcache_num_blocks: int | None = None,
        num_min_blocks: int | None = None,
        num_full_blocks: int | None = None,
        kv_bytes_per_npu: int | None = None,
        size_on_disk: int = 0,
        link_target: str | None = None,
        kind: str | None = None,
        kv_note: str | None = None,
        modified: int | None = None,
    ) -> None:
        # The fields above, in their order (tests/test_scan.py holds them alike), set in one update: the frozen
        # dataclass's own __init__ sets each through object.__setattr__, 3x the time, and a scan makes two a row.
        self.__dict__.update(
            path=path,
            name=name,
            status=status,
            problems=[] if problems is None else problems,
            model=model,
            npu=npu,
            num_devices=num_devices,
            batch_size=batch_size,
            max_seq_len=max_seq_len,
            block_size=block_size,
            attn_impl=attn_impl,
            kvcache_num_blocks=kvcache_num_blocks,
            num_min_blocks=num_min_blocks,
            num_full_blocks=num_full_blocks,
            kv_bytes_per_npu=kv_bytes_per_npu,
            size_on_disk=size_on_disk,
            link_target=link_target,
            kind=kind,
            kv_note=kv_note,
            modified=modified,
        )

    @cached_property
    def where(self) -> Location:
        """Where the row's artifact lives, parsed once per row (`path` is how it is shown, and how reports and the
        cache store it). Kept beside the fields, never among them: to_json and row_values give the fields only."""
        return parse_location(self.path)

    @property
    def display_name(self) -> str:
        """The name, marked with its target when the folder is a link."""
        return self.name if self.link_target is None else f"{self.name} -> {self.link_target}"

    def to_json(self) -> dict[str, object]:
        out = dict(zip(ROW_FIELDS, row_values(self), strict=True))  # the fields in order, never a cached `where`
        out["status"] = self.status.value
        out["problems"] = list(self.problems)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ArtifactSummary:
        return cls(**{**data, "status": Status(data["status"])})

    @classmethod
    def validated(cls, data: object) -> ArtifactSummary | None:
        """The row a stored dict describes when every field is there with its type and a finished verdict, else None."""
        if not isinstance(data, dict) or data.keys() != _ROW_TYPES.keys():
            return None
        for name, types in _ROW_TYPES.items():
            value = data[name]
            kind = type(value)
            if kind not in types or (kind is int and value < 0):  # sizes and counts are never negative
                return None
        problems, status = data["problems"], data["status"]
        if status not in _FINISHED or not all(type(p) is str for p in problems):
            return None
        return cls(**{**data, "status": Status(status)})


ROW_FIELDS = tuple(f.name for f in fields(ArtifactSummary))
row_values: Callable[[ArtifactSummary], tuple[Any, ...]] = attrgetter(*ROW_FIELDS)
"""A row's field values in order (its __dict__ also holds `where` once asked)."""
_FINISHED = frozenset(s.value for s in Status if s is not Status.CHECKING)
_TYPES_OF: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "str | None": (str, type(None)),
    "int": (int,),
    "int | None": (int, type(None)),
    "list[str]": (list,),
    "Status": (str,),
}
_ROW_TYPES = {f.name: _TYPES_OF[str(f.type)] for f in fields(ArtifactSummary)}
"""Each field's accepted types, as stored (a status by its value); `type(v) in` also turns bools away from ints."""


def architecture(cls_name: str | None) -> str | None:
    """The model's architecture from its config class (RBLNQwen3ForCausalLMConfig: Qwen3ForCausalLM)."""
    return (cls_name or "").removeprefix("RBLN").removesuffix("Config") or None
