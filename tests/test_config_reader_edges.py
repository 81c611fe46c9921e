"""Edge documents for the scan's lean reader of rbln_config.json (config_reader via rbln_config.read_view): for each,
the reader either leaves the file to the pydantic model (None) or gives the model's fields, figures, graph names and
the raw mapping's kind and loader warnings; it never raises, and its cache of cache_metas never mixes files up."""

from __future__ import annotations

import gc
import json
import sys
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from test_config_reader import BASE, CFG_KEYS, META_KEYS, SHAPES, TOP_KEYS, VALUES, figures

from rbln_artifact_studio.core.errors import ConfigError
from rbln_artifact_studio.core.model import config_reader, upstream
from rbln_artifact_studio.core.model.config_checks import expected_graph_names
from rbln_artifact_studio.core.model.config_model import RblnConfig
from rbln_artifact_studio.core.model.kinds import kind_of, upstream_problems
from rbln_artifact_studio.core.model.rbln_config import ConfigRecord, config_from_bytes, read_view

PATH = Path("artifact/rbln_config.json")


def dumps(raw: dict[str, Any]) -> bytes:
    return json.dumps(raw).encode()


def with_tail(raw: dict[str, Any], tail: bytes) -> bytes:
    """The document's JSON text with `tail` (raw JSON members, written as a user's editor would) before its brace."""
    return dumps(raw)[:-1] + b", " + tail + b"}"


def model_of(data: bytes) -> tuple[dict[str, Any], RblnConfig] | None:
    """What the full path makes of the bytes: json.loads (decode_json) and the pydantic model; None when refused."""
    try:
        raw = json.loads(data.decode("utf-8"))
        return raw, RblnConfig.model_validate(raw)
    except (UnicodeDecodeError, ValueError, RecursionError, ValidationError):  # JSONDecodeError is a ValueError
        return None


def assert_agree(data: bytes) -> ConfigRecord | None:
    """The reader's contract on one document: None, or exactly what the model and the raw mapping say."""
    lean = read_view(data)
    full = model_of(data)
    if full is None:
        assert lean is None, "the lean reader gave a row for a file the model refuses"
        return None
    if lean is None:
        return None
    raw, model = full
    assert figures(lean) == figures(model)
    assert lean.expected_graph_names == expected_graph_names(raw)
    stand_in = lean.top_level_stand_in()
    assert kind_of(stand_in) == kind_of(raw)
    assert upstream_problems(stand_in) == upstream_problems(raw)
    return lean


def without_top_level_target() -> dict[str, Any]:
    """BASE with npu and num_devices only in _compile_cfgs, as optimum-rbln 0.12 writes them."""
    return {k: v for k, v in BASE.items() if k not in ("npu", "num_devices")}


# ---- the loader warnings and kind of the stand-in ---------------------------------------------------------------


def test_unexpected_keys_are_named_in_the_files_order() -> None:
    """A class that refuses modelled keys (here an encoder's, as a VLM's language_model/ file may name): the
    warning lists them in the file's order, word for word what the raw mapping gives (the full check words a VLM's
    language_model/ file from the stand-in, the scan row from the raw mapping: the two must read alike)."""
    doc = {
        "cls_name": "RBLNBertModelConfig",
        "zz_extra": 1,
        "max_seq_len": 512,
        "kvcache_num_blocks": 4,
        "attn_impl": "eager",
    }
    lean = assert_agree(dumps(doc))
    assert lean is not None


def test_a_repeated_cls_name_gives_the_last_class_and_its_warning_in_file_order() -> None:
    """A decoder file whose cls_name is written again (another class) at its end: both readers take the last
    value, and the warning names the keys that class refuses in the file's order."""
    lean = assert_agree(with_tail(BASE, b'"cls_name": "RBLNBertModelConfig"'))
    assert lean is not None and lean.cls_name == "RBLNBertModelConfig"


