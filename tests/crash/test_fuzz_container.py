"""Fuzzing the .rbln container inside an artifact: truncation, flipped bytes, wrong versions and sizes with a
valid preamble checksum, and header slots with a valid checksum around hostile JSON. Every reader ends in a
StudioError or an honest status, never a traceback, a hang or a write (badinput.read_everything)."""

from __future__ import annotations

import json
import shutil
import struct
import zlib
from pathlib import Path

import pytest
from badinput import dumps, fuzz, mutate_mapping, read_everything
from harness import SHAPE, tiny_model_config, tree_digest
from hypothesis import strategies as st

from rbln_artifact_studio.core.fleet.artifact import Status, open_artifact
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact
from rbln_artifact_studio.core.simulator.container import _PREAMBLE, _SLOT, PREAMBLE_SIZE, SLOT_MAGIC, read_container

GRAPHS = ["prefill.rbln", "decoder_batch_2.rbln"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-container")
    (root / "model").mkdir()
    (root / "model" / "config.json").write_text(json.dumps(tiny_model_config(1)))
    options = {k.lstrip("-"): int(v) for k, v in zip(SHAPE[::2], SHAPE[1::2], strict=True)}
    request = CompileRequest(model_id=str(root / "model"), materialize_weights=True, **options)  # type: ignore[arg-type]
    return write_artifact(plan_compile(request), root / "pristine")


@pytest.fixture(scope="module")
def folder(pristine: Path) -> Path:
    (pristine.parent / "scan").mkdir()
    return Path(shutil.copytree(pristine, pristine.parent / "scan" / "art"))


def _restore(pristine: Path, folder: Path) -> None:
    for name in GRAPHS:
        shutil.copyfile(pristine / name, folder / name)


def preamble(slot_size: int, payload_offset: int, payload_length: int, version: int = 1, crc: int = 0) -> bytes:
    packed = _PREAMBLE.pack(b"RBLNSIM\x00", version, slot_size, payload_offset, payload_length, crc, 0)[:-4]
    return packed + struct.pack("<I", zlib.crc32(packed))


def slot(body: bytes, generation: int, slot_size: int) -> bytes:
    """A header slot whose checksum is valid whatever the body says."""
    crc = zlib.crc32(struct.pack("<QI", generation, len(body)) + body)
    data = _SLOT.pack(SLOT_MAGIC, generation, len(body), crc) + body
    return data[:slot_size] + b"\0" * max(0, slot_size - len(data))


def _check(folder: Path) -> None:
    before = tree_digest(folder.parent)
    problems = read_everything(folder)
    assert tree_digest(folder.parent) == before
    assert problems == [], problems


def damaged_bytes(pristine: Path, folder: Path, data: st.DataObject) -> None:
    _restore(pristine, folder)
    name = data.draw(st.sampled_from(GRAPHS))
    blob = bytearray((folder / name).read_bytes())
    info = read_container(folder / name)
    regions = {
        "preamble": (0, 40),
        "slot0": (PREAMBLE_SIZE, PREAMBLE_SIZE + 200),
        "slot1": (PREAMBLE_SIZE + info.slot_size, PREAMBLE_SIZE + info.slot_size + 200),
        "anywhere": (0, len(blob)),
    }
    lo, hi = regions[data.draw(st.sampled_from(sorted(regions)))]
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(lo, hi - 1))
        blob[i] ^= data.draw(st.integers(1, 255))
    if data.draw(st.booleans()):
        blob = blob[: data.draw(st.integers(0, len(blob)))]
    (folder / name).write_bytes(bytes(blob))
    _check(folder)


test_damaged_bytes, test_damaged_bytes_deep = fuzz(quick=40, deep=500)(damaged_bytes)


