"""The simulator's .rbln container: a checksummed preamble, two header slots and an optional payload.

Layout and crash-safety rules are specified in docs/rbln-container.md. The two header slots let a resize
write the new header beside the old one; rbln_config.json then decides which slot is current.
"""

from __future__ import annotations

import json
import os
import random
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rbln_artifact_studio.core.errors import ContainerError
from rbln_artifact_studio.core.estimation.estimator import GraphAllocations
from rbln_artifact_studio.core.portable.container import (  # the layout, written once (a server's scan reads it too)
    MAGIC,
    MIN_SLOT_SIZE,
    PREAMBLE_SIZE,
    SLOT_ALIGN,
    SLOT_MAGIC,
    VERSION,
    valid_slot_size,
)
from rbln_artifact_studio.core.portable.container import PREAMBLE as _PREAMBLE
from rbln_artifact_studio.core.portable.container import SLOT as _SLOT
from rbln_artifact_studio.core.storage import faults

if TYPE_CHECKING:
    from rbln_artifact_studio.core.simulator.header_model import HeaderModel

PAYLOAD_CHUNK = 8 * 1024 * 1024


HEADER_FIELDS = (
    "graph",
    "npu",
    "num_devices",
    "chiplets",
    "kvcache_num_blocks",
    "compiled_kvcache_num_blocks",
    "weights_bytes",
    "resizable",
    "alloc_per_chiplet_by_key",
    "dram_tensor_sizes",
)


def _header_model() -> type[HeaderModel]:
    """The header's pydantic model, loaded with the first header validated or written."""
    # A scan reads every header with the lean reader and validates none (tests/test_config_reader.py).
    # deferred: pydantic (~0.1 s of CPU), loaded by a compile, a resize or a header the lean reader passes on
    from rbln_artifact_studio.core.simulator.header_model import HeaderModel

    return HeaderModel


class GraphHeader:
    """What a container says about its graph: allocation tables and KV buffer sizes at its block count.

    Made by the compiler (validated by the pydantic model, header_model.HeaderModel: what is written is checked), by
    a resize from a header read (model_copy), and by a scan's reader (_lean_header: the model's rules, checked on
    the parsed JSON without pydantic, whose import and schema a scan never pays).
    """

    graph: str
    npu: str
    num_devices: int
    chiplets: int
    kvcache_num_blocks: int
    compiled_kvcache_num_blocks: int
    weights_bytes: int
    resizable: list[str]
    alloc_per_chiplet_by_key: dict[str, list[list[int]]]
    dram_tensor_sizes: dict[str, list[list[int]]]

    def __init__(
        self,
        *,
        graph: str,
        npu: str,
        num_devices: int,
        chiplets: int,
        kvcache_num_blocks: int,
        compiled_kvcache_num_blocks: int,
        weights_bytes: int,
        resizable: list[str],
        alloc_per_chiplet_by_key: dict[str, list[list[int]]],
        dram_tensor_sizes: dict[str, list[list[int]]],
    ) -> None:
        """A new header, validated by the model (pydantic's ValidationError when a field breaks its rules)."""
        fields = {name: value for name, value in locals().items() if name in HEADER_FIELDS}
        self.__dict__.update(_header_model().model_validate(fields).__dict__)

    @classmethod
    def _trusted(cls, fields: dict[str, Any]) -> GraphHeader:
        """A header from fields already checked against the model's rules (or deliberately not: model_copy)."""
        header = object.__new__(cls)
        header.__dict__.update(fields)
        return header

    @classmethod
    def model_validate_json(cls, body: bytes | str) -> GraphHeader:
        """The header a slot's JSON holds, validated by the model (pydantic's ValidationError, a ValueError)."""
        return cls._trusted(_header_model().model_validate_json(body).__dict__)

    def _fields(self) -> dict[str, Any]:
        return {name: self.__dict__[name] for name in HEADER_FIELDS}

    def model_copy(self, *, update: dict[str, Any] | None = None) -> GraphHeader:
        """A copy with some fields replaced, not validated again (as pydantic's model_copy)."""
        return GraphHeader._trusted({**self._fields(), **(update or {})})

    def model_dump(self) -> dict[str, Any]:
        """The fields as new plain containers (the model's)."""
        return _header_model().model_construct(**self._fields()).model_dump()

    def model_dump_json(self) -> str:
        """The header's JSON as a slot stores it (the model's serializer: the bytes every version wrote)."""
        return _header_model().model_construct(**self._fields()).model_dump_json()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphHeader) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable tables, compared by value

    def __repr__(self) -> str:
        return f"GraphHeader({', '.join(f'{k}={v!r}' for k, v in self._fields().items())})"

    @cached_property
    def allocations(self) -> GraphAllocations:
        # One object per header: a header read again from an identical slot is the same object (_known_header), so
        # what is derived from its tables (the DRAM layout, artifact.py) is keyed by this object and made once.
        return GraphAllocations(self.alloc_per_chiplet_by_key, self.dram_tensor_sizes)