def test_npu_only_in_compile_cfgs_is_no_top_level_key_of_the_stand_in() -> None:
    """npu taken from _compile_cfgs[0] is a field of the record, not a key of the file: a class that does not
    take npu is not said to be given one; a _compile_cfgs that is null is still a key the class refuses."""
    cfgs: dict[str, Any] = {"_compile_cfgs": [{"npu": "RBLN-CA25", "num_devices": 2}]}
    doc = {"cls_name": "RBLNCompileConfig", "max_seq_len": 512, "kvcache_num_blocks": 4} | cfgs
    lean = assert_agree(dumps(doc))
    assert lean is not None and (lean.npu, lean.num_devices) == ("RBLN-CA25", 2)
    assert assert_agree(dumps(doc | {"_compile_cfgs": None})) is not None


def test_class_names_no_loader_knows_are_not_remembered() -> None:
    """A fleet whose files name many classes no optimum-rbln knows (a typo per copy, a generated name): reading
    them remembers nothing per name, so a long-running GUI's memory does not grow with every file it scans."""
    before = upstream.accepted_keys.cache_info().currsize
    for i in range(50):
        assert read_view(dumps({**BASE, "cls_name": f"RBLNUnheardOf{i}ForCausalLMConfig"})) is not None
    assert upstream.accepted_keys.cache_info().currsize == before


def test_a_file_of_many_keys_leaves_nothing_behind_once_read() -> None:
    """Keys of a file's own (20,000 notes here, a generated or hostile file) cost memory while it is read, not
    for the rest of a long-running GUI's life: each distinct key name must not be remembered."""
    read_view(dumps(BASE))  # what every read builds once (the decoders of the keys a row reads)
    data = dumps({**BASE, **{f"note_{i}": i for i in range(20_000)}})
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        assert read_view(data) is not None
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert retained < 256 << 10


def _known_classes(decoder: bool) -> list[str]:
    names = sorted(upstream._classes())
    return [c for c in names if upstream.derives_from(c, upstream.DECODER_BASE) == decoder]


_OTHER_KEYS = ["zz_extra", "rbln_studio_simulator", "compile_cfgs", "model_input_names", "enc_max_seq_len", ""]
_VALUES = {**BASE, "language_model": {"cls_name": "RBLNLlamaForCausalLMConfig", "kvcache_num_blocks": 3}}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cls_name=st.one_of(
        st.sampled_from(_known_classes(decoder=True)),
        st.sampled_from(_known_classes(decoder=False)),
        st.sampled_from(["RBLNMysteryForCausalLMConfig", "Mystery", None, "<absent>"]),
    ),
    keys=st.lists(
        st.sampled_from(sorted(upstream.decoder_keys() - {"tensor_parallel_size", "kvcache_metas", "cls_name"}))
        | st.sampled_from([*_OTHER_KEYS, "language_model", "vision_tower"]),
        unique=True,
        max_size=12,
    ),
    where=st.lists(st.integers(min_value=0, max_value=12), min_size=3, max_size=3),
)
def test_keys_of_any_class_in_any_order_give_the_raw_mappings_kind_and_warnings(
    cls_name: str | None, keys: list[str], where: list[int]
) -> None:
    """Files holding keys of other decoder classes, of other kinds of model, or none at all, in any order,
    under any class: the reader's stand-in gives the kind and loader warnings the raw mapping gives."""
    keys = [k for k in keys if k not in ("max_seq_len", "kvcache_num_blocks")]
    for key, at in zip(("max_seq_len", "kvcache_num_blocks", "cls_name"), where, strict=True):
        if key != "cls_name" or cls_name != "<absent>":
            keys.insert(min(at, len(keys)), key)
    doc = {key: _VALUES.get(key, False) for key in keys}
    if "cls_name" in doc:
        doc["cls_name"] = cls_name
    assert_agree(dumps(doc))


# ---- JSON text both parsers must read alike ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tail", "count"),
    [
        (b'"kvcache_num_blocks": 5', 5),  # written twice: JSON readers take the last
        (b'"kvcache\\u005fnum_blocks": 7', 7),  # the same key, spelt with an escape
        (b'"kvcache_num_blocks": "5", "kvcache_num_blocks": 6', 6),  # a wrong value, then a right one
    ],
)
def test_a_key_written_twice_counts_as_its_last_value(tail: bytes, count: int) -> None:
    """The row shows the block count optimum-rbln (json.load) reads: the last one written."""
    lean = assert_agree(with_tail(BASE, tail))
    assert lean is not None and lean.kvcache_num_blocks == count


