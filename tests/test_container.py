"""The simulator's .rbln container: round trip, two slots, and every kind of damage ends in ContainerError."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rbln_artifact_studio.core.errors import ContainerError
from rbln_artifact_studio.core.simulator.container import (
    PREAMBLE_SIZE,
    ContainerInfo,
    GraphHeader,
    read_container,
    write_container,
    write_pending_header,
)


def header(blocks: int = 5, graph: str = "prefill") -> GraphHeader:
    return GraphHeader(
        graph=graph,
        npu="RBLN-CA25",
        num_devices=1,
        chiplets=1,
        kvcache_num_blocks=blocks,
        compiled_kvcache_num_blocks=5,
        weights_bytes=1 << 20,
        resizable=["t0"],
        alloc_per_chiplet_by_key={"Weight": [[1 << 20]], "DramTensor": [[blocks << 21]]},
        dram_tensor_sizes={"t0": [[blocks << 21]]},
    )


def payload_crc_matches(info: ContainerInfo) -> bool:
    """Read the whole payload and compare its CRC with the recorded one (the studio never reads the payload)."""
    with open(info.path, "rb") as f:
        f.seek(info.payload_offset)
        data = f.read(info.payload_length)
    return len(data) == info.payload_length and zlib.crc32(data) == info.payload_crc


def test_round_trip_without_reading_the_payload(tmp_path: Path) -> None:
    path = tmp_path / "prefill.rbln"
    write_container(path, header(), payload_length=3 << 20)
    info = read_container(path)
    assert info.current().header == header()
    assert info.payload_length == 3 << 20
    assert path.stat().st_size == info.payload_offset + (3 << 20)
    assert payload_crc_matches(info)


def test_pending_slot_is_chosen_only_when_the_config_says_so(tmp_path: Path) -> None:
    path = tmp_path / "prefill.rbln"
    write_container(path, header(5))
    info = read_container(path)
    write_pending_header(info, info.current(5), header(9))
    info = read_container(path)
    assert info.current(5).header.kvcache_num_blocks == 5
    assert info.current(9).header.kvcache_num_blocks == 9
    assert info.current().header.kvcache_num_blocks == 9  # newest, for tools without the config
    with pytest.raises(ContainerError, match=r"holds KV buffers for 5, 9 blocks, but rbln_config\.json records 7"):
        info.current(7)


def test_payload_corruption_is_caught_by_verify(tmp_path: Path) -> None:
    path = tmp_path / "prefill.rbln"
    write_container(path, header(), payload_length=1 << 20)
    info = read_container(path)
    with open(path, "r+b") as f:
        f.seek(info.payload_offset + 12345)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    assert not payload_crc_matches(read_container(path))


def _fresh(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "g.rbln"
    write_container(path, header(), payload_length=4096)
    return path, path.read_bytes()


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda b: b[:100], "truncated|not a simulator"),
        (lambda b: b[:-1], "truncated"),
        (lambda b: b"NOTRBLN!" + b[8:], "not a simulator"),
        (lambda b: b[:8] + struct.pack("<I", 99) + b[12:], "version 99|damaged preamble"),
        (lambda b: b[:30] + bytes([b[30] ^ 1]) + b[31:], "damaged preamble"),
        (lambda b: b[: PREAMBLE_SIZE + 40] + b"X" + b[PREAMBLE_SIZE + 41 :], "no valid header"),
        (lambda b: b"", "not a simulator"),
    ],
)
def test_damage_is_reported(tmp_path: Path, mutate, needle: str) -> None:
    path, data = _fresh(tmp_path)
    path.write_bytes(mutate(data))
    with pytest.raises(ContainerError, match=needle):
        read_container(path)


def test_version_bump_with_valid_checksum_says_update(tmp_path: Path) -> None:
    import zlib

    path, data = _fresh(tmp_path)
    pre = bytearray(data[:36])
    pre[8:12] = struct.pack("<I", 2)
    fixed = bytes(pre) + struct.pack("<I", zlib.crc32(bytes(pre))) + data[40:]
    path.write_bytes(fixed)
    with pytest.raises(ContainerError, match="format version 2; this tool reads version 1"):
        read_container(path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_flipped_or_truncated_bytes_never_escape_as_other_errors(tmp_path: Path, data: st.DataObject) -> None:
    path, original = _fresh(tmp_path)
    blob = bytearray(original[: PREAMBLE_SIZE + 70_000])
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] ^= data.draw(st.integers(1, 255))
    cut = data.draw(st.integers(0, len(original)))
    mutated = bytes(blob) + original[len(blob) :]
    path.write_bytes(mutated[:cut] if data.draw(st.booleans()) else mutated)
    try:
        info = read_container(path)
    except ContainerError:
        return
    # Surviving reads must still be a valid header (the flips hit padding or the other slot).
    assert info.current().header.graph == "prefill"


def test_a_header_with_a_negative_byte_count_is_damage(tmp_path: Path) -> None:
    """Estimation trusts the tables' values (checked here): a slot whose table holds a negative size is invalid."""
    path = tmp_path / "prefill.rbln"
    bad = header().model_copy(update={"dram_tensor_sizes": {"t0": [[-(5 << 21)]]}})
    write_container(path, bad)
    with pytest.raises(ContainerError, match="no valid header"):
        read_container(path)