@dataclass(frozen=True)
class Slot:
    index: int
    generation: int
    header: GraphHeader


@dataclass(frozen=True)
class ContainerInfo:
    """A container's preamble and its valid header slots."""

    path: Path
    slot_size: int
    payload_offset: int
    payload_length: int
    payload_crc: int
    slots: tuple[Slot, ...]

    def current(self, expected_blocks: int | None = None) -> Slot:
        """The slot holding expected_blocks (rbln_config.json's count), or the newest when not given."""
        candidates = [
            s for s in self.slots if expected_blocks is None or s.header.kvcache_num_blocks == expected_blocks
        ]
        if len(candidates) == 1:  # the common case: one slot holds the count
            return candidates[0]
        if not candidates:
            held = ", ".join(str(s.header.kvcache_num_blocks) for s in self.slots) or "none"
            raise ContainerError(
                f"{self.path.name} holds KV buffers for {held} blocks, but rbln_config.json records "
                f"{expected_blocks}: the artifact is inconsistent; resize it again or recompile."
            )
        return max(candidates, key=lambda s: s.generation)

    def slot_offset(self, index: int) -> int:
        return PREAMBLE_SIZE + index * self.slot_size


def is_container(path: Path) -> bool:
    """True when the file starts with the simulator's magic (a real compiler's .rbln does not)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def _slot_bytes(generation: int, header: GraphHeader, slot_size: int) -> bytes:
    body = header.model_dump_json().encode("utf-8")
    prefix = struct.pack("<QI", generation, len(body))
    crc = zlib.crc32(prefix + body)
    data = _SLOT.pack(SLOT_MAGIC, generation, len(body), crc) + body
    if len(data) > slot_size:
        raise ContainerError(
            f"The new header of graph {header.graph} ({len(data):,} bytes) does not fit its slot "
            f"({slot_size:,} bytes), so this count cannot be written into it; choose a smaller count, or recompile "
            "with this one."
        )
    return data + b"\0" * (slot_size - len(data))


SLOT_READ = 16 * 1024  # a slot's first read: its header and a typical body (the rest is read only when longer)


ReadAt = Callable[[int, int], bytes]
"""Up to `length` bytes of a file from `offset` (fewer at its end), as os.pread(fd, length, offset) reads them."""


def _read_slot(read_at: ReadAt, index: int, offset: int, slot_size: int, head: bytes) -> Slot | None:
    """A header slot as written (None when empty or damaged), reading only its used bytes, never the whole slot;
    head is the file's first bytes as read (slot 0 begins in them)."""
    if index == 0:  # slot 0 is read from head where it lies (no copy of its 16 KiB first)
        data, start, end = head, offset, min(len(head), offset + min(slot_size, SLOT_READ))
    else:
        data = read_at(SLOT_READ, offset)
        start, end = 0, len(data)
    if end - start < _SLOT.size:
        return None
    magic, generation, length, crc = _SLOT.unpack_from(data, start)
    if magic != SLOT_MAGIC or _SLOT.size + length > slot_size:
        return None
    body = data[start + _SLOT.size : min(start + _SLOT.size + length, end)]
    if len(body) < length:  # a long header (many devices or tensors): the rest of it
        body += read_at(length - len(body), offset + _SLOT.size + len(body))
        if len(body) < length:
            return None
    header = _known_header(generation, length, crc, body)
    return None if header is None else Slot(index, generation, header)