def test_a_right_value_then_a_wrong_one_is_left_to_the_model() -> None:
    """The last value is the one that counts: a wrong one there is the model's error to word, never a row."""
    assert read_view(with_tail(BASE, b'"max_seq_len": "long"')) is None
    assert read_view(with_tail(BASE, b'"cache_metas": 5')) is None
    assert assert_agree(b'{"cache_metas": 5, ' + dumps(BASE)[1:]) is not None  # the first one is overwritten


@pytest.mark.parametrize(
    "tail",
    [b'"use_inputs_embeds": true', b'"zz_extra": 1, "zz_extra": 2', b'"_compile_cfgs": []', b'"cache_metas": null'],
)
def test_other_repeated_keys_agree(tail: bytes) -> None:
    assert assert_agree(with_tail(BASE, tail)) is not None


def test_keys_spelt_with_escapes_are_the_same_keys() -> None:
    """Escaped key names (an editor's \\u escapes) are read as the keys they spell."""
    data = dumps(without_top_level_target()).replace(b'"_compile_cfgs"', b'"\\u005fcompile_cfgs"')
    data = data.replace(b'"cls_name"', b'"cls\\u005fname"')
    lean = assert_agree(data)
    assert lean is not None and lean.npu == "RBLN-CR13" and lean.expected_graph_names == ["prefill", "decoder_batch_8"]


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + dumps(BASE),  # a byte order mark: json.loads refuses it, so the model words the error
        with_tail(BASE, b'"zz_extra": "\xff"'),  # not UTF-8
        with_tail(BASE, b'"\xff": 1'),
        dumps(BASE).replace(b"RBLNQwen3", b"RBLN\xe9Qwen3"),  # Latin-1
        json.dumps(BASE).encode("utf-16"),
        dumps(BASE).replace(b"RBLN-CR13", b"RBLN\x01CR13"),  # a raw control character in a string
        dumps(BASE)[:-1] + b",}",
        dumps(BASE) + b" x",
        b"",
        b"[]",
        b"null",
        with_tail(BASE, b'"zz_extra": ' + b"1" * 4301),  # past Python's 4300 digits
        dumps(BASE).replace(b'"max_seq_len": 40960', b'"max_seq_len": ' + b"1" * 4301),
    ],
)
def test_text_the_model_refuses_is_no_row(data: bytes) -> None:
    """Bytes json.loads refuses are left to the model (which says what is wrong), never shown as a valid row."""
    assert model_of(data) is None
    assert read_view(data) is None


@pytest.mark.parametrize(
    "tail",
    [
        b'"zz_extra": NaN',
        b'"zz_extra": -Infinity',
        b'"zz_extra": 1e400',  # json.loads: inf
        b'"zz_extra": "\\ud800"',  # a lone surrogate: json.loads keeps it
        b'"\\udc00": 1',
    ],
)
def test_python_only_json_is_left_to_the_model(tail: bytes) -> None:
    """What json.loads takes and strict JSON does not (NaN, Infinity, lone surrogates) goes the model's way (which
    takes it, or refuses a key no text can hold)."""
    data = with_tail(BASE, tail)
    assert model_of(data) is not None or tail.startswith(b'"\\u')
    assert read_view(data) is None


def _in_a_part_the_reader_skips(token: bytes, where: str) -> bytes:
    """BASE with `token` (raw JSON bytes) as a value the reader never builds: a compile config's input_info, a key
    of the second compile config, an extra key of a cache_metas entry, or the name of such a key."""
    raw: dict[str, Any] = json.loads(json.dumps(BASE))
    if where == "input_info":
        raw["_compile_cfgs"][0]["input_info"] = "@@"
    elif where == "second compile config":
        raw["_compile_cfgs"][1]["zz"] = "@@"
    elif where == "cache_metas entry":
        raw["cache_metas"][1]["quantization"] = "@@"
    else:
        raw["cache_metas"][1]["@@"] = 1
        token = token.replace(b'"', b"")
        return dumps(raw).replace(b"@@", token)
    return dumps(raw).replace(b'"@@"', token)


