"""Each entry of vllm-rbln's cache with its status and reasons: ok, stale, incomplete or in-use.

Built from what a place's reading gave (core/portable/vllm_cache_disk.py's records, a bucket's listing) and from the
studio's own check of the artifact (the problems inspect names): this module reads no disk and no network.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from rbln_artifact_studio.core.model.upstream import loader_refusals
from rbln_artifact_studio.core.vllm_cache.key import (
    BUDGET_GUESSES,
    COMPILED_MODELS,
    ServeKey,
    model_guesses,
    recover,
    split_name,
)

OK, STALE, INCOMPLETE, IN_USE = "ok", "stale", "incomplete", "in-use"
ORDER = (IN_USE, INCOMPLETE, STALE, OK)
"""A status by precedence: an entry in use is that first, whatever else is wrong with it."""
OLDEST_FORMAT = (0, 11)  # optimum-rbln artifacts older than 0.11 must be recompiled


@dataclass
class CacheEntry:
    """One entry: `name` is its folder's name (a mega-cache bundle's `MODEL-HASH8/SIGNATURE`), `area` the cache's
    folder holding it (compiled_models or rbln), `fields` the key's fields as far as the entry shows them."""

    name: str
    area: str
    location: str
    status: str
    reasons: list[str]
    size: int
    modified: int | None = None
    used: int | None = None
    owner: str | None = None
    model: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    holders: list[dict[str, Any]] = field(default_factory=list)
    kvcache_num_blocks: int | None = None
    npu: str | None = None
    is_link: bool = False  # the entry itself is a link to a folder elsewhere: read, never followed by a prune
    has_config: bool = True  # rbln_config.json is there: vllm-rbln's whole test of a hit, whatever else is wrong

    @property
    def key(self) -> str:
        """AREA/NAME: how prune names it."""
        return f"{self.area}/{self.name}"

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["path"] = out.pop("location")
        return out


def _version(text: object) -> tuple[int, ...] | None:
    match = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text) if isinstance(text, str) else None
    return tuple(int(g) for g in match.groups() if g is not None) if match else None


def shown_fields(raw: dict[str, Any]) -> dict[str, Any]:
    """The key's fields an rbln_config.json records (a VLM's from its language model's section)."""
    section: dict[str, Any] = raw["language_model"] if isinstance(raw.get("language_model"), dict) else raw
    out: dict[str, Any] = {}
    for ours, theirs in (
        ("batch_size", "batch_size"),
        ("max_model_len", "max_seq_len"),
        ("block_size", "kvcache_block_size"),
        ("num_devices", "num_devices"),
        ("num_devices", "tensor_parallel_size"),
        ("prefill_chunk_size", "prefill_chunk_size"),
    ):
        if ours not in out and isinstance(section.get(theirs), int):
            out[ours] = section[theirs]
    dtype = section.get("dtype") or raw.get("dtype")
    if isinstance(dtype, str):
        out["dtype"] = dtype if dtype.startswith("torch.") else f"torch.{dtype}"
    return out


def recovered_key(
    name: str, shown: dict[str, Any], rbln_config: dict[str, Any] | None = None, model: str | None = None
) -> ServeKey | None:
    """The whole key behind a compiled_models folder's name, when its artifact's fields with some gpu_memory_utilization
    (which no artifact records) and the given optimum overrides hash to it; model: the model id to try first."""
    parts = split_name(name)
    if parts is None or not {"batch_size", "max_model_len", "dtype"} <= shown.keys():
        return None
    base = ServeKey(
        "",
        shown["batch_size"],
        shown.get("block_size"),
        shown["max_model_len"],
        shown.get("num_devices", 1),
        shown["dtype"],
        shown.get("prefill_chunk_size"),
        0.0,
        rbln_config or {},
    )
    models = ([model] if model else []) + list(model_guesses(parts[0]))
    return recover(parts[1], base, models, BUDGET_GUESSES)