_KNOWN: dict[tuple[int, int, int], tuple[bytes, GraphHeader]] = {}
_KNOWN_MAX = 256  # distinct headers remembered (a fleet holds many copies of few models); forgotten all at once


def _known_header(generation: int, length: int, crc: int, body: bytes) -> GraphHeader | None:
    """The header a slot's body holds when its checksum holds, else None; validated once per distinct body.

    Keyed by the slot's own checksum and length, and proven by comparing the body with the one validated: equal
    bytes under the same generation and length pass the same checksum and give the same header, so a scan of many
    copies of one model checks and parses each distinct header once (never keyed by path: a file may change)."""
    key = (crc, length, generation)
    known = _KNOWN.get(key)
    if known is not None and known[0] == body:
        return known[1]
    if zlib.crc32(struct.pack("<QI", generation, length) + body) != crc:
        return None
    header = _lean_header(body)
    if header is None:  # not plainly valid: the model decides, as it always did
        try:
            header = GraphHeader.model_validate_json(body)
        except (ValueError, RecursionError):  # pydantic's ValidationError is a ValueError
            return None
    if len(_KNOWN) >= _KNOWN_MAX:
        _KNOWN.clear()
    _KNOWN[key] = (body, header)
    return header


_HEADER_STRINGS = ("graph", "npu")
_HEADER_COUNTS = (  # GraphHeader's integer fields and their lower bounds
    ("num_devices", 1),
    ("chiplets", 1),
    ("kvcache_num_blocks", 1),
    ("compiled_kvcache_num_blocks", 1),
    ("weights_bytes", 0),
)
_HEADER_GRIDS = ("alloc_per_chiplet_by_key", "dram_tensor_sizes")


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _lean_header(body: bytes) -> GraphHeader | None:
    """The header when its JSON plainly holds every rule of the header model (strict types, bounds), made without
    pydantic, which a scan then never imports; None for anything else, which the model then judges (a header is
    read, never written, here: the model stays the guard of what is written)."""
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return None
    if type(data) is not dict:
        return None
    try:
        if any(type(data[name]) is not str for name in _HEADER_STRINGS):
            return None
        for name, low in _HEADER_COUNTS:
            value = data[name]
            if type(value) is not int or value < low:  # type(): a JSON true is not an int here either
                return None
        resizable = data["resizable"]
        if type(resizable) is not list or any(type(name) is not str for name in resizable):
            return None
        for name in _HEADER_GRIDS:
            grids = data[name]
            if type(grids) is not dict:
                return None
            for rows in grids.values():
                if type(rows) is not list:
                    return None
                for row in rows:
                    if type(row) is not list or any(type(v) is not int or v < 0 for v in row):
                        return None
    except KeyError:
        return None
    return GraphHeader._trusted({name: data[name] for name in HEADER_FIELDS})