_SKIPPED = ["input_info", "second compile config", "cache_metas entry", "key of a cache_metas entry"]


@pytest.mark.parametrize("where", _SKIPPED)
@pytest.mark.parametrize(
    "text", [b'"\xff"', b'"\xed\xa0\x80"', b'"\xc0\xaf"', b'"\xf4\x90\x80\x80"', b'"caf\xe9"'], ids=repr
)
def test_text_that_is_not_utf8_where_the_reader_does_not_look_is_no_row(where: str, text: bytes) -> None:
    """A byte that is not UTF-8 (Latin-1, an encoded surrogate, an overlong form) in a part of the file the scan
    does not build: the row says the file is not UTF-8 at once, as the model does, not "ok" with the resize then
    failing on it."""
    data = _in_a_part_the_reader_skips(text, where)
    assert model_of(data) is None
    assert read_view(data) is None
    with pytest.raises(ConfigError, match="not UTF-8"):
        config_from_bytes(data, PATH)


@pytest.mark.parametrize("where", _SKIPPED[:3])
@pytest.mark.parametrize("digits", [4301, 4302, 6451, 100_000])
def test_a_number_of_thousands_of_digits_where_the_reader_does_not_look_is_no_row(where: str, digits: int) -> None:
    """A number past Python's 4300 digits, which json.load refuses, in a part the scan does not build: the
    row says so at once (as the model does), not "ok" with every resize then failing on it."""
    data = _in_a_part_the_reader_skips(b"-" + b"7" * digits, where)
    assert model_of(data) is None
    assert read_view(data) is None
    with pytest.raises(ConfigError, match="thousands of digits"):
        config_from_bytes(data, PATH)


@pytest.mark.parametrize("where", _SKIPPED[:3])
def test_long_numbers_and_digit_strings_json_load_takes_agree(where: str) -> None:
    """4300 digits, a float of 5000, and a string of 5000 digits: json.load takes them, and so does the reader
    or it leaves the file to the model."""
    for token in (b"9" * 4300, b"1." + b"0" * 5000, b'"' + b"5" * 5000 + b'"', b"1e5000"):
        assert model_of(_in_a_part_the_reader_skips(token, where)) is not None
        assert_agree(_in_a_part_the_reader_skips(token, where))


@pytest.mark.parametrize("where", _SKIPPED[:3])
@pytest.mark.parametrize(
    "token",
    [b'"\\x"', b'"\\u12"', b'"a\nb"', b'"a\tb"', b"01", b"1.", b"-", b".5", b"+1", b"tru", b"[1,]", b'{"a"}', b"'x'"],
    ids=repr,
)
def test_broken_json_where_the_reader_does_not_look_is_no_row(where: str, token: bytes) -> None:
    """Bad escapes, raw control characters, malformed numbers and literals in a part the scan does not build:
    the model's syntax error, never a row."""
    data = _in_a_part_the_reader_skips(token, where)
    assert model_of(data) is None
    assert read_view(data) is None


@pytest.mark.parametrize("where", _SKIPPED[:3])
@pytest.mark.parametrize("token", [b'"\\ud800"', b"NaN", b"-Infinity", b"1e400"], ids=repr)
def test_python_only_json_where_the_reader_does_not_look_agrees(where: str, token: bytes) -> None:
    """What json.loads takes and strict JSON does not, in a part the scan does not build: the reader leaves
    it to the model or reads the model's figures."""
    assert_agree(_in_a_part_the_reader_skips(token, where))


# ---- figures at their limits ---------------------------------------------------------------------------------------