def _from_config(text: str | None, reasons: list[str], problems: list[str]) -> tuple[str, dict[str, Any]]:
    """The status an entry's rbln_config.json and the studio's check give it (ok, stale or incomplete)."""
    if text is None:
        reasons.append("no rbln_config.json: the compile did not finish (vllm-rbln compiles it again)")
        return INCOMPLETE, {}
    try:
        raw = json.loads(text)
    except ValueError:
        reasons.append("rbln_config.json is not valid JSON: the write was cut short")
        return INCOMPLETE, {}
    if not isinstance(raw, dict):
        reasons.append("rbln_config.json holds no JSON object")
        return INCOMPLETE, {}
    status = OK
    graph_problems = [p for p in problems if ".rbln" in p]
    if graph_problems:
        reasons += graph_problems
        status = INCOMPLETE
    stale: list[str] = []
    if "_meta" in raw:
        stale.append("written in the legacy `_meta` format: recompile it")
    written = _version(raw.get("optimum_rbln_version"))
    if written is not None and written[:2] < OLDEST_FORMAT:
        stale.append(f"written by optimum-rbln {raw['optimum_rbln_version']}, older than the 0.11 format: recompile it")
    if "kvcache_metas" in raw:
        stale.append("carries the deprecated `kvcache_metas` (refused from optimum-rbln 0.13)")
    if "_meta" not in raw:
        stale += loader_refusals(raw)
    stale += [p for p in problems if ".rbln" not in p and p not in stale]
    if stale:
        reasons += stale
        status = status if status == INCOMPLETE else STALE
    return status, raw


def entry_from_record(
    record: dict[str, Any], location: str, problems: list[str], toolchain: str | None = None
) -> CacheEntry:
    """The entry a place's record describes. problems: what the studio's check of the artifact found (invalid ones);
    toolchain: the optimum-rbln version installed where the cache lives, when known."""
    reasons: list[str] = []
    area, name = record["area"], record["name"]
    status = OK
    raw: dict[str, Any] = {}
    if record.get("link"):
        reasons.append("a link to a folder elsewhere: the studio does not follow it")
        status = STALE
    elif record.get("marker"):
        reasons.append("an unfinished copy's marker: its writer never finished")
        status = INCOMPLETE
    elif area == COMPILED_MODELS:
        status, raw = _from_config(record.get("config"), reasons, problems)
        written = _version(raw.get("optimum_rbln_version"))
        installed = _version(toolchain)
        if written and installed and written[:2] < installed[:2] and status == OK:  # a patch release is compatible
            status = STALE
            reasons.append(
                f"written by optimum-rbln {raw['optimum_rbln_version']}, older than the {toolchain} installed there: "
                "vllm-rbln reuses it without recompiling"
            )
    else:
        banks = [(f, size) for f, size in record["files"] if f.endswith("mega_cache.bin")]
        empty = [f.split("/", 1)[0] for f, size in banks if size == 0]
        if not any(size for _, size in banks):
            status = INCOMPLETE
            reasons.append("no rank holds a non-empty mega_cache.bin: its warm-up never finished")
        elif empty:
            status = INCOMPLETE
            reasons.append(f"{', '.join(empty)}: mega_cache.bin is empty, its write never finished")
    if record.get("links_out") and not record.get("link"):
        reasons.append(f"links out of the cache (never followed): {', '.join(record['links_out'][:3])}")
    holders = record.get("holders") or []
    if holders:
        status = IN_USE
        reasons[:0] = [f"pid {h['pid']} ({h['command'].split(' ')[0] or '?'}) {h['why']}" for h in holders]
    shown = shown_fields(raw)
    fields = dict(shown)
    model = None
    if area == COMPILED_MODELS:
        parts = split_name(name)
        model = parts[0] if parts else name
        found = recovered_key(name, shown) if status != INCOMPLETE else None
        if found is not None:
            model = found.model_name
            fields.update(
                gpu_memory_utilization=found.memory_budget, max_num_batched_tokens=found.max_num_batched_tokens
            )
    else:
        model = name.split("/", 1)[0].rsplit("-", 1)[0]
    section: dict[str, Any] = raw["language_model"] if isinstance(raw.get("language_model"), dict) else raw
    blocks = section.get("kvcache_num_blocks")
    return CacheEntry(
        name=name,
        area=area,
        location=location,
        status=status,
        reasons=reasons or ["ok"],
        size=int(record.get("size") or 0),
        modified=record.get("modified"),
        used=record.get("used"),
        owner=record.get("owner"),
        model=model,
        fields=fields,
        holders=holders,
        kvcache_num_blocks=blocks if isinstance(blocks, int) else None,
        npu=section.get("npu") if isinstance(section.get("npu"), str) else None,
        is_link=bool(record.get("link")),
        has_config=bool(record.get("link")) or record.get("config") is not None,
    )
