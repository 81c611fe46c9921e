"""The scan's lean reader of rbln_config.json: msgspec's typed decoding of the keys a row reads, with the pydantic
model's limits (config_model.RblnConfig words the errors of the files it leaves), nothing built of the rest."""

from __future__ import annotations

import re
import sys
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypedDict

import msgspec
from msgspec import UNSET, Meta

from rbln_artifact_studio.core.model import upstream
from rbln_artifact_studio.core.model.config_fields import (
    _MAX_DIM,
    _SIZE_OF,
    DEFAULT_DTYPE,
    FULL_ATTENTION,
    MAX_BLOCKS,
    KvScan,
    kv_scan,
)

if TYPE_CHECKING:
    DtypeName = str  # a Literal built at run time, which a type checker cannot read
else:
    DtypeName = Literal[tuple(_SIZE_OF)]

Dim = Annotated[int, Meta(ge=0, le=_MAX_DIM)]
Length = Annotated[int, Meta(ge=1, le=_MAX_DIM)]
Devices = Annotated[int, Meta(ge=1, le=1 << 16)]


class CacheMetaEntry(msgspec.Struct, frozen=True, gc=False):
    """One KV cache tensor of cache_metas, as RblnConfig's CacheMeta takes it (its other keys are dropped)."""

    name: str
    shape: tuple[Dim, Dim, Dim, Dim]
    layer_index: int | None = None
    layer_type: str = FULL_ATTENTION
    is_auto: bool = True
    dtype: DtypeName = DEFAULT_DTYPE


class CompileCfg(TypedDict, total=False):
    """What a row reads of a _compile_cfgs entry: its graph's name; of the first, npu and num_devices."""

    compiled_model_name: Any
    npu: Any
    num_devices: Any
    tensor_parallel_size: Any


# The keys a row reads, by the file's name, each with the type and limits RblnConfig gives it.
FIELD_TYPES: dict[str, Any] = {
    "cls_name": str | None,
    "batch_size": Annotated[int, Meta(ge=1, le=1 << 20)],
    "max_seq_len": Length,
    "kvcache_num_blocks": Annotated[int, Meta(ge=-MAX_BLOCKS, le=MAX_BLOCKS)],
    "kvcache_block_size": Length | None,
    "kvcache_partition_len": Length | None,
    "attn_impl": str | None,
    "npu": str | None,
    "num_devices": Devices | None,  # null: one device (optimum-rbln saves an unset count so)
    "prefill_chunk_size": Length | None,
    "dtype": str | None,
    "decoder_batch_sizes": list[int] | None,
    "cache_metas": list[CacheMetaEntry] | None,
    "_compile_cfgs": list[CompileCfg] | None,
    # Present only in files that need the full model's renaming rules (or its legacy-format error).
    "tensor_parallel_size": Any,
    "kvcache_metas": Any,
    "_meta": Any,
}
FIELD_NAMES = {"_compile_cfgs": "compile_cfgs", "_meta": "legacy_meta"}  # a file's key -> the record's field
VIEW_FIELDS = frozenset(FIELD_NAMES.get(key, key) for key in FIELD_TYPES)
REQUIRED = ("max_seq_len", "kvcache_num_blocks")
_DEFAULTS: dict[str, Any] = {**dict.fromkeys(VIEW_FIELDS), "batch_size": 1, "num_devices": 1}
# What optimum-rbln writes first, in its order: a decoder looking for the next key finds it at once.
_WRITTEN_FIRST = ("cls_name", "dtype", "optimum_rbln_version", "_compile_cfgs", "batch_size", "max_seq_len")
_DECODE_ERRORS = (msgspec.DecodeError, RecursionError)  # a ValidationError is a DecodeError
# cache_metas is kept as its bytes at first: every copy of a model (the same graphs at another block count) has the
# same, decoded and summed once (_cache_metas).
_DECODED_AS: dict[str, Any] = {**FIELD_TYPES, "cache_metas": msgspec.Raw}
_METAS = msgspec.json.Decoder(FIELD_TYPES["cache_metas"])
# Remembered: 64 distinct cache_metas (a fleet's models), each of at most 256 KiB (a model's is ~20 KB indented, 72
# tensors; 256 tensors ~60 KB): 16 MiB at most, whatever a broken or hostile fleet holds.
_MAX_KNOWN_METAS = 64
_MAX_KNOWN_SIZE = 256 << 10
_known_metas: dict[bytes, tuple[tuple[CacheMetaEntry, ...], KvScan] | None] = {}


@cache
def _decoder_file() -> tuple[msgspec.json.Decoder[Any], tuple[str, ...]]:
    """The decoder of a file holding only keys a decoder-only model's config takes (most files a scan reads), in
    one pass, and the file's name of each of its fields; a file with another key it refuses (then _by_key)."""
    keys = sorted(upstream.decoder_keys() | FIELD_TYPES.keys(), key=_written_order)
    fields = [(key.lstrip("_"), _DECODED_AS.get(key, Any) | msgspec.UnsetType, UNSET) for key in keys]
    rename = {key.lstrip("_"): key for key in keys if key.startswith("_")}
    struct = msgspec.defstruct("DecoderConfigFile", fields, rename=rename, forbid_unknown_fields=True)
    return msgspec.json.Decoder(struct), tuple(keys)


def _written_order(key: str) -> tuple[int, str]:
    return (_WRITTEN_FIRST.index(key), "") if key in _WRITTEN_FIRST else (len(_WRITTEN_FIRST), key)