_INT_FIELDS = ["batch_size", "max_seq_len", "kvcache_num_blocks", "kvcache_block_size", "kvcache_partition_len"]
_INT_FIELDS += ["num_devices", "prefill_chunk_size"]
_ODD_NUMBERS = [2**64 + 1, -(2**64) - 1, 10**30, 2**40, 2**40 + 1, -(2**40) - 1, 1.0, 1e400, 0, -1]


@pytest.mark.parametrize("key", _INT_FIELDS)
@pytest.mark.parametrize("value", _ODD_NUMBERS, ids=repr)
def test_integers_beyond_any_limit_and_whole_floats_agree(key: str, value: float) -> None:
    """Huge integers (past 64 bits), 1.0 and 1e400 in every integer field: the model's verdict, never another."""
    assert_agree(dumps({**BASE, key: value}))


@pytest.mark.parametrize("value", [2**64 + 1, -(10**30), 10**30, 2**63])
def test_huge_integers_where_the_model_sets_no_limit_agree(value: int) -> None:
    """decoder_batch_sizes, a tensor's layer_index and keys of our own: any integer, as the model takes it."""
    metas = [{**BASE["cache_metas"][0], "layer_index": value}]
    for doc in ({**BASE, "decoder_batch_sizes": [value]}, {**BASE, "cache_metas": metas}, {**BASE, "zz": value}):
        lean = assert_agree(dumps(doc))
        assert lean is not None


_SHAPES = [[2**64 + 1, 8, 8, 8], [40, 2**64, 8, 8], [40, 8, 8, 2**40], [40, 8, 8, 2**40 + 1], [40.0, 8, 8, 8]]
_SHAPES += [[True, 8, 8, 8], [40, 8, 8], [40, 8, 8, 8, 1], [-1, 8, 8, 8]]


@pytest.mark.parametrize("shape", _SHAPES)
def test_odd_cache_metas_shapes_agree(shape: list[Any]) -> None:
    """Shapes too large, of floats or booleans, or of 3 or 5 dimensions: the model's KV bytes or its error."""
    assert_agree(dumps({**BASE, "cache_metas": [{**BASE["cache_metas"][0], "shape": shape}]}))


def test_the_largest_shapes_give_exact_kv_bytes() -> None:
    """Every dimension at its limit: the bytes are Python's exact integers, as the model's."""
    big = 2**40
    metas = [{"name": "k", "shape": [big, big, big, big]}, {"name": "s", "shape": [big] * 4, "is_auto": False}]
    lean = assert_agree(dumps({**BASE, "cache_metas": metas, "max_seq_len": big, "kvcache_num_blocks": big}))
    assert lean is not None and lean.kv_bytes_per_block == big**3 * 2 and lean.kv_fixed_bytes == big**4 * 2


# ---- _compile_cfgs ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cfgs", [[], [{}], [1], [None], ["x"], [[]], [{}, 5], {}, 5, None, "prefill"], ids=repr)
def test_compile_cfgs_that_hold_no_objects_agree(cfgs: object) -> None:
    """An empty _compile_cfgs, entries that are no objects, or no list: npu and num_devices as the model has them
    (unset: one device, no npu), or the file goes to the model; never a graph the file does not promise."""
    lean = assert_agree(dumps({**without_top_level_target(), "_compile_cfgs": cfgs}))
    if lean is not None:
        assert (lean.npu, lean.num_devices, lean.expected_graph_names) == (None, 1, [])


@pytest.mark.parametrize("npu", [None, "RBLN-CA25", 5, True, [], {"a": 1}], ids=repr)
@pytest.mark.parametrize("devices", [None, 0, 1, 2, True, 1.0, "2", 2**70, -1, 1 << 16, (1 << 16) + 1], ids=repr)
def test_npu_and_num_devices_only_in_the_first_compile_cfg_agree(npu: object, devices: object) -> None:
    """optimum-rbln keeps the target in _compile_cfgs[0]: wrong types there are the model's errors, right ones give
    its figures (null num_devices: one device); the second entry is never read."""
    doc = {**without_top_level_target(), "_compile_cfgs": [{"npu": npu, "num_devices": devices}, {"npu": 7}]}
    assert_agree(dumps(doc))


