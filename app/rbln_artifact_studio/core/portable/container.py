"""The simulator's .rbln container layout (docs/rbln-container.md): the one place its numbers are written.

The studio's reader and writer (core/simulator/container.py) and a server's scan and snapshot programs
(remote/on_server/) read the same preamble and header slots from these.
"""

import struct

MAGIC = b"RBLNSIM\x00"
VERSION = 1
PREAMBLE_SIZE = 4096
PREAMBLE = struct.Struct("<8sIIQQII")  # magic, version, slot_size, payload_offset, payload_length, payload_crc, crc
SLOT_MAGIC = b"SLOT"
SLOT = struct.Struct("<4sQII")  # magic, generation, json length, crc32(generation, length, json)
MIN_SLOT_SIZE = 64 * 1024
MAX_SLOT_SIZE = 16 * 1024 * 1024
SLOT_ALIGN = 4096  # a slot's size is a whole number of pages
_U32 = struct.Struct("<I")
_SLOT_SIZE_AT = 12  # in the preamble, after the magic and the version
_LENGTH_AT = 12  # in a slot, after its magic and generation


def declared_slot_size(head: bytes) -> int:
    """The header slot size a preamble's first bytes declare; 0 when they are too few to say."""
    return _U32.unpack_from(head, _SLOT_SIZE_AT)[0] if len(head) >= _SLOT_SIZE_AT + _U32.size else 0


def valid_slot_size(size: int) -> bool:
    """Whether a declared slot size is one the format allows."""
    return MIN_SLOT_SIZE <= size <= MAX_SLOT_SIZE and size % SLOT_ALIGN == 0


def slot_body_length(start: bytes) -> int:
    """The length of the JSON a header slot holds, from the slot's first SLOT.size bytes; 0 when they are fewer."""
    return _U32.unpack_from(start, _LENGTH_AT)[0] if len(start) >= SLOT.size else 0