_ANY_VALUE = msgspec.json.Decoder()


def _value_decoder(key: str) -> msgspec.json.Decoder[Any]:
    # one decoder per key a row reads; any other key's (a file's own, of any name and number) the shared one
    return _typed_decoder(key) if key in _DECODED_AS else _ANY_VALUE


@cache
def _typed_decoder(key: str) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(_DECODED_AS[key])


_TOP_LEVEL = msgspec.json.Decoder(dict[str, msgspec.Raw])


def decode(data: bytes) -> dict[str, Any] | None:
    """The file's top-level keys and values in file order (a row's keys typed and checked, the others as JSON has
    them, cache_metas as its bytes); None when it is no JSON object, no UTF-8 text, or a row's key breaks its type
    or limits."""
    if not data.isascii() and not _is_utf8(data):  # msgspec checks only what it builds, not input_info's strings
        return None
    if _long_digit_run(data):  # nor the digits of input_info's numbers against Python's limit, as json.load does
        return None
    decoder, keys = _decoder_file()
    try:
        found = decoder.decode(data)
    except msgspec.ValidationError:  # another key, or a wrong type: key by key (it tells which)
        return _by_key(data)
    except _DECODE_ERRORS:
        return None
    values = {key: value for key, value in zip(keys, msgspec.structs.astuple(found), strict=True) if value is not UNSET}
    cls_name = values.get("cls_name")
    # known_class first: accepted_keys remembers every name it is asked (unknown ones take the key by key path anyway)
    if type(cls_name) is str and upstream.known_class(cls_name) and values.keys() <= upstream.accepted_keys(cls_name):
        return values  # in the struct's order, not the file's: only the keys a loader refuses are listed in order
    return _by_key(data)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_DIGITS = re.compile(rb"[0-9]*")
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _long_digit_run(data: bytes) -> bool:
    """Whether the text may hold an integer json.load refuses (more digits than sys.get_int_max_str_digits): a run
    of more than half that many digits (a string's too: the model says which), in well under a microsecond."""
    limit = getattr(sys, "get_int_max_str_digits", int)()  # Python 3.10.6 and older: no limit
    if not limit or len(data) <= limit:
        return False
    # Every step-th byte: a run of limit + 1 digits holds two samples in a row, so one test per such pair.
    step = (limit + 1) // 2
    samples = data[::step].translate(_DIGITS_AS_ZERO)
    at = samples.find(b"00")
    while at >= 0:
        start = at * step
        match = _DIGITS.match(data, start)
        if match is not None and match.end() > start + step:
            return True
        at = samples.find(b"00", at + 1)
    return False


def _by_key(data: bytes) -> dict[str, Any] | None:
    try:
        return {key: _value_decoder(key).decode(value) for key, value in _TOP_LEVEL.decode(data).items()}
    except _DECODE_ERRORS:
        return None


def _cache_metas(raw: msgspec.Raw) -> tuple[tuple[CacheMetaEntry, ...], KvScan] | None:
    """cache_metas' tensors and their sums (None for null), worked out once for the same bytes; ValidationError
    when they break their types or limits."""
    key = bytes(raw)
    known = _known_metas.get(key, UNSET)  # one look: another thread may clear it between two (a window's readers)
    if known is not UNSET:
        return known
    entries = _METAS.decode(key)
    known = None if entries is None else (tuple(entries), kv_scan(entries))
    if len(key) <= _MAX_KNOWN_SIZE:
        if len(_known_metas) >= _MAX_KNOWN_METAS:
            _known_metas.clear()
        _known_metas[key] = known
    return known


def record_fields(
    values: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], set[str], tuple[str, ...]] | None:
    """(the record's fields, the file's other keys and values, the names set, the file's keys) from decode's
    mapping, as pydantic's model fields with validation aliases give them; None when a required key is missing,
    cache_metas breaks its types or limits, or the first compile config's npu or num_devices, taken when the top
    level has none, breaks its type (the model words the error)."""
    if not all(key in values for key in REQUIRED):
        return None
    fields = dict(_DEFAULTS)
    if "cache_metas" in values:
        try:
            metas = _cache_metas(values["cache_metas"])
        except _DECODE_ERRORS:
            return None
        values = {**values, "cache_metas": None if metas is None else metas[0]}
        if metas is not None:  # and their sums: the record's _kv_scan, not summed again
            fields["_kv_scan"] = metas[1]
    extra: dict[str, Any] = {}
    names: set[str] = set()
    for key, value in values.items():
        if key in FIELD_TYPES:
            name = FIELD_NAMES.get(key, key)
            fields[name] = value
        else:
            name = key  # "compile_cfgs" spelt so in a file is no field of ours: its field is "_compile_cfgs"
            extra[key] = value
        names.add(name)
    cfgs = fields["compile_cfgs"]
    first: dict[str, Any] = cfgs[0] if cfgs else {}  # optimum-rbln keeps npu and num_devices there
    for key in ("npu", "num_devices"):
        if key not in values and key in first:
            fields[key] = first[key]
            names.add(key)
    npu, devices = fields["npu"], fields["num_devices"]
    if npu is not None and type(npu) is not str:
        return None
    if devices is None:
        fields["num_devices"] = 1
    elif type(devices) is not int or not 1 <= devices <= 1 << 16:
        return None
    return fields, extra, names, tuple(values)