def preamble_with_valid_checksum_and_hostile_fields(pristine: Path, folder: Path, data: st.DataObject) -> None:
    _restore(pristine, folder)
    name = data.draw(st.sampled_from(GRAPHS))
    blob = (folder / name).read_bytes()
    info = read_container(folder / name)
    u32, u64 = st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1)
    version = data.draw(st.sampled_from([1, 1, 0, 2, 2**32 - 1]))
    slot_size = data.draw(st.one_of(st.just(info.slot_size), u32, st.sampled_from([0, 4096, 65536, 16 << 20])))
    offset = data.draw(st.one_of(st.just(PREAMBLE_SIZE + 2 * slot_size), u64))
    length = data.draw(st.one_of(st.just(info.payload_length), u64, st.integers(0, len(blob))))
    head = preamble(slot_size, offset, length, version, info.payload_crc)
    (folder / name).write_bytes(head + blob[len(head) :])
    _check(folder)


test_preamble_with_valid_checksum_and_hostile_fields, test_preamble_with_valid_checksum_and_hostile_fields_deep = fuzz(
    quick=40, deep=500
)(preamble_with_valid_checksum_and_hostile_fields)


def header_slot_with_valid_checksum_and_hostile_json(pristine: Path, folder: Path, data: st.DataObject) -> None:
    """The slot the config selects (same block count) carries hostile allocation tables, types or sizes."""
    _restore(pristine, folder)
    name = data.draw(st.sampled_from(GRAPHS))
    info = read_container(folder / name)
    header = info.current().header.model_dump()
    doc = mutate_mapping(header, data.draw, ["kvcache_num_blocks", "chiplets", "num_devices"])
    if isinstance(doc, dict) and data.draw(st.booleans()):
        doc["kvcache_num_blocks"] = header["kvcache_num_blocks"]  # keep it selectable
    index = data.draw(st.sampled_from([0, 1]))  # replace the current slot, or add a newer one beside it
    generation = data.draw(st.sampled_from([1, 2, 2**64 - 1]))
    with open(folder / name, "r+b") as f:
        f.seek(info.slot_offset(index))
        f.write(slot(dumps(doc), generation, info.slot_size))
    _check(folder)


test_header_slot_with_valid_checksum_and_hostile_json, test_header_slot_with_valid_checksum_and_hostile_json_deep = (
    fuzz(quick=40, deep=500)(header_slot_with_valid_checksum_and_hostile_json)
)


def test_hostile_grids_are_reported_not_raised(pristine: Path, folder: Path) -> None:
    """Ragged, short and negative allocation grids in a checksummed header: an invalid artifact, no crash."""
    grids: list[list[list[int]]] = [[], [[]], [[1, 2], [3]], [[-5]], [[2**70]], [[1]] * 9]
    for grid in grids:
        _restore(pristine, folder)
        info = read_container(folder / "prefill.rbln")
        header = info.current().header.model_dump()
        header["alloc_per_chiplet_by_key"] = {**header["alloc_per_chiplet_by_key"], "DramTensor": grid}
        with open(folder / "prefill.rbln", "r+b") as f:
            f.seek(info.slot_offset(1))
            f.write(slot(json.dumps(header).encode(), 2, info.slot_size))
        _check(folder)
        art = open_artifact(folder)
        assert art.status is Status.INVALID or art.breakdown() is not None


def test_header_that_outgrows_its_slot_changes_nothing(pristine: Path, tmp_path: Path) -> None:
    """A new header too large for its slot is refused before any byte is written, and the message no longer
    sends the user to a copy (found by reading the write path: a copy keeps the same slot size, so the
    advice 'resize to a copy instead, which lays the container out anew' could not work)."""
    from rbln_artifact_studio.core.errors import ContainerError
    from rbln_artifact_studio.core.simulator.container import write_pending_header

    path = Path(shutil.copyfile(pristine / "prefill.rbln", tmp_path / "prefill.rbln"))
    info = read_container(path)
    before = path.read_bytes()
    header = info.current().header
    huge = header.model_copy(update={"resizable": [f"tensor_{i}" for i in range(info.slot_size // 8)]})
    with pytest.raises(ContainerError) as caught:
        write_pending_header(info, info.current(), huge)
    assert "choose a smaller count" in str(caught.value) and "copy" not in str(caught.value)
    assert path.read_bytes() == before