def probe_container(path: Path, size: int | None = None) -> ContainerInfo | None:
    """The container's preamble and valid header slots (not the payload); None when the file lacks the
    container's magic (real compiler output, or damage damage.py names); ContainerError on any other damage.

    `size`: the file's size as a listing just gave it (a scan's), judged instead of an fstat of its own."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            if size is None:
                size = os.fstat(fd).st_size
            return probe_read(path, size, lambda length, offset: os.pread(fd, length, offset))
        finally:
            os.close(fd)
    except OSError as exc:
        raise ContainerError(f"{path.name} cannot be read: {exc.strerror or exc}.") from None


def probe_read(path: Path, size: int, read_at: ReadAt) -> ContainerInfo | None:
    """probe_container for a file of `size` bytes read through read_at (a server's file, from what it sent)."""
    name = path.name
    head = read_at(PREAMBLE_SIZE + SLOT_READ, 0)  # the preamble and the start of slot 0 in one read
    if head[: len(MAGIC)] != MAGIC:
        return None
    if len(head) < _PREAMBLE.size:
        raise ContainerError(f"{name} is truncated inside its preamble; copy it again or recompile.")
    _magic, version, slot_size, payload_offset, payload_length, payload_crc, crc = _PREAMBLE.unpack_from(head)
    if zlib.crc32(head[: _PREAMBLE.size - 4]) != crc:
        raise ContainerError(f"{name} has a damaged preamble (checksum mismatch); recompile the artifact.")
    if version != VERSION:
        raise ContainerError(
            f"{name} uses container format version {version}; this tool reads version {VERSION}. "
            "Update RBLN Artifact Studio or recompile."
        )
    if not valid_slot_size(slot_size):
        raise ContainerError(f"{name} declares an invalid header slot size ({slot_size}).")
    if payload_offset != PREAMBLE_SIZE + 2 * slot_size or size < payload_offset + payload_length:
        raise ContainerError(
            f"{name} is truncated ({size:,} bytes, expected {payload_offset + payload_length:,}); "
            "copy it again from its source or recompile."
        )
    first = _read_slot(read_at, 0, PREAMBLE_SIZE, slot_size, head)
    second = _read_slot(read_at, 1, PREAMBLE_SIZE + slot_size, slot_size, head)
    slots = tuple(s for s in (first, second) if s is not None)
    if not slots:
        raise ContainerError(f"{name} has no valid header (both slots damaged); recompile the artifact.")
    return ContainerInfo(path, slot_size, payload_offset, payload_length, payload_crc, slots)


def read_container(path: Path) -> ContainerInfo:
    """Read the preamble and both header slots (not the payload); raise ContainerError on any damage."""
    info = probe_container(path)
    if info is None:
        raise ContainerError(f"{path.name} is not a simulator .rbln container (no RBLNSIM magic).")
    return info


def slot_size_for(header: GraphHeader) -> int:
    """Room for the header to grow (block counts gain digits) without ever moving the payload."""
    needed = 2 * (len(header.model_dump_json()) + _SLOT.size)
    return max(MIN_SLOT_SIZE, -(-needed // SLOT_ALIGN) * SLOT_ALIGN)


def _payload_chunks(length: int, seed: int) -> tuple[bytes, int]:
    pattern = random.Random(seed).randbytes(min(PAYLOAD_CHUNK, max(length, 1)))
    return pattern, len(pattern)


ProgressFn = Callable[[int], None]


def write_container(
    path: Path,
    header: GraphHeader,
    payload_length: int = 0,
    on_bytes: ProgressFn | None = None,
) -> None:
    """Write a new container (into a staging folder: the caller publishes it atomically)."""
    slot_size = slot_size_for(header)
    payload_offset = PREAMBLE_SIZE + 2 * slot_size
    with open(path, "wb") as f:
        f.seek(payload_offset)
        crc = 0
        if payload_length:
            pattern, plen = _payload_chunks(payload_length, zlib.crc32(header.graph.encode()))
            left = payload_length
            while left:
                piece = pattern if left >= plen else pattern[:left]
                f.write(piece)
                crc = zlib.crc32(piece, crc)
                left -= len(piece)
                if on_bytes:
                    on_bytes(len(piece))
        fields = (MAGIC, VERSION, slot_size, payload_offset, payload_length, crc)
        packed = _PREAMBLE.pack(*fields, 0)[:-4]
        preamble = packed + struct.pack("<I", zlib.crc32(packed))
        f.seek(0)
        f.write(preamble + b"\0" * (PREAMBLE_SIZE - len(preamble)))
        f.write(_slot_bytes(1, header, slot_size))
        f.write(b"\0" * slot_size)
        f.flush()
        os.fsync(f.fileno())


def pending_slot(info: ContainerInfo, active: Slot, header: GraphHeader) -> tuple[int, bytes]:
    """Where the header goes (the slot that is not active) and that slot's bytes, its newest generation; what
    write_pending_header writes, and what a bucket's rewrite of the object puts there."""
    generation = max(s.generation for s in info.slots) + 1
    return info.slot_offset(1 - active.index), _slot_bytes(generation, header, info.slot_size)


def write_pending_header(info: ContainerInfo, active: Slot, header: GraphHeader) -> None:
    """Write a header into the slot that is not active, durably; the active slot is left untouched."""
    offset, data = pending_slot(info, active, header)
    fd = os.open(info.path, os.O_WRONLY)
    try:
        half = len(data) // 2
        os.pwrite(fd, data[:half], offset)
        faults.checkpoint("container.half_header_written")
        os.pwrite(fd, data[half:], offset + half)
        os.fsync(fd)
    finally:
        os.close(fd)