def test_a_header_longer_than_the_first_read_is_read_whole(tmp_path: Path) -> None:
    """Headers of many devices and tensors outgrow the 16 KiB first read of a slot; the rest is read after it."""
    many = {f"t{i}": [[5 << 21] * 8 for _ in range(16)] for i in range(200)}
    big = header().model_copy(update={"dram_tensor_sizes": many, "resizable": sorted(many)})
    assert len(big.model_dump_json()) > 64 * 1024
    path = tmp_path / "prefill.rbln"
    write_container(path, big)
    info = read_container(path)
    assert info.current(5).header.dram_tensor_sizes == many


_VALID = header().model_dump()


@pytest.mark.parametrize(
    "body",
    [
        header().model_dump_json().encode(),
        b'{"extra": [1, 2], ' + header().model_dump_json().encode()[1:],  # an unknown key is ignored by both
        *(  # every field of the wrong type, out of bounds, or missing
            __import__("json").dumps(changed).encode()
            for changed in [
                {**_VALID, "num_devices": 0},
                {**_VALID, "num_devices": True},
                {**_VALID, "chiplets": 1.0},
                {**_VALID, "weights_bytes": -1},
                {**_VALID, "npu": 25},
                {**_VALID, "resizable": [1]},
                {**_VALID, "resizable": "t0"},
                {**_VALID, "alloc_per_chiplet_by_key": {"Weight": [[-1]]}},
                {**_VALID, "dram_tensor_sizes": {"t0": [[False]]}},
                {**_VALID, "dram_tensor_sizes": {"t0": [5]}},
                {**_VALID, "dram_tensor_sizes": {"t0": [[10**30]]}},  # big, yet an int: both accept it
                {k: v for k, v in _VALID.items() if k != "graph"},
                [_VALID],
            ]
        ),
        header().model_dump_json().encode().replace(b'"prefill"', b'"pre\xfffill"'),  # not UTF-8
        header().model_dump_json().encode().replace(b"1048576", b"NaN", 1),
    ],
)
def test_the_scans_lean_header_reader_agrees_with_the_model(body: bytes) -> None:
    """The reader a scan uses instead of pydantic's validator gives the model's header or leaves it to the model."""
    from pydantic import ValidationError

    from rbln_artifact_studio.core.simulator.container import _lean_header

    try:
        expected: GraphHeader | None = GraphHeader.model_validate_json(body)
    except (ValidationError, ValueError):
        expected = None
    lean = _lean_header(body)
    assert lean is None or lean == expected  # never a header the model refuses, never another one
    if expected is not None and b"\xff" not in body:
        assert lean == expected