def test_graph_names_that_are_no_strings_are_not_promised() -> None:
    cfgs = [{"compiled_model_name": n} for n in ("prefill", 5, None, ["x"], "decoder_batch_8")]
    lean = assert_agree(dumps({**BASE, "_compile_cfgs": cfgs}))
    assert lean is not None and lean.expected_graph_names == ["prefill", "decoder_batch_8"]


# ---- cache_metas --------------------------------------------------------------------------------------------------

_META = BASE["cache_metas"][0]


@pytest.mark.parametrize(
    "metas",
    [
        None,
        [],
        {},
        [{**_META, "extra": {"nested": [1, 2]}, "quantization": None}],
        [{**_META, "dtype": "torch.float16"}],
        [{**_META, "dtype": "torch.float8"}],
        [{**_META, "dtype": "Float16"}],
        [{**_META, "dtype": None}],
        [{**_META, "layer_type": None}],
        [{**_META, "layer_type": "mystery"}],
        [{**_META, "is_auto": None}],
        [{**_META, "is_auto": 1}],
        [{**_META, "name": 5}],
        [{**_META, "layer_index": True}],
        [_META, None],
    ],
    ids=repr,
)
def test_odd_cache_metas_agree(metas: object) -> None:
    """null, empty, extra keys, torch.-prefixed and unknown dtypes, unknown kinds: the model's KV figures."""
    assert_agree(dumps({**BASE, "cache_metas": metas}))


def test_the_same_cache_metas_in_other_files_give_each_files_own_figures() -> None:
    """Copies of a model share one reading of their cache_metas, but each row keeps its own target and count."""
    config_reader._known_metas.clear()
    one = assert_agree(dumps({**BASE, "kvcache_num_blocks": 9}))
    four = assert_agree(dumps({**BASE, "num_devices": 4, "npu": "RBLN-CA25", "kvcache_num_blocks": 30}))
    assert one is not None and four is not None and one.cache_metas is four.cache_metas
    assert one.kv_bytes_per_npu(9) != four.kv_bytes_per_npu(9)


def test_a_broken_cache_metas_is_never_remembered_as_a_good_one() -> None:
    """Bytes that break the limits are refused every time; the next file with good bytes is read anew."""
    bad = [{**_META, "shape": [40, 8, 8192, 2**41]}]
    assert read_view(dumps({**BASE, "cache_metas": bad})) is None
    assert read_view(dumps({**BASE, "cache_metas": bad})) is None
    assert assert_agree(dumps(BASE)) is not None


def test_remembered_cache_metas_stay_within_a_bounded_size() -> None:
    """A scan of many models with huge cache_metas (a hostile or broken fleet) keeps at most 16 MiB of them
    alive between files, whatever their number and size (here 40 files of 1 MiB each)."""
    config_reader._known_metas.clear()
    for i in range(40):
        metas = [{**_META, "name": f"{i}-" + "k" * (1 << 20)}]
        assert read_view(dumps({**BASE, "cache_metas": metas})) is not None
    kept = sum(len(key) for key in config_reader._known_metas)
    config_reader._known_metas.clear()
    assert kept <= 16 << 20


def test_a_scan_in_another_thread_forgetting_cache_metas_crashes_no_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GUI reads configs in several threads: another thread forgetting the remembered cache_metas (its 65th
    model) between this one's look-up and its read must cost a decode, not a KeyError in front of the user."""

    class ClearedInBetween(dict[bytes, Any]):
        def __contains__(self, key: object) -> bool:
            found = super().__contains__(key)
            self.clear()  # what another thread's reading of a new model does at that moment
            return found

    monkeypatch.setattr(config_reader, "_known_metas", ClearedInBetween())
    assert read_view(dumps(BASE)) is not None  # read and remembered
    assert assert_agree(dumps(BASE)) is not None  # found, then forgotten by the other thread


def test_reads_in_parallel_threads_agree() -> None:
    """Several threads reading different models at once (the cache cleared as it fills) each get their own."""
    docs = [dumps({**BASE, "cache_metas": [{**_META, "shape": [40, 1 + i % 300, 8, 8]}]}) for i in range(600)]
    errors: list[BaseException] = []

    def read(part: list[bytes]) -> None:
        try:
            for i, data in enumerate(part):
                view = read_view(data)
                assert view is not None and view.kv_heads == json.loads(data)["cache_metas"][0]["shape"][1], i
        except BaseException as exc:  # handed to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=read, args=(docs[i::3],)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


# ---- nesting ----------------------------------------------------------------------------------------------------------


def _nested(depth: int) -> bytes:
    return with_tail(BASE, b'"zz_extra": ' + b"[" * depth + b"]" * depth)


def test_nesting_at_any_depth_is_a_verdict_not_a_crash() -> None:
    """A file nested past Python's recursion limit: the reader leaves it to the model (which says "nested too
    deeply"), it never raises RecursionError."""
    for depth in (10, 100, 500, 2000, 100_000):
        read_view(_nested(depth))
    with pytest.raises(ConfigError, match="nested too deeply"):
        config_from_bytes(_nested(100_000), PATH)


@pytest.mark.xfail(strict=True, reason="msgspec's depth limit is a few levels past json.loads' (see the report)")
def test_a_file_the_reader_takes_can_be_rewritten_at_any_depth() -> None:
    """A row the scan shows as valid can be resized: its raw mapping (json.loads, what a rewrite starts from)
    decodes too. Near the recursion limit the reader takes a few levels more than json.loads."""
    limit = sys.getrecursionlimit()
    for depth in range(limit - 200, limit + 5):
        data = _nested(depth)
        if read_view(data) is not None:
            config_from_bytes(data, PATH).raw  # noqa: B018 - the decode is what is checked


def _object_text(pairs: list[tuple[str, str]]) -> str:
    """A JSON object written member by member: keys may repeat, as in a hand-edited file."""
    return "{" + ", ".join(f"{json.dumps(key)}: {value}" for key, value in pairs) + "}"


_REPEATED = st.sampled_from([*TOP_KEYS, "cls_name", "cache_metas", "_compile_cfgs", "kvcache_num_blocks"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    top=st.lists(st.tuples(_REPEATED, VALUES, st.integers(0, 20)), max_size=3),
    cfg0=st.lists(st.tuples(st.sampled_from(CFG_KEYS), VALUES, st.integers(0, 4)), max_size=2),
    meta=st.lists(st.tuples(st.sampled_from(META_KEYS), st.one_of(VALUES, SHAPES), st.integers(0, 6)), max_size=2),
)
def test_keys_written_twice_anywhere_agree(
    top: list[tuple[str, object, int]], cfg0: list[tuple[str, object, int]], meta: list[tuple[str, object, int]]
) -> None:
    """Keys repeated at the top level, in _compile_cfgs[0] and in a cache_metas entry, before or after the first:
    the reader takes the value json.load takes (the last) or leaves the file to the model."""

    def members(raw: dict[str, Any], more: list[tuple[str, object, int]]) -> list[tuple[str, str]]:
        pairs = [(key, json.dumps(value)) for key, value in raw.items()]
        for key, value, at in more:
            pairs.insert(min(at, len(pairs)), (key, json.dumps(value)))
        return pairs

    cfgs = [_object_text(members(BASE["_compile_cfgs"][0], cfg0)), json.dumps(BASE["_compile_cfgs"][1])]
    metas = [_object_text(members(BASE["cache_metas"][0], meta)), *map(json.dumps, BASE["cache_metas"][1:])]
    written = {**BASE, "_compile_cfgs": None, "cache_metas": None}
    pairs = members(written, top)
    pairs = [(k, "[" + ", ".join(cfgs) + "]") if (k, v) == ("_compile_cfgs", "null") else (k, v) for k, v in pairs]
    pairs = [(k, "[" + ", ".join(metas) + "]") if (k, v) == ("cache_metas", "null") else (k, v) for k, v in pairs]
    assert_agree(_object_text(pairs).encode())
